"""Tree-sitter languages and parsers for the bundled grammar wheels (offline, no downloads).

``Language`` objects are immutable and shared by every thread. ``Parser`` objects are not
thread-safe, so ``get_parser`` keeps one per language *per thread*. ``parse(..., clock=...)``
parses under a request's budget: Tree-sitter's progress callback stops it at the deadline
(``TooComplex``) and the parser is reset for the next file.

Grammar ids: the code ids of ``daemon.core.languages`` (``python``, ``javascript``, ``typescript``,
``tsx``, ``go``, ``rust``, ``java``, ``c``, ``cpp``) plus ``markdown`` (block grammar) and
``markdown_inline`` (inline grammar).
"""

from __future__ import annotations

import importlib
import threading
from functools import cache
from typing import TYPE_CHECKING

import tree_sitter

from daemon.errors import IndexingError

if TYPE_CHECKING:
    from daemon.intel.syntax_budget import BudgetClock

__all__ = ["GRAMMAR_LANGUAGES", "get_language", "get_parser", "has_grammar", "parse"]


# Grammar modules are imported lazily: a process that only chunks Python never loads the C++ grammar.
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "markdown": ("tree_sitter_markdown", "language"),
    "markdown_inline": ("tree_sitter_markdown", "inline_language"),
}
"""Grammar id -> (the grammar wheel's module, the function in it that returns the language)."""

GRAMMAR_LANGUAGES: frozenset[str] = frozenset(_GRAMMARS)
"""Every language id ``get_language`` accepts."""

_local = threading.local()
_lock = threading.Lock()


def has_grammar(language: str) -> bool:
    """Whether a bundled Tree-sitter grammar exists for ``language``."""
    return language in _GRAMMARS


@cache
def _load(language: str) -> tree_sitter.Language:
    module, function = _GRAMMARS[language]
    capsule: object = getattr(importlib.import_module(module), function)()
    return tree_sitter.Language(capsule)


def get_language(language: str) -> tree_sitter.Language:
    """The Tree-sitter ``Language`` for a grammar id; raises ``IndexingError`` for an unknown id."""
    if language not in _GRAMMARS:
        raise IndexingError(f"no Tree-sitter grammar for language {language!r}; known: {sorted(_GRAMMARS)}")
    with _lock:  # functools.cache may call the loader twice under a race; keep one Language per id
        return _load(language)


def get_parser(language: str) -> tree_sitter.Parser:
    """This thread's ``Parser`` for ``language`` (created on first use, then reused)."""
    parsers: dict[str, tree_sitter.Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = {}
        _local.parsers = parsers
    parser = parsers.get(language)
    if parser is None:
        parser = tree_sitter.Parser(get_language(language))
        parsers[language] = parser
    return parser


_READ_CHUNK = 64 * 1024


def parse(language: str, source: bytes, *, clock: BudgetClock | None = None) -> tree_sitter.Tree:
    """Parse ``source`` with this thread's parser for ``language``. Syntax errors become ERROR nodes.

    With ``clock``, the parse stops at its deadline and raises ``TooComplex``.
    """
    parser = get_parser(language)
    if clock is None:
        return parser.parse(source)
    clock.check()

    def read(offset: int, _point: tuple[int, int]) -> bytes:
        return source[offset : offset + _READ_CHUNK]

    def progress(_offset: int, _has_error: bool) -> bool:
        return clock.expired()  # True cancels the parse

    try:
        return parser.parse(read, progress_callback=progress)
    except ValueError:  # "Parsing failed": the progress callback cancelled it
        parser.reset()
        raise clock.timed_out() from None
