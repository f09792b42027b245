"""An exclusive, advisory lock on a workspace's state directory (one owner of the store at a time)."""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from daemon.errors import StoreError

__all__ = ["WorkspaceLock"]


class WorkspaceLock:
    """``flock`` on ``<state>/index.lock``; released by the kernel when the process dies."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "index.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise StoreError(
                f"another ided process (pid {holder}) is using the index in {self.path.parent}; "
                "wait for it to finish or stop it (`ided stop`)",
                cause=exc,
            ) from exc
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
