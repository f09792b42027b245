"""What the run-branch machinery returns: run branches, change sets, accept/rollback results, conflict reports."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from daemon.core.frozen_model import FrozenModel

__all__ = [
    "AcceptResult",
    "AcceptSelection",
    "ChangeSet",
    "CleanupReport",
    "CommitInfo",
    "ConflictFile",
    "ConflictReport",
    "FileChange",
    "FileStatus",
    "KeptFile",
    "ReviewState",
    "RollbackResult",
    "RunBranch",
]

ReviewState = Literal["open", "accepted", "rejected", "rolled_back"]
FileStatus = Literal["added", "modified", "deleted", "renamed"]


class RunBranch(FrozenModel):
    """One editing run's branch ``ided/run/<id>`` and its worktree (persisted under ``<state>/vcs/runs``)."""

    run_id: str
    branch: str
    worktree: Path = Field(description="The worktree root (the repository's top level, checked out for the run).")
    workdir: Path = Field(description="Where the workspace lies inside the worktree (agents work here).")
    repo_root: Path = Field(description="The user's repository top level.")
    base_commit: str = Field(description="The user's HEAD when the run started.")
    base_branch: str = Field(description="The user's branch when the run started, e.g. refs/heads/main.")
    snapshot_commit: str | None = Field(
        default=None, description="The user's uncommitted changes at the start, as one commit (include_uncommitted)."
    )
    review: ReviewState = "open"
    commits: tuple[str, ...] = Field(default=(), description="The run's commits after the base/snapshot, oldest first.")
    accepted_commits: tuple[str, ...] = Field(default=(), description="The commits accept made on the user's branch.")
    accepted_onto: str | None = Field(default=None, description="The branch accept applied the run to.")
    revert_commits: tuple[str, ...] = Field(default=(), description="The commits rollback made.")
    created_at: datetime
    reviewed_at: datetime | None = None
    cleaned_at: datetime | None = Field(default=None, description="When cleanup removed the worktree and branch.")

    @property
    def start_commit(self) -> str:
        """Where the run's own changes start: the snapshot when there is one, else the base."""
        return self.snapshot_commit or self.base_commit


class CommitInfo(FrozenModel):
    sha: str
    message: str
    stage_id: str | None = None
    attempt: int | None = None
    agents: tuple[str, ...] = ()


class FileChange(FrozenModel):
    """One file of a change set: both texts (``None`` when absent or binary) and its unified diff."""

    path: str
    status: FileStatus
    old_path: str | None = None
    old_text: str | None = None
    new_text: str | None = None
    diff: str = Field(description="Unified diff of this file (git diff format, with its header).")
    added: int = 0
    removed: int = 0
    binary: bool = False


class ChangeSet(FrozenModel):
    """Everything a run changed, from its start (base or snapshot) to its branch tip, as one diff."""

    run_id: str
    branch: str
    base_commit: str
    start_commit: str
    head_commit: str
    review: ReviewState = "open"
    commits: tuple[CommitInfo, ...] = ()
    files: tuple[FileChange, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.files

    @property
    def diff(self) -> str:
        """The whole change set as one unified diff."""
        return "".join(f.diff if f.diff.endswith("\n") else f.diff + "\n" for f in self.files)


class ConflictFile(FrozenModel):
    path: str
    user_side: str = Field(description="What the user did to the file: the commits since the run started, or edits.")
    run_side: str = Field(description="What the run did to it: its commits.")
    user_commits: tuple[str, ...] = ()
    run_commits: tuple[str, ...] = ()
    uncommitted: bool = False


class ConflictReport(FrozenModel):
    run_id: str
    operation: Literal["accept", "rollback"]
    why: str
    branch: str = Field(description="The user's branch the operation targeted.")
    files: tuple[ConflictFile, ...] = ()

    def describe(self) -> str:
        lines = [self.why]
        lines.extend(f"  {f.path}: yours: {f.user_side}; run: {f.run_side}" for f in self.files)
        return "\n".join(lines)


class KeptFile(FrozenModel):
    """One file of a run's change set to keep on accept: whole, some of its hunks, or a text the reviewer made."""

    path: str = Field(description="The file's path as in the change set (relative to the repository's top level).")
    hunks: tuple[int, ...] | None = Field(
        default=None,
        description="The hunks to keep, by index (0-based) among the `@@` headers of the file's diff in the change "
        "set; None: every hunk (the whole file).",
    )
    text: str | None = Field(
        default=None,
        description="The file's whole text to commit instead (a client that split the hunks itself); "
        "exclusive with `hunks`.",
    )


class AcceptSelection(FrozenModel):
    """What a reviewer keeps of a run: the files listed (whole, some hunks, or a text); the run's other files are
    dropped. Accept commits exactly that on the run's branch (the reviewed commit) and applies it."""

    files: tuple[KeptFile, ...] = Field(min_length=1)


class AcceptResult(FrozenModel):
    run_id: str
    branch: str = Field(description="The user's branch the run was applied to.")
    commits: tuple[str, ...] = Field(description="New commits on that branch, oldest first.")
    source_commits: tuple[str, ...] = Field(description="The run's commits they were made from.")
    files: tuple[str, ...] = ()
    head: str
    reviewed_commit: str | None = Field(
        default=None,
        description="A selective accept: the commit on the run's branch that holds exactly the kept changes "
        "(the one source commit); None: the whole run was accepted.",
    )
    partial: tuple[str, ...] = Field(default=(), description="Files of the run kept in part (some hunks, a text).")
    dropped: tuple[str, ...] = Field(default=(), description="Files of the run whose changes were all left out.")


class RollbackResult(FrozenModel):
    run_id: str
    branch: str
    commits: tuple[str, ...] = Field(description="The revert commits, newest accepted commit reverted first.")
    reverted: tuple[str, ...] = Field(description="The accepted commits they revert.")
    files: tuple[str, ...] = ()
    head: str


class CleanupReport(FrozenModel):
    removed_runs: tuple[str, ...] = ()
    removed_worktrees: int = 0
    removed_branches: int = 0
    kept_runs: tuple[str, ...] = Field(default=(), description="Runs still within retention, or holding the lock.")
    older_than_days: int
