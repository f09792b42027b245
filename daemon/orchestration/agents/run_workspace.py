"""Where a run's agents work: the worktree of an editing run, or the workspace, read-only.

A code-mode run whose plan has an editing stage (implementation, test writing, documentation) in a
git workspace is an editing run: it holds the workspace's edit lock while it executes, works in its
own worktree on branch ``ided/run/<id>`` (``daemon.vcs.RunWorktrees``), commits each stage attempt
that changed files, and ends with its change set summarised on the run record. Every other run
(ask mode, a plan without editing stage, a host that gave no worktrees) reads the workspace and
writes nothing. All git work runs in worker threads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path

from langchain_core.tools import BaseTool

from daemon.config import AgentsConfig
from daemon.core.run_models import ChangedFile, ExecutionPlan, RunChanges
from daemon.orchestration.agents.commands import CommandRunner
from daemon.orchestration.agents.environment import AgentEnvironment
from daemon.orchestration.agents.events import AgentEvents
from daemon.orchestration.agents.roles import EDITING_STAGE_TYPES
from daemon.orchestration.agents.workspace_files import FileReader, RunFiles
from daemon.orchestration.state import StageResult
from daemon.vcs.worktrees import RunWorktrees

__all__ = ["RunWorkspace", "plan_edits"]


def plan_edits(plan: ExecutionPlan) -> bool:
    """Whether any planned stage of ``plan`` edits files."""
    return any(stage.type in EDITING_STAGE_TYPES for stage in plan.stages)


class RunWorkspace:
    """Edit locks, worktrees, commits and agent environments of one runtime's runs."""

    def __init__(self, *, worktrees: RunWorktrees | None, workspace: Path | None, settings: AgentsConfig) -> None:
        self.worktrees = worktrees
        self.workspace = workspace or (worktrees.workspace if worktrees is not None else None)
        self.settings = settings
        self._locks: dict[str, ExitStack] = {}
        self._written: dict[str, set[str]] = {}

    @property
    def can_edit(self) -> bool:
        return self.worktrees is not None

    def _need(self) -> RunWorktrees:
        if self.worktrees is None:
            raise RuntimeError("this runtime was opened without worktrees")
        return self.worktrees

    # -- the edit lock ------------------------------------------------------------------------------

    async def acquire(self, run_id: str) -> None:
        """Take the workspace's edit lock for ``run_id`` (``EditLockHeld`` names the holder)."""
        worktrees = self._need()
        if run_id in self._locks:
            return

        def enter() -> ExitStack:
            stack = ExitStack()
            stack.enter_context(worktrees.edit_lock(run_id))
            return stack

        self._locks[run_id] = await asyncio.to_thread(enter)

    async def release(self, run_id: str) -> None:
        stack = self._locks.pop(run_id, None)
        if stack is not None:
            await asyncio.to_thread(stack.close)

    def holds(self, run_id: str) -> bool:
        return run_id in self._locks

    # -- worktrees and commits ------------------------------------------------------------------------

    async def create(self, run_id: str, *, include_uncommitted: bool) -> RunChanges:
        """The run's branch and worktree (``VcsError`` not_a_repository for a folder that is not a git repo)."""
        branch = await asyncio.to_thread(self._need().create, run_id, include_uncommitted=include_uncommitted)
        return RunChanges(
            branch=branch.branch,
            worktree=str(branch.workdir),
            base_commit=branch.base_commit,
            head_commit=branch.start_commit,
        )

    async def prepare_spare(self) -> None:
        """Check a worktree out ahead for the next editing run (``RunWorktrees.prepare_spare``)."""
        if self.worktrees is not None:
            await asyncio.to_thread(self.worktrees.prepare_spare)

    async def commit(self, run_id: str, result: StageResult, *, feedback: str | None = None) -> str | None:
        """One commit for what the stage attempt changed; ``None`` when it changed nothing."""
        agents = [a.agent_id for a in result.agents]
        summary = result.summary + (f"\n\nFeedback answered: {feedback}" if feedback else "")
        return await asyncio.to_thread(
            self._need().commit_attempt,
            run_id,
            stage_id=result.stage_id,
            attempt=result.attempt,
            agent_ids=agents,
            summary=summary,
        )

    async def changes(self, run_id: str, current: RunChanges) -> RunChanges:
        """``current`` with the commits and files of the run's change set."""
        change_set = await asyncio.to_thread(self._need().change_set, run_id)
        return current.model_copy(
            update={
                "head_commit": change_set.head_commit,
                "commits": tuple(c.sha for c in change_set.commits),
                "files": tuple(
                    ChangedFile(path=f.path, status=f.status, added=f.added, removed=f.removed)
                    for f in change_set.files
                ),
            }
        )

    # -- agents -----------------------------------------------------------------------------------------

    def environment(
        self,
        run_id: str,
        changes: RunChanges | None,
        *,
        events: AgentEvents,
        file_reader: FileReader | None = None,
        extra_tools: Sequence[BaseTool] = (),
        cancelled: Callable[[], Awaitable[bool]] | None = None,
        commands: Mapping[str, str] | None = None,
    ) -> AgentEnvironment:
        """What the run's agents get: the worktree (editable, with ``commands``) or the workspace (read-only).

        ``commands``: the named commands the run may run (``CommandSources.for_run`` decided which).
        """
        settings = self.settings
        named = dict(commands or {})
        files: RunFiles | None = None
        runner: CommandRunner | None = None
        if changes is not None:
            root = Path(changes.worktree)
            written = self._written.setdefault(run_id, set())
            files = RunFiles(root, editable=True, workspace=self.workspace, reader=file_reader, written=written)
            if named:
                runner = CommandRunner(
                    named,
                    cwd=root,
                    timeout_seconds=settings.command_timeout_seconds,
                    output_cap_bytes=settings.output_cap_bytes,
                )
        elif self.workspace is not None:
            files = RunFiles(self.workspace, editable=False, reader=file_reader)
        return AgentEnvironment(
            files=files,
            commands=runner,
            extra_tools=tuple(extra_tools),
            events=events,
            max_tool_steps=settings.max_tool_steps,
            cancelled=cancelled,
        )

    def review_state(self, run_id: str) -> str:
        """open, accepted, rejected or rolled_back (blocking: call in a thread)."""
        return self._need().get(run_id).review

    def forget(self, run_id: str) -> None:
        self._written.pop(run_id, None)
