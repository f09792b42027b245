"""The vcs package's own store: one JSON file per run branch, and the per-workspace edit lock.

Files live under ``<state_dir>/vcs``: ``runs/<run_id>.json`` (a ``RunBranch``, written atomically)
and ``edit.lock`` (an ``flock`` held by the one editing run; the file names its run id).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
from collections.abc import Generator
from pathlib import Path

from daemon.core.record_files import RecordDir
from daemon.core.review_models import RunBranch
from daemon.errors import EditLockHeld, ErrorCode, VcsError

__all__ = ["RunRegistry", "check_run_id"]

logger = logging.getLogger(__name__)

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def check_run_id(run_id: str) -> str:
    """A run id that is safe as a branch name component and a file name, or ``VcsError``."""
    if not _RUN_ID.match(run_id) or ".." in run_id or run_id.endswith((".", ".lock")):
        raise VcsError(f"'{run_id}' is not a valid run id (letters, digits, '.', '_', '-'; at most 100)")
    return run_id


class RunRegistry(RecordDir[RunBranch]):
    """Run branch records and the edit lock of one workspace."""

    def __init__(self, vcs_dir: Path) -> None:
        self.root = vcs_dir
        self.runs_dir = vcs_dir / "runs"
        self.lock_path = vcs_dir / "edit.lock"
        super().__init__(self.runs_dir, RunBranch, what="run branch record")

    def _checked(self, key: str) -> str:
        return check_run_id(key)

    def _missing(self, key: str) -> Exception:
        return VcsError(
            f"run {key} has no branch in this workspace (it was read-only, never edited, or is unknown)",
            code=ErrorCode.RUN_NOT_FOUND,
        )

    def _unreadable(self, key: str, path: Path, exc: Exception) -> Exception:
        return VcsError(f"the branch record of run {key} ({path}) cannot be read", cause=exc)

    def save(self, branch: RunBranch) -> RunBranch:
        self._write(branch.run_id, branch)
        return branch

    def load(self, run_id: str) -> RunBranch:
        return self._read(run_id)

    def exists(self, run_id: str) -> bool:
        return self._record_path(run_id).is_file()

    def all(self) -> list[RunBranch]:
        return self._read_all()

    def lock_holder(self) -> str | None:
        """The run id written by the last holder of the lock (whether or not it still holds it)."""
        try:
            return self.lock_path.read_text(encoding="utf-8").strip() or None
        except OSError:
            return None

    def is_locked(self) -> bool:
        """Whether some process (this one included) holds the edit lock now."""
        if not self.lock_path.exists():
            return False
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def edit_lock(self, run_id: str) -> Generator[None]:
        """Hold the workspace's edit lock for ``run_id``; ``EditLockHeld`` names the run holding it."""
        check_run_id(run_id)
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = self.lock_holder() or "unknown"
                raise EditLockHeld(
                    f"run {holder} is editing this workspace; run {run_id} cannot start editing until it ends "
                    f"(`ided cancel {holder}` stops it)",
                    holder=holder,
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, run_id.encode(), 0)
            try:
                yield
            finally:
                os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
