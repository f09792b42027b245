"""Version control of runs: every editing run on branch ``ided/run/<id>`` in its own git worktree.

One commit per stage attempt that changed files; the run's change set reviewed as one diff; accept
applies its commits to the user's branch only when no file overlaps the user's own changes
(committed or not); reject leaves everything as it is; rollback reverts with new commits; cleanup
removes old worktrees and branches. See docs/review.md.
"""

from __future__ import annotations

from daemon.vcs.models import (
    AcceptResult,
    ChangeSet,
    CleanupReport,
    CommitInfo,
    ConflictFile,
    ConflictReport,
    FileChange,
    ReviewState,
    RollbackResult,
    RunBranch,
)
from daemon.vcs.worktrees import BRANCH_PREFIX, RunWorktrees

__all__ = [
    "BRANCH_PREFIX",
    "AcceptResult",
    "ChangeSet",
    "CleanupReport",
    "CommitInfo",
    "ConflictFile",
    "ConflictReport",
    "FileChange",
    "ReviewState",
    "RollbackResult",
    "RunBranch",
    "RunWorktrees",
]
