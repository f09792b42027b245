"""What a run's stage attempts changed, as hunks and patches read from its worktree.

The pipeline compares a stage attempt with the run's earlier ones (``daemon.orchestration.consistency``)
and shows the reflector and the evaluator what a stage or the whole run changed. ``WorktreeDiffs`` reads
one run's worktree:

- ``pending_hunks`` / ``pending_patch``: what the worktree holds beyond its HEAD (tracked and untracked
  files, ``.gitignore`` respected), diffed through a private index so nothing the run's commits use is
  touched: the attempt the agents just finished, before it is committed;
- ``commit_hunks``: what one commit changed against its first parent (an earlier attempt);
- ``run_patch``: the run's whole change, from where it started to the worktree as it is now.

Hunks are read with no context lines (``-U0``), so a hunk is exactly the lines removed and the lines
added at one place. Synchronous (git): call from a worker thread.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from daemon.vcs.git_runner import GitRunner, temp_index_env

__all__ = ["DiffHunk", "WorktreeDiffs", "parse_hunks"]

_DIFF_ARGS = ("--no-color", "--no-ext-diff", "--no-renames")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True, kw_only=True)
class DiffHunk:
    """One place in one file: the lines taken out and the lines put in (without their ``-``/``+``)."""

    path: str
    start: int
    """First line of the new side (1-based; for a pure removal, the line before it)."""
    removed: tuple[str, ...]
    added: tuple[str, ...]


def parse_hunks(diff: str) -> list[DiffHunk]:
    """The hunks of a unified diff in git's format (binary files and mode changes give none)."""
    hunks: list[DiffHunk] = []
    path: str | None = None
    old_path: str | None = None
    start = 0
    removed: list[str] = []
    added: list[str] = []
    open_hunk = False

    def close() -> None:
        nonlocal open_hunk
        if open_hunk and path is not None and (removed or added):
            hunks.append(DiffHunk(path=path, start=start, removed=tuple(removed), added=tuple(added)))
        open_hunk = False

    for line in diff.split("\n"):
        if line.startswith("diff --git "):
            close()
            path = old_path = None
            continue
        if line.startswith("--- ") and not open_hunk:
            old_path = line[4:].removeprefix("a/") if line[4:] != "/dev/null" else None
            continue
        if line.startswith("+++ ") and not open_hunk:
            path = line[4:].removeprefix("b/") if line[4:] != "/dev/null" else old_path
            continue
        header = _HUNK.match(line)
        if header:
            close()
            start, removed, added, open_hunk = int(header[1]), [], [], True
            continue
        if not open_hunk or not line:
            continue
        if line[0] == "-":
            removed.append(line[1:])
        elif line[0] == "+":
            added.append(line[1:])
        elif line[0] != "\\":
            close()
    close()
    return hunks


class WorktreeDiffs:
    """Diffs of one run's worktree; ``start``: the commit the run's branch started from."""

    def __init__(self, worktree: Path, *, start: str) -> None:
        self.worktree = worktree
        self.start = start
        self._commits: dict[str, list[DiffHunk]] = {}

    def _git(self) -> GitRunner:
        return GitRunner(self.worktree)

    def _staged_diff(self, *args: str) -> str:
        """``git diff --cached ARGS`` over a private copy of the worktree's index with every change added
        (the copy keeps the index's file stats, so only changed files are hashed again)."""
        git = self._git()
        with tempfile.TemporaryDirectory(prefix="ided-diff-") as tmp:
            index = Path(tmp) / "index"
            own = Path(git.run("rev-parse", "--path-format=absolute", "--git-path", "index"))
            if own.is_file():
                shutil.copyfile(own, index)
            env = temp_index_env(index)
            if not own.is_file():
                git.run("read-tree", "HEAD", env=env)
            git.run("add", "-A", "--", ".", env=env)
            return git.run("diff", "--cached", *_DIFF_ARGS, *args, env=env, strip=False)

    def _pending_diff(self, *args: str) -> str:
        return self._staged_diff(*args, "HEAD")

    def pending_hunks(self) -> list[DiffHunk]:
        """What the worktree changed since its HEAD (the attempt not yet committed)."""
        return parse_hunks(self._pending_diff("-U0"))

    def pending_patch(self) -> str:
        """The same as a patch with three lines of context, for a reader."""
        return self._pending_diff()

    def commit_hunks(self, commit: str) -> list[DiffHunk]:
        """What ``commit`` changed against its first parent (cached: a commit never changes)."""
        if commit not in self._commits:
            diff = self._git().run("diff", *_DIFF_ARGS, "-U0", f"{commit}^", commit, strip=False)
            self._commits[commit] = parse_hunks(diff)
        return self._commits[commit]

    def run_patch(self) -> str:
        """The run's whole change: from ``start`` to the worktree as it is (committed or not)."""
        return self._staged_diff(self.start)
