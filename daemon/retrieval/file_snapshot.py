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
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from daemon.core.regular_files import boundary_problem, read_regular_stat
from daemon.intel.workspace_paths import SECRET_SNIFF_BYTES, contained, secret_reason

__all__ = ["FileSnapshot", "SnapshotFile"]

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


class FileSnapshot:
    """Workspace files under ``root``, each taken at most once (see the module doc)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._files: dict[str, SnapshotFile] = {}
        self._derived: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()

    def get(self, rel: str) -> SnapshotFile:
        """The file at the workspace-relative ``rel`` (blocking: reads it the first time)."""
        with self._lock:
            known = self._files.get(rel)
        if known is not None:
            return known
        taken = self._take(rel)
        with self._lock:
            return self._files.setdefault(rel, taken)

    def derived(self, rel: str, what: str, make: Callable[[SnapshotFile], T]) -> T:
        """``make(self.get(rel))``, made once per ``(rel, what)``: ``make`` must depend on the file alone."""
        with self._lock:
            if (rel, what) in self._derived:
                return cast("T", self._derived[rel, what])
        made = make(self.get(rel))
        with self._lock:
            return cast("T", self._derived.setdefault((rel, what), made))

    def _take(self, rel: str) -> SnapshotFile:
        link = self.root / rel
        real = contained(self.root, link)
        if real is None:
            return SnapshotFile(real=None, is_file=False, secret=None, data=None, error=None)
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
