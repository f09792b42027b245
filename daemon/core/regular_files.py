"""Reading a file of the workspace: only regular files are opened, and no open or read can block.

A repository can ship (or a process can create while the daemon runs) a FIFO, a socket or a link to
a device under an ordinary name (``ln -s inner.fifo notes.txt``). Opening a FIFO for reading waits
for a writer, for ever; reading ``/dev/zero`` never ends. So every read of a workspace file goes
through :func:`read_regular`:

1. the path's target is ``stat``-ed and anything but a regular file is refused before any open
   (:class:`NotRegularFile`, naming the kind: ``FIFO``, ``socket``, ``character device``...);
2. it is opened with ``O_NONBLOCK`` (an open of a FIFO swapped in since the ``stat`` returns at
   once) and ``fstat``-ed again: the file read is the regular file checked, or nothing is read;
3. at most ``limit`` bytes are read.

:func:`boundary_problem` says why a regular file's contents may live outside the workspace even
though its path lies inside: a **hard link** (``st_nlink > 1``: the same contents under another
name, maybe ``../outside/secrets.env``) or a file on **another file system** than the workspace
root (a mount point inside the workspace). Both are treated like a symlink out of the workspace.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from daemon.core.models import SkipReason

__all__ = [
    "NotRegularFile",
    "boundary_problem",
    "file_kind",
    "read_regular",
    "read_regular_stat",
    "read_regular_text",
    "regular_stat",
]

_KINDS: tuple[tuple[int, str], ...] = (
    (stat.S_IFIFO, "FIFO"),
    (stat.S_IFSOCK, "socket"),
    (stat.S_IFCHR, "character device"),
    (stat.S_IFBLK, "block device"),
    (stat.S_IFDIR, "directory"),
    (stat.S_IFLNK, "symbolic link"),
)


def file_kind(mode: int) -> str | None:
    """None for a regular file, else what it is (``FIFO``, ``socket``, ``character device``, ...)."""
    if stat.S_ISREG(mode):
        return None
    kind = stat.S_IFMT(mode)
    return next((name for flag, name in _KINDS if flag == kind), "special file")


class NotRegularFile(OSError):
    """The path is not a regular file (``kind`` says what it is); nothing was opened, or nothing read."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(f"{path} is a {kind}, not a regular file")
        self.path = path
        self.kind = kind


def regular_stat(path: Path) -> os.stat_result:
    """``path``'s target's stat; ``NotRegularFile`` unless it is a regular file (``OSError`` as ``os.stat``)."""
    st = os.stat(path)
    kind = file_kind(st.st_mode)
    if kind is not None:
        raise NotRegularFile(path, kind)
    return st


def boundary_problem(st: os.stat_result, root_device: int | None) -> SkipReason | None:
    """Why a regular file's contents may lie outside the workspace (see the module docstring), or None.

    ``root_device``: the workspace root's ``st_dev`` (None: not checked)."""
    if root_device is not None and st.st_dev != root_device:
        return SkipReason.OTHER_FILESYSTEM
    if st.st_nlink > 1:
        return SkipReason.HARD_LINK
    return None


def read_regular(path: Path, limit: int | None = None) -> bytes:
    """At most ``limit`` bytes (all when None) of the regular file ``path``, read without blocking.

    Raises ``NotRegularFile`` for anything else (before opening it, or right after a non-blocking open
    when it changed since), ``OSError`` as ``open`` does."""
    return read_regular_stat(path, limit)[0]


def read_regular_stat(path: Path, limit: int | None = None) -> tuple[bytes, os.stat_result]:
    """:func:`read_regular`, and the ``fstat`` of the file read (for :func:`boundary_problem`)."""
    regular_stat(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        kind = file_kind(st.st_mode)
        if kind is not None:  # swapped for a FIFO since the stat: the non-blocking open returned at once
            raise NotRegularFile(path, kind)
        os.set_blocking(fd, True)  # a regular file never blocks; the reads behave as usual
        with os.fdopen(fd, "rb", closefd=True) as fh:
            fd = -1
            return (fh.read() if limit is None else fh.read(limit)), st
    finally:
        if fd >= 0:
            os.close(fd)


def read_regular_text(path: Path, limit: int | None = None) -> str:
    """:func:`read_regular`, decoded as UTF-8 with undecodable bytes replaced."""
    return read_regular(path, limit).decode("utf-8", errors="replace")
