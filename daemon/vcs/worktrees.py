"""``RunWorktrees``: every editing run on its own branch ``ided/run/<id>`` in a git worktree of its own.

Nothing here writes to the user's working tree except ``accept`` (of the whole run, or of what a
reviewer kept: ``daemon.vcs.selection``) and ``rollback``, and those only after checking that no
path they touch was changed on the user's side (see ``daemon.vcs.applying``).
All methods are synchronous (they run git); async callers use ``asyncio.to_thread``.

**A spare worktree.** Checking a large repository's tree out is most of a run's start (about 1-2 s
for a django checkout here). ``prepare_spare`` checks one worktree out ahead, detached at HEAD, as
``worktrees_dir/.spare-<id>`` (a daemon does it once it is warm and after each run); ``create``
takes it over when there is one: ``git worktree move`` to the run's place, then ``git checkout -b``
of the run's branch (still at the run's start, no file is touched; at another start, HEAD moved or
uncommitted changes, a forced checkout rewrites the files that differ). Without a spare it checks a
new worktree out. A spare's index is refreshed once the second of its checkout is over, so git
records its files as clean instead of comparing each by content at every diff. Nobody writes in a
spare; one that cannot be moved or checked out is removed and the run gets a fresh worktree.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from daemon.config import Config
from daemon.core.review_models import AcceptResult, ChangeSet, CleanupReport, ConflictReport, RollbackResult, RunBranch
from daemon.errors import ConflictError, ErrorCode, VcsError
from daemon.vcs import applying
from daemon.vcs.applying import ApplyStep
from daemon.vcs.change_sets import build_change_set, changed_paths, run_commit_message
from daemon.vcs.git_runner import IDED_IDENTITY, GitRunner, temp_index_env
from daemon.vcs.run_registry import RunRegistry, check_run_id
from daemon.vcs.selection import reviewed_commit

if TYPE_CHECKING:
    from daemon.core.review_models import AcceptSelection

__all__ = ["BRANCH_PREFIX", "RunWorktrees"]

logger = logging.getLogger(__name__)

BRANCH_PREFIX = "ided/run/"
SPARE_PREFIX = ".spare-"
"""Names of spare worktrees in ``worktrees_dir`` (never a run id: run ids start with a digit)."""
_SPARE_WAIT_S = 60.0
"""How long a run waits for the spare being checked out before it checks its own worktree out."""


def _now() -> datetime:
    return datetime.now(UTC)


class RunWorktrees:
    """Run branches, worktrees, change sets and review of one workspace."""

    def __init__(
        self,
        repo_root: Path,
        state_dir: Path,
        *,
        retention_days: int = 14,
        worktrees_dir: Path | None = None,
    ) -> None:
        self.workspace = repo_root.resolve()
        self.state_dir = state_dir
        self.retention_days = retention_days
        self.worktrees_dir = worktrees_dir or state_dir / "worktrees"
        self.registry = RunRegistry(state_dir / "vcs")
        self._top: Path | None = None
        self._spare_lock = threading.Lock()

    @classmethod
    def for_config(cls, config: Config) -> RunWorktrees:
        vcs = config.vcs
        return cls(
            config.workspace_path,
            config.state_path,
            retention_days=vcs.retention_days,
            worktrees_dir=Path(vcs.worktrees_dir).expanduser() if vcs.worktrees_dir else None,
        )

    # -- the repository ---------------------------------------------------------------------------

    @staticmethod
    def is_repository(path: Path) -> bool:
        """Whether ``path`` lies in a git working tree (not a bare repository)."""
        if not path.is_dir():
            return False
        try:
            return GitRunner(path, timeout_s=30).run("rev-parse", "--is-inside-work-tree") == "true"
        except VcsError:
            return False

    @property
    def top(self) -> Path:
        """The top level of the user's repository; ``VcsError(not_a_repository)`` when there is none."""
        if self._top is None:
            if not self.is_repository(self.workspace):
                raise VcsError(
                    f"{self.workspace} is not a git repository: editing runs keep their changes as commits on a "
                    "branch, so they need one (`git init` and a first commit). Read-only runs still work.",
                    code=ErrorCode.NOT_A_REPOSITORY,
                )
            self._top = Path(GitRunner(self.workspace).run("rev-parse", "--show-toplevel")).resolve()
        return self._top

    def _git(self) -> GitRunner:
        return GitRunner(self.top)

    # -- creating and committing ------------------------------------------------------------------

    def create(self, run_id: str, *, include_uncommitted: bool = False) -> RunBranch:
        """Branch ``ided/run/<id>`` from the user's HEAD (plus a snapshot of uncommitted changes) in a new worktree."""
        check_run_id(run_id)
        git = self._git()
        if self.registry.exists(run_id):
            raise VcsError(f"run {run_id} already has a branch ({BRANCH_PREFIX}{run_id})")
        if not git.ok("symbolic-ref", "-q", "HEAD"):
            raise VcsError(
                f"HEAD of {self.top} is detached: check out a branch before an editing run "
                "(its changes are applied to your branch on accept)"
            )
        base_branch = git.run("symbolic-ref", "-q", "HEAD")
        if not git.ok("rev-parse", "--verify", "-q", "HEAD^{commit}"):
            raise VcsError(
                f"{base_branch} of {self.top} has no commit yet: commit once before an editing run",
                code=ErrorCode.NOT_A_REPOSITORY,
            )
        base = git.run("rev-parse", "HEAD^{commit}")
        branch = BRANCH_PREFIX + run_id
        if git.ok("rev-parse", "--verify", "-q", f"refs/heads/{branch}"):
            raise VcsError(f"branch {branch} already exists in {self.top}; delete it or use another run id")
        snapshot = self._snapshot(git, base, run_id) if include_uncommitted else None
        worktree = self.worktrees_dir / run_id
        if worktree.exists():
            raise VcsError(f"{worktree} already exists; remove it or run `ided runs cleanup`")
        worktree.parent.mkdir(parents=True, exist_ok=True)
        if not self._take_spare(git, worktree, branch, snapshot or base):
            git.run("worktree", "add", "--quiet", "-b", branch, str(worktree), snapshot or base)
        relative = self.workspace.relative_to(self.top) if self.workspace != self.top else Path()
        record = RunBranch(
            run_id=run_id,
            branch=branch,
            worktree=worktree,
            workdir=worktree / relative,
            repo_root=self.top,
            base_commit=base,
            base_branch=base_branch,
            snapshot_commit=snapshot,
            created_at=_now(),
        )
        logger.info("run %s: branch %s at %s in %s", run_id, branch, (snapshot or base)[:10], worktree)
        return self.registry.save(record)

    # -- the spare worktree -------------------------------------------------------------------------

    def spares(self) -> list[Path]:
        """The spare worktrees of this repository checked out ahead (normally none or one): those git lists
        as its worktrees (a ``worktrees_dir`` shared by several repositories holds theirs too)."""
        if not self.worktrees_dir.is_dir() or not any(
            p.name.startswith(SPARE_PREFIX) for p in self.worktrees_dir.iterdir()
        ):
            return []
        listed = self._git().lines("worktree", "list", "--porcelain")
        paths = [Path(line.removeprefix("worktree ")) for line in listed if line.startswith("worktree ")]
        home = self.worktrees_dir.resolve()
        return sorted(p for p in paths if p.name.startswith(SPARE_PREFIX) and p.parent.resolve() == home and p.is_dir())

    def prepare_spare(self) -> Path | None:
        """Check one worktree out ahead, detached at HEAD, for the next run to take over; the existing one
        when there is one; None when the workspace is no repository (or git fails: the next run checks out)."""
        if not self._spare_lock.acquire(blocking=False):
            return None  # being prepared now
        try:
            existing = self.spares()
            if existing:
                return existing[0]
            git = self._git()
            if not git.ok("rev-parse", "--verify", "-q", "HEAD^{commit}"):
                return None
            spare = self.worktrees_dir / f"{SPARE_PREFIX}{uuid.uuid4().hex[:12]}"
            spare.parent.mkdir(parents=True, exist_ok=True)
            git.run("worktree", "add", "--quiet", "--detach", str(spare), "HEAD")
            checked_out = time.time()
        except VcsError as exc:
            logger.info("no spare worktree: %s", exc)
            return None
        finally:
            self._spare_lock.release()
        # files written in the same second as the index are "racily clean": until the index is written again,
        # every git diff in the worktree compares them by content (~0.5 s on django, at each of the run's
        # overlay refreshes); once that second is over, one refresh records them as clean (unless a run has
        # taken the spare meanwhile: it is a worktree like any other then)
        time.sleep(max(0.0, 1.05 - (time.time() - checked_out)))
        with self._spare_lock:
            if spare in self.spares():
                GitRunner(spare).ok("update-index", "-q", "--refresh")
        logger.info("a spare worktree is ready in %s", spare)
        return spare

    def _take_spare(self, git: GitRunner, worktree: Path, branch: str, start: str) -> bool:
        """Move the spare to ``worktree`` and check ``branch`` out at ``start`` in it; False (nothing left
        behind) when there is no spare, or git refuses. A spare being checked out is waited for (up to
        ``_SPARE_WAIT_S``: a checkout of the run's own would take as long)."""
        if not self._spare_lock.acquire(timeout=_SPARE_WAIT_S):
            return False
        try:
            spares = self.spares()
            if not spares:
                return False
            spare = spares[0]
            try:
                git.run("worktree", "move", str(spare), str(worktree))
            except VcsError as exc:
                logger.warning("the spare worktree %s could not be taken over (%s); removing it", spare, exc)
                self._discard(git, spare)
                return False
            here = GitRunner(worktree)
            try:
                if here.run("rev-parse", "HEAD") == start:  # the spare is at the start: no file is touched
                    here.run("checkout", "--quiet", "-b", branch)
                else:  # HEAD moved since (or uncommitted changes): only the files that differ are rewritten
                    here.run("checkout", "--quiet", "--force", "-b", branch, start)
            except VcsError as exc:
                logger.warning("the spare worktree could not check out %s (%s); a new one is checked out", branch, exc)
                self._discard(git, worktree)
                git.ok("branch", "-D", branch)
                return False
            return True
        finally:
            self._spare_lock.release()

    @staticmethod
    def _discard(git: GitRunner, path: Path) -> None:
        git.ok("worktree", "remove", "--force", str(path))
        shutil.rmtree(path, ignore_errors=True)
        git.ok("worktree", "prune")

    def discard_spares(self) -> int:
        """Remove the spare worktrees (``cleanup``: a daemon checks the next one out again); how many."""
        with self._spare_lock:
            spares = self.spares()
            if spares:
                git = self._git()
                for spare in spares:
                    self._discard(git, spare)
            return len(spares)

    def _snapshot(self, git: GitRunner, base: str, run_id: str) -> str | None:
        """The user's staged, unstaged and untracked (not ignored) changes as one commit on ``base``, built in a
        private copy of the index; ``None`` when there are none."""
        with tempfile.TemporaryDirectory(prefix="ided-snapshot-") as tmp:
            env = temp_index_env(Path(tmp) / "index")
            user_index = Path(self.top, git.run("rev-parse", "--git-path", "index"))
            if user_index.is_file():
                shutil.copyfile(user_index, env["GIT_INDEX_FILE"])
            else:
                git.run("read-tree", base, env=env)
            git.run("add", "-A", "--", ".", env=env)
            tree = git.run("write-tree", env=env)
        if tree == git.run("rev-parse", f"{base}^{{tree}}"):
            return None
        message = f"ided: snapshot of uncommitted changes for run {run_id}\n"
        return git.run("commit-tree", tree, "-p", base, "-F", "-", env=dict(IDED_IDENTITY), stdin=message.encode())

    def get(self, run_id: str) -> RunBranch:
        return self.registry.load(run_id)

    def runs(self) -> list[RunBranch]:
        """Every run branch this workspace has a record of, oldest first."""
        return sorted(self.registry.all(), key=lambda b: b.created_at)

    def commit_attempt(
        self, run_id: str, *, stage_id: str, attempt: int, agent_ids: Sequence[str], summary: str = ""
    ) -> str | None:
        """Commit what the stage attempt changed in the worktree (``.gitignore`` respected); ``None`` if nothing."""
        record = self.registry.load(run_id)
        if record.review != "open":
            raise VcsError(
                f"run {run_id} was already {record.review.replace('_', ' ')}: its branch takes no more commits"
            )
        if not record.worktree.is_dir():
            raise VcsError(f"the worktree of run {run_id} ({record.worktree}) is gone")
        git = GitRunner(record.worktree)
        git.run("add", "-A", "--", ".")
        if git.ok("diff", "--cached", "--quiet"):
            return None
        message = run_commit_message(run_id, stage_id, attempt, tuple(agent_ids), summary)
        git.run(
            "commit", "-q", "--no-verify", "--no-gpg-sign", "-F", "-", env=dict(IDED_IDENTITY), stdin=message.encode()
        )
        sha = git.run("rev-parse", "HEAD")
        self.registry.save(record.model_copy(update={"commits": (*record.commits, sha)}))
        logger.info("run %s: %s attempt %d committed %s", run_id, stage_id, attempt, sha[:10])
        return sha

    def change_set(self, run_id: str) -> ChangeSet:
        record = self.registry.load(run_id)
        return build_change_set(self._git(), record)

    def edit_lock(self, run_id: str) -> AbstractContextManager[None]:
        """One editing run at a time per workspace; ``EditLockHeld`` names the run holding it."""
        return self.registry.edit_lock(run_id)

    # -- review -------------------------------------------------------------------------------------

    def _reviewable(self, run_id: str, operation: str) -> RunBranch:
        record = self.registry.load(run_id)
        if self.registry.lock_holder() == run_id and self.registry.is_locked():
            raise VcsError(f"run {run_id} is still editing: wait for it to end (or cancel it), then {operation}")
        return record

    def accept(self, run_id: str, selection: AcceptSelection | None = None) -> AcceptResult:
        """Apply the run's commits to the user's current branch as new commits; ``ConflictError`` (nothing written)
        when the user changed any file the run changed since it started, committed or not.

        With a ``selection`` (what a reviewer kept: files whole, some hunks, or texts), the kept changes become
        one reviewed commit on the run's branch (``daemon.vcs.selection``) and that commit is applied instead;
        only the files it changes are checked and written, and ``rollback`` reverts it as any accept."""
        record = self._reviewable(run_id, "accept")
        if record.review in ("accepted", "rolled_back"):
            raise VcsError(f"run {run_id} was already {record.review.replace('_', ' ')}")
        git = self._git()
        ref = applying.user_branch(git, "accept")
        head = git.run("rev-parse", "HEAD^{commit}")
        changes = build_change_set(git, record)
        reviewed = reviewed_commit(git, changes, selection) if selection is not None else None
        if reviewed is not None and not reviewed.partial and not reviewed.dropped:
            reviewed = None  # everything kept whole: a plain accept, commit by commit
        source = (reviewed.sha,) if reviewed else tuple(c.sha for c in changes.commits)
        run_side: dict[str, list[str]] = {}
        parents: dict[str, str] = {}
        previous = record.start_commit
        for sha in source:
            parents[sha] = previous
            for path in changed_paths(git, previous, sha):
                run_side.setdefault(path, []).append(sha)
            previous = sha
        paths = sorted(run_side)
        conflicts = applying.find_conflicts(
            git, paths=paths, reference=record.base_commit, head=head, expected=record.start_commit, run_side=run_side
        )
        if conflicts:
            report = ConflictReport(
                run_id=run_id,
                operation="accept",
                branch=ref,
                why=f"run {run_id} was not applied: {len(conflicts)} file(s) it changed were also changed on your "
                f"side since it started. Your files and its branch {record.branch} are untouched.",
                files=conflicts,
            )
            raise ConflictError(report.describe(), report=report)
        committer = applying.committer_env(git)
        messages = {c.sha: c.message for c in changes.commits}
        steps = [
            ApplyStep(
                old=parents[sha],
                new=sha,
                message=_trailer(messages.get(sha) or git.run("log", "-1", "--format=%B", sha), run_id, sha),
                author=applying.author_env(git, sha),
            )
            for sha in source
        ]
        made = applying.build_commits(git, onto=head, steps=steps, committer=committer) if steps else []
        tip = made[-1] if made else head
        if made:
            applying.move_branch(git, ref, tip, head, f"ided: accept run {run_id}")
            applying.sync_paths(git, paths, tip)
        update: dict[str, object] = {
            "review": "accepted",
            "accepted_commits": tuple(made),
            "accepted_onto": ref,
            "reviewed_at": _now(),
        }
        if reviewed is not None:  # the run's branch ends in what was accepted
            applying.move_branch(
                git, f"refs/heads/{record.branch}", reviewed.sha, changes.head_commit, f"ided: review run {run_id}"
            )
            update["commits"] = (*record.commits, reviewed.sha)
        self.registry.save(record.model_copy(update=update))
        self._drop_worktree(git, record)
        logger.info("run %s accepted onto %s: %d commit(s)", run_id, ref, len(made))
        return AcceptResult(
            run_id=run_id,
            branch=ref,
            commits=tuple(made),
            source_commits=source,
            files=tuple(paths),
            head=tip,
            reviewed_commit=reviewed.sha if reviewed else None,
            partial=reviewed.partial if reviewed else (),
            dropped=reviewed.dropped if reviewed else (),
        )

    def reject(self, run_id: str) -> RunBranch:
        """Mark the run rejected: the user's tree is not touched; the branch stays until cleanup."""
        record = self._reviewable(run_id, "reject")
        if record.review in ("accepted", "rolled_back"):
            raise VcsError(
                f"run {run_id} was already {record.review.replace('_', ' ')}; `ided runs rollback` undoes it"
            )
        updated = self.registry.save(record.model_copy(update={"review": "rejected", "reviewed_at": _now()}))
        self._drop_worktree(self._git(), record)
        return updated

    def rollback(self, run_id: str) -> RollbackResult:
        """Revert an accepted run with new commits (newest first); history is never rewritten."""
        record = self.registry.load(run_id)
        if record.review != "accepted":
            raise VcsError(f"run {run_id} is {record.review.replace('_', ' ')}, not accepted: nothing to roll back")
        git = self._git()
        ref = applying.user_branch(git, "roll back")
        head = git.run("rev-parse", "HEAD^{commit}")
        accepted = record.accepted_commits
        if not accepted:
            updated = record.model_copy(update={"review": "rolled_back", "reviewed_at": _now()})
            self.registry.save(updated)
            return RollbackResult(run_id=run_id, branch=ref, commits=(), reverted=(), head=head)
        for sha in accepted:
            if not git.ok("merge-base", "--is-ancestor", sha, head):
                raise VcsError(
                    f"commit {sha[:10]} of run {run_id} is not on {ref}: "
                    f"check out the branch it was accepted onto ({record.accepted_onto})"
                )
        run_side: dict[str, list[str]] = {}
        for sha in accepted:
            for path in changed_paths(git, f"{sha}^", sha):
                run_side.setdefault(path, []).append(sha)
        paths = sorted(run_side)
        conflicts = applying.find_conflicts(
            git, paths=paths, reference=accepted[-1], head=head, expected=accepted[-1], run_side=run_side
        )
        if conflicts:
            report = ConflictReport(
                run_id=run_id,
                operation="rollback",
                branch=ref,
                why=f"run {run_id} was not rolled back: {len(conflicts)} file(s) it changed were changed again after "
                "it was accepted. Nothing was written; `git revert` can merge by hand.",
                files=conflicts,
            )
            raise ConflictError(report.describe(), report=report)
        committer = applying.committer_env(git)
        author = {k.replace("COMMITTER", "AUTHOR"): v for k, v in committer.items()}
        steps = [
            ApplyStep(old=sha, new=f"{sha}^", message=_revert_message(git, sha, run_id), author=author)
            for sha in reversed(accepted)
        ]
        made = applying.build_commits(git, onto=head, steps=steps, committer=committer)
        applying.move_branch(git, ref, made[-1], head, f"ided: roll back run {run_id}")
        applying.sync_paths(git, paths, made[-1])
        self.registry.save(
            record.model_copy(update={"review": "rolled_back", "revert_commits": tuple(made), "reviewed_at": _now()})
        )
        logger.info("run %s rolled back on %s: %d revert commit(s)", run_id, ref, len(made))
        return RollbackResult(
            run_id=run_id,
            branch=ref,
            commits=tuple(made),
            reverted=tuple(reversed(accepted)),
            files=tuple(paths),
            head=made[-1],
        )

    # -- cleanup ------------------------------------------------------------------------------------

    def _drop_worktree(self, git: GitRunner, record: RunBranch) -> bool:
        if not record.worktree.exists():
            return False
        git.run("worktree", "remove", "--force", str(record.worktree))
        return True

    def cleanup(self, *, older_than_days: int | None = None) -> CleanupReport:
        """Remove worktrees and branches of runs created more than ``older_than_days`` (default: retention) ago,
        and the spare worktree (a daemon checks the next one out again).

        The run holding the edit lock is kept whatever its age; records stay (rollback needs only the
        accepted commits, which live on the user's branch).
        """
        days = self.retention_days if older_than_days is None else older_than_days
        cutoff = _now() - timedelta(days=days)
        git = self._git()
        holder = self.registry.lock_holder() if self.registry.is_locked() else None
        removed: list[str] = []
        kept: list[str] = []
        worktrees = branches = 0
        for record in self.runs():
            if record.cleaned_at is not None:
                continue
            if record.run_id == holder or record.created_at > cutoff:
                kept.append(record.run_id)
                continue
            worktrees += self._drop_worktree(git, record)
            if git.ok("rev-parse", "--verify", "-q", f"refs/heads/{record.branch}"):
                git.run("branch", "-D", "-q", record.branch)
                branches += 1
            self.registry.save(record.model_copy(update={"cleaned_at": _now()}))
            removed.append(record.run_id)
        worktrees += self.discard_spares()
        git.run("worktree", "prune")
        return CleanupReport(
            removed_runs=tuple(removed),
            removed_worktrees=worktrees,
            removed_branches=branches,
            kept_runs=tuple(kept),
            older_than_days=days,
        )


def _trailer(message: str, run_id: str, sha: str) -> str:
    return f"{message.rstrip()}\n\nided-run: {run_id}\nided-source-commit: {sha}\n"


def _revert_message(git: GitRunner, sha: str, run_id: str) -> str:
    subject = git.run("log", "-1", "--format=%s", sha)
    return f'Revert "{subject}"\n\nThis reverts commit {sha}.\n\nided-run: {run_id}\nided-rollback: true\n'
