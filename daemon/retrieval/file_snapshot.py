"""The workspace files one retrieval reads, each read once.

Validation checks every piece that quotes a workspace file against the file's current text, and the
AST map outlines the files of the pieces that passed; the pieces of one file, and the stages of one
upfront retrieval, cite largely the same files. A ``FileSnapshot`` lives for one retrieval (in upfront
mode, one for all its stages) and takes each file once: where it resolves (inside the workspace or
not), whether it holds credentials (``secret_reason``, on the same first bytes it would read), and
its bytes (a regular file only, read without blocking; a hard link counts as outside, as a link out
does). Every check of that retrieval then sees the same text, as read when it was first needed.
What is made of a file's bytes alone (the AST map's outline of it) is kept with it (``derived``).
It is safe to use from several threads (a file read twice by a race is the same file).

A ``FileMemory`` (the retrieval agent holds one for its lifetime: a daemon's runs share it) keeps
what snapshots took across retrievals: a file whose ``stat`` is the same as when it was read (same
inode, size, modification and change time to the nanosecond) is not read, scanned for credentials or
parsed again; any other file is taken afresh. It is bounded by bytes, least recently used out first.
"""

from __future__ import annotations

import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from daemon.core.regular_files import boundary_problem, read_regular_stat
from daemon.intel.workspace_paths import SECRET_SNIFF_BYTES, contained, secret_reason

__all__ = ["FileMemory", "FileSnapshot", "SnapshotFile"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class SnapshotFile:
    """One workspace-relative path as the snapshot took it."""

    real: Path | None
    """The path with every symlink resolved; None when it lies outside the workspace."""
    is_file: bool
    secret: str | None
    """Why the file holds credentials (``secret_reason``), else None; never judged for a non-file."""
    data: bytes | None
    """The file's bytes; None when it could not be read (``error``) or lies outside."""
    error: OSError | None


_StatKey = tuple[str, str, int, int, int, int, int]
"""A file as its ``stat`` shows it: path as asked, resolved path, device, inode, size, mtime and ctime (ns)."""


@dataclass(slots=True)
class _Remembered:
    taken: SnapshotFile
    derived: dict[str, Any]


class FileMemory:
    """Files taken by earlier snapshots, by their ``stat`` (see the module doc); thread-safe."""

    def __init__(self, max_bytes: int = 32 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[_StatKey, _Remembered] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        """Files served without being read again (for tests and benchmarks)."""

    def get(self, key: _StatKey) -> _Remembered | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                self.hits += 1
            return found

    def put(self, key: _StatKey, taken: SnapshotFile) -> _Remembered:
        size = len(taken.data or b"")
        with self._lock:
            known = self._entries.get(key)
            if known is not None:
                return known
            entry = _Remembered(taken=taken, derived={})
            if size > self.max_bytes // 4:  # too big to keep: served, not remembered
                return entry
            self._entries[key] = entry
            self._bytes += size
            while self._bytes > self.max_bytes and self._entries:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= len(dropped.taken.data or b"")
            return entry


def _stat_key(rel: str, real: Path) -> _StatKey | None:
    try:
        st = os.stat(real)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (rel, str(real), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class FileSnapshot:
    """Workspace files under ``root``, each taken at most once (see the module doc); ``memory``: what
    earlier snapshots took, reused for files unchanged since."""

    def __init__(self, root: Path, memory: FileMemory | None = None) -> None:
        self.root = root.resolve()
        self._memory = memory
        self._files: dict[str, SnapshotFile] = {}
        self._remembered: dict[str, _Remembered] = {}
        self._derived: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()

    def get(self, rel: str) -> SnapshotFile:
        """The file at the workspace-relative ``rel`` (blocking: reads it the first time)."""
        with self._lock:
            known = self._files.get(rel)
        if known is not None:
            return known
        taken, remembered = self._take(rel)
        with self._lock:
            if remembered is not None:
                self._remembered.setdefault(rel, remembered)
            return self._files.setdefault(rel, taken)

    def derived(self, rel: str, what: str, make: Callable[[SnapshotFile], T]) -> T:
        """``make(self.get(rel))``, made once per ``(rel, what)``: ``make`` must depend on the file alone
        (so a remembered file keeps what was made of it for the next snapshots too)."""
        with self._lock:
            if (rel, what) in self._derived:
                return cast("T", self._derived[rel, what])
        taken = self.get(rel)
        with self._lock:
            remembered = self._remembered.get(rel)
        if remembered is not None and remembered.taken is taken and what in remembered.derived:
            made = cast("T", remembered.derived[what])
        else:
            made = make(taken)
            if remembered is not None and remembered.taken is taken:
                remembered.derived.setdefault(what, made)
        with self._lock:
            return cast("T", self._derived.setdefault((rel, what), made))

    def _take(self, rel: str) -> tuple[SnapshotFile, _Remembered | None]:
        link = self.root / rel
        real = contained(self.root, link)
        if real is None:
            return SnapshotFile(real=None, is_file=False, secret=None, data=None, error=None), None
        key = _stat_key(rel, real) if self._memory is not None else None
        if self._memory is not None and key is not None:
            known = self._memory.get(key)
            if known is not None:
                return known.taken, known
        taken = self._read(link, real)
        if self._memory is not None and key is not None and taken.data is not None:
            after = _stat_key(rel, real)  # changed while it was read: not remembered
            if after == key:
                remembered = self._memory.put(key, taken)
                return remembered.taken, remembered
        return taken, None

    @staticmethod
    def _read(link: Path, real: Path) -> SnapshotFile:
        is_file = real.is_file()
        try:
            data, st = read_regular_stat(real)
        except OSError as exc:
            secret = secret_reason(link, real) if is_file else None
            return SnapshotFile(real=real, is_file=is_file, secret=secret, data=None, error=exc)
        if boundary_problem(st, None) is not None:  # a hard link: its contents may have a name outside
            return SnapshotFile(real=None, is_file=False, secret=None, data=None, error=None)
        secret = secret_reason(link, real, data=data[:SECRET_SNIFF_BYTES]) if is_file else None
        return SnapshotFile(real=real, is_file=is_file, secret=secret, data=data, error=None)
