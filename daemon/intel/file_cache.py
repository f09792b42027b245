"""Recently read files and their syntax trees, kept while the file on disk stays the same.

Code-intel answers read the files the language server points at (the lines around a location, the
function a reference sits in), and the next question usually points at the same few files. A
``FileCache`` keeps the last ``size`` files' lines (``None`` for a file that cannot be shown: not
readable, or holding credentials) and their Tree-sitter trees, each keyed by the file's size and
mtime: a file changed on disk is read and parsed again. Thread-safe (answers are built on worker
threads); a tree is only read once parsed. A parse that spends its budget is not kept.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from daemon.core.lru import LruMap
from daemon.intel.ast_nodes import SyntaxFile
from daemon.intel.syntax_budget import SyntaxBudget

if TYPE_CHECKING:
    from tree_sitter import Tree

__all__ = ["FileCache"]

_DEFAULT_SIZE = 32


@dataclass(slots=True)
class _Entry:
    stamp: tuple[int, int]
    lines: list[str] | None
    trees: dict[str, tuple[bytes, Tree]]


class FileCache:
    """See the module docstring. ``read(path)`` gives a file's lines (None: not to be shown)."""

    def __init__(self, read: Callable[[Path], list[str] | None], *, size: int = _DEFAULT_SIZE) -> None:
        self._read = read
        self._entries: LruMap[Path, _Entry] = LruMap(size)
        self._lock = threading.Lock()

    def lines(self, path: Path) -> list[str] | None:
        """The file's lines as ``read`` gives them, read again only when its size or mtime changed."""
        stamp = _stamp(path)
        if stamp is None:
            return self._read(path)
        with self._lock:
            entry = self._entries.get(path)
            if entry is not None and entry.stamp == stamp:
                return entry.lines
        lines = self._read(path)
        with self._lock:
            self._entries.put(path, _Entry(stamp=stamp, lines=lines, trees={}))
        return lines

    def syntax(self, path: Path, language: str, lines: list[str], budget: SyntaxBudget) -> SyntaxFile:
        """The file (as ``lines``, from ``self.lines``) parsed as ``language``: the kept tree, or a new
        parse under ``budget``. Queries on the result run under a fresh clock of ``budget``.

        Raises:
            TooComplex: the parse spent the budget.
        """
        source = "\n".join(lines).encode("utf-8")
        stamp = _stamp(path)
        with self._lock:
            entry = self._entries.get(path)
            kept = entry.trees.get(language) if entry is not None and entry.stamp == stamp else None
        if kept is not None and kept[0] == source:
            return SyntaxFile(language, source, kept[1], clock=budget.start(f"the syntax tree of a {language} file"))
        syntax = SyntaxFile.parse(language, source, budget=budget)
        with self._lock:
            entry = self._entries.get(path)
            if entry is not None and entry.stamp == stamp:
                entry.trees[language] = (source, syntax.tree)
        return syntax


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns
