"""An exclusive, advisory lock on a workspace's state directory (one owner of the store at a time).

The lock file holds the owner's pid and what it is (``daemon``, ``ided index``, ``ided search`` …), so
the process that finds the lock taken gets a ``workspace_busy`` error whose hint fits the owner: a
daemon is stopped with ``ided stop``; a command that opened the index itself is waited for. A caller
may wait for the lock (bounded): the daemon does, so that ``ided daemon`` started while ``ided status``
reads the index in-process waits the moment that takes instead of exiting.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import time
from pathlib import Path

from daemon.errors import WorkspaceBusy
from daemon.index.state_files import state_writes

__all__ = ["DAEMON_HOLDER", "WorkspaceLock", "lock_owner"]

logger = logging.getLogger(__name__)

DAEMON_HOLDER = "daemon"
_RETRY_S = 0.05
"""How often a waiting caller tries the lock again (flock has no timeout of its own)."""


class WorkspaceLock:
    """``flock`` on ``<state>/index.lock``; released by the kernel when the process dies."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "index.lock"
        self._fd: int | None = None

    def acquire(self, *, holder: str = "ided", wait_s: float = 0.0) -> None:
        """Take the lock, waiting up to ``wait_s`` for its owner; ``WorkspaceBusy`` names the owner if not."""
        with state_writes("open the workspace lock", self.path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + wait_s
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError as exc:
                if time.monotonic() < deadline:
                    if not told:
                        told = True
                        owner = os.pread(fd, 256, 0).decode(errors="replace").strip()
                        logger.warning("waiting up to %.0fs for %s to release the index", wait_s, owner or "its owner")
                    time.sleep(_RETRY_S)
                    continue
                owner = os.pread(fd, 256, 0).decode(errors="replace").split()
                os.close(fd)
                raise _busy(self.path.parent, owner, exc) from exc
        with state_writes("write the workspace lock", self.path):
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()} {holder}".encode(), 0)
            except OSError:
                os.close(fd)
                raise
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def lock_owner(state_dir: Path) -> tuple[int | None, str] | None:
    """(pid, holder) of the process holding the lock now, or None when nobody does (checked by trying a
    shared lock for an instant: a waiting daemon retries, so the probe never makes it fail)."""
    try:
        fd = os.open(state_dir / "index.lock", os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _parse_owner(os.pread(fd, 256, 0).decode(errors="replace").split())
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _parse_owner(words: list[str]) -> tuple[int | None, str]:
    pid = int(words[0]) if words and words[0].isdigit() else None
    return pid, " ".join(words[1:]) or "ided"


def _busy(state_dir: Path, owner: list[str], cause: BaseException) -> WorkspaceBusy:
    pid, holder = _parse_owner(owner)
    who = f"pid {pid}" if pid is not None else "pid unknown"
    if holder == DAEMON_HOLDER:
        message = (
            f"the workspace's daemon ({who}) holds the index in {state_dir}; "
            "use it (`ided search`, `ided status` and `ided index` go through it) or stop it with `ided stop`"
        )
    else:
        message = (
            f"`{holder}` ({who}) is using the index in {state_dir}; wait for it to finish and try again "
            "(`ided stop` stops only a daemon)"
        )
    return WorkspaceBusy(message, holder=holder, pid=pid, cause=cause)
