"""Review of an editing run's changes, for every front: diff, accept, reject, rollback, cleanup.

Each answer is written to the run's decision log (kinds ``review``, ``accept``, ``reject``,
``rollback``) with the commit ids it refers to, including refusals (a conflict report is kept
whole). The git work runs in a worker thread; ``RunWorktrees`` is synchronous.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from daemon.config import Config
from daemon.core.review_models import (
    AcceptResult,
    AcceptSelection,
    ChangeSet,
    CleanupReport,
    ConflictReport,
    RollbackResult,
    RunBranch,
)
from daemon.core.run_models import DecisionKind
from daemon.errors import ConflictError
from daemon.orchestration.run_store import RunStore
from daemon.orchestration.run_store_open import open_run_store
from daemon.vcs.worktrees import RunWorktrees

T = TypeVar("T")

__all__ = ["RunReview"]

logger = logging.getLogger(__name__)


class RunReview:
    """Review operations over a workspace's run branches, each recorded in the run's decision log
    (``branch``, ``peek`` and ``is_repository`` only read). It is the run service's review half
    (the review operations of ``daemon.service.runs.service.RunService`` name its methods as their work): the
    command line's review commands hold it alone (``daemon.service.runs.local.reviewing``)."""

    def __init__(self, worktrees: RunWorktrees, store: RunStore) -> None:
        self.worktrees = worktrees
        self.store = store

    @classmethod
    @asynccontextmanager
    async def open(cls, config: Config) -> AsyncGenerator[RunReview]:
        """A review over ``config``'s workspace with its own connection to the run store."""
        async with open_run_store(config.runs, state_dir=config.state_path, workspace=config.workspace_path) as store:
            yield cls(RunWorktrees.for_config(config), store)

    async def diff(self, run_id: str) -> ChangeSet:
        """The run's change set (every file, both texts, one diff); logged as ``review``."""
        changes = await asyncio.to_thread(self.worktrees.change_set, run_id)
        await self.store.log(
            run_id,
            DecisionKind.REVIEW,
            f"change set shown: {len(changes.files)} file(s) in {len(changes.commits)} commit(s)",
            {
                "branch": changes.branch,
                "base_commit": changes.base_commit,
                "head_commit": changes.head_commit,
                "commits": [c.sha for c in changes.commits],
                "files": [f.path for f in changes.files],
            },
        )
        return changes

    async def accept(self, run_id: str, *, selection: AcceptSelection | None = None) -> AcceptResult:
        """Apply the run (or ``selection``: what the reviewer kept of it) to the user's branch; a conflict is logged
        (with its report) and re-raised. The log says which files were kept whole, kept in part, or dropped."""
        result = await self._applied(
            run_id, DecisionKind.ACCEPT, lambda r: self.worktrees.accept(r, selection), "accept"
        )
        summary = f"accepted onto {result.branch}: {len(result.commits)} commit(s)"
        data = result.model_dump(mode="json")
        if result.reviewed_commit is not None and selection is not None:
            whole = [f.path for f in selection.files if f.path not in result.partial and f.path not in result.dropped]
            summary += f"; kept whole: {', '.join(whole) or 'none'}; in part: {', '.join(result.partial) or 'none'}"
            summary += f"; dropped: {', '.join(result.dropped) or 'none'}"
            data["selection"] = [
                {"path": f.path, "hunks": f.hunks, "text_given": f.text is not None} for f in selection.files
            ]
        await self.store.log(run_id, DecisionKind.ACCEPT, summary, data)
        return result

    async def reject(self, run_id: str) -> RunBranch:
        branch = await asyncio.to_thread(self.worktrees.reject, run_id)
        head = branch.commits[-1] if branch.commits else branch.start_commit
        await self.store.log(
            run_id,
            DecisionKind.REJECT,
            f"rejected; branch {branch.branch} kept until cleanup",
            {"branch": branch.branch, "head_commit": head, "commits": list(branch.commits)},
        )
        return branch

    async def rollback(self, run_id: str) -> RollbackResult:
        """Revert the accepted run with new commits; a conflict is logged (with its report) and re-raised."""
        result = await self._applied(run_id, DecisionKind.ROLLBACK, self.worktrees.rollback, "rollback")
        await self.store.log(
            run_id,
            DecisionKind.ROLLBACK,
            f"rolled back on {result.branch}: {len(result.commits)} revert commit(s)",
            result.model_dump(mode="json"),
        )
        return result

    async def _applied(self, run_id: str, kind: DecisionKind, apply: Callable[[str], T], verb: str) -> T:
        """``apply(run_id)`` in a thread; a conflict is logged as ``kind`` with its report, then re-raised."""
        try:
            return await asyncio.to_thread(apply, run_id)
        except ConflictError as exc:
            await self.store.log(run_id, kind, f"{verb} refused: conflicting changes", _conflict(exc))
            raise

    async def branch(self, run_id: str) -> RunBranch:
        """The run's branch as it is now; nothing is logged."""
        return await asyncio.to_thread(self.worktrees.get, run_id)

    async def peek(self, run_id: str) -> ChangeSet:
        """The run's change set as it is now, without logging a ``review`` (a replay shows it again)."""
        return await asyncio.to_thread(self.worktrees.change_set, run_id)

    async def is_repository(self) -> bool:
        """Whether the workspace is a git repository."""
        return await asyncio.to_thread(RunWorktrees.is_repository, self.worktrees.workspace)

    async def cleanup(self, *, older_than_days: int | None = None) -> CleanupReport:
        report = await asyncio.to_thread(self.worktrees.cleanup, older_than_days=older_than_days)
        logger.info("cleanup removed %d run branch(es)", len(report.removed_runs))
        return report


def _conflict(exc: ConflictError) -> dict[str, Any]:
    report = exc.report
    if isinstance(report, ConflictReport):
        return report.model_dump(mode="json")
    return {"error": str(exc)}
