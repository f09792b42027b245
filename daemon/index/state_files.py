"""ided's own files on disk: a state directory that can be written, and room on its disk.

Contract:

* ``ensure_state_dir(path)`` makes the directory (mode 0700 when it creates it) and proves it can be
  written by creating and removing a probe file; a read-only file system, missing permission or a
  file in the way raise ``state_unwritable``, no space ``disk_full`` (``daemon.errors.state_error``).
* ``check_free_space(path, min_free_bytes)`` raises ``disk_full`` when the disk holding ``path`` has
  less than that free. The store (Qdrant Edge) writes through memory-mapped files, and a page that
  cannot be backed on a full disk kills the process with SIGBUS, which no handler can turn into an
  error. So an index pass checks before every batch it writes, keeping ``index.min_free_disk_mb`` free
  (a batch grows the store by far less); the pass stops with ``disk_full``, and what it wrote is kept.
* ``state_writes(action, path)`` turns an ``OSError`` raised inside into the same coded errors.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Generator
from pathlib import Path

from daemon.errors import ErrorCode, StateError, state_error

__all__ = ["check_free_space", "ensure_state_dir", "state_writes"]

_PROBE = ".ided-write-probe"


@contextlib.contextmanager
def state_writes(action: str, path: Path | str) -> Generator[None]:
    """Run the block; an ``OSError`` becomes the coded error for ``action`` on ``path``."""
    try:
        yield
    except OSError as exc:
        raise state_error(action, path, exc) from exc


def ensure_state_dir(path: Path) -> None:
    """Create ``path`` if needed and prove it writable (see the module doc)."""
    with state_writes("create the state directory", path):
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not path.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path))
    probe = path / _PROBE
    with state_writes("write in the state directory", path):
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, b"ok")
        finally:
            os.close(fd)
        probe.unlink()


def check_free_space(path: Path, min_free_bytes: int) -> None:
    """Raise ``disk_full`` when the disk holding ``path`` has less than ``min_free_bytes`` free."""
    if min_free_bytes <= 0:
        return
    try:
        free = shutil.disk_usage(path).free
    except OSError:
        return  # nothing to measure (the directory is being removed): the write itself will say
    if free < min_free_bytes:
        raise StateError(
            f"only {free // 2**20} MiB free on the disk of {path} (ided keeps {min_free_bytes // 2**20} MiB free "
            "so the index is never left half-written); free some space, or set `state_dir` to another disk "
            "(or lower `index.min_free_disk_mb`)",
            code=ErrorCode.DISK_FULL,
        )
