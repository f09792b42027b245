"""Where a code-intel question points: a symbol name or a file position, resolved to places to ask about.

``TargetFinder.targets(symbol, file, line, column)`` checks a file position against the file (line
and column in range, a supported language) or resolves a name through the index, package
re-exports and a Tree-sitter scan (``SymbolResolver``), and answers the places (at most
``MAX_TARGETS`` of the best rank), notes for the answer (how the name was found, what else
matched) and the query as text. Refusals are ``InvalidToolInput`` naming what to change.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from daemon.core.languages import CODE_LANGUAGES, language_for_path
from daemon.errors import InvalidToolInput
from daemon.intel.lsp.documents import read_text
from daemon.intel.lsp.requests import Place
from daemon.intel.workspace_paths import WorkspacePaths
from daemon.service.intel.symbol_resolver import MAX_TARGETS, SymbolMatch, SymbolResolver, best_matches, name_position

__all__ = ["MAX_TARGETS", "Target", "TargetFinder", "word_at"]

_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Target(Place):
    """A place to ask a language server about, with the name there and the index match it came from."""

    name: str | None
    match: SymbolMatch | None


def word_at(text: str, column: int) -> str | None:
    """The identifier at (or just before) 1-based ``column`` of ``text``."""
    index = column - 1
    if not 0 <= index < len(text) or text[index] not in _WORD_CHARS:
        if index > 0 and index - 1 < len(text) and text[index - 1] in _WORD_CHARS:
            index -= 1
        else:
            return None
    start = index
    while start > 0 and text[start - 1] in _WORD_CHARS:
        start -= 1
    end = index
    while end < len(text) and text[end] in _WORD_CHARS:
        end += 1
    return text[start:end] or None


def language_of(relative: str) -> str:
    """The code language of a workspace file; ``InvalidToolInput`` for any other file."""
    language = language_for_path(relative)
    if language is None or language not in CODE_LANGUAGES:
        raise InvalidToolInput(
            f"{relative!r} is not a source file of a supported language ({', '.join(sorted(CODE_LANGUAGES))})"
        )
    return language


class TargetFinder:
    """See the module docstring."""

    def __init__(self, paths: WorkspacePaths, resolver: SymbolResolver) -> None:
        self._paths = paths
        self._resolver = resolver

    async def targets(
        self, symbol: str | None, file: str | None, line: int | None, column: int | None
    ) -> tuple[list[Target], list[str], str]:
        """Places to ask about, notes, and the query as text."""
        if file:
            return await self._at_position(symbol, file, line, column)
        if not symbol or not symbol.strip():
            raise InvalidToolInput("give a symbol name (e.g. 'Class.method', 'module.func') or file + line (+ column)")
        return await self._by_name(symbol)

    async def _at_position(
        self, symbol: str | None, file: str, line: int | None, column: int | None
    ) -> tuple[list[Target], list[str], str]:
        if line is None:
            raise InvalidToolInput("give `line` (1-based) together with `file`")
        resolved = self._paths.resolve(file)
        language = language_of(resolved.relative)
        text = await asyncio.to_thread(read_text, resolved.absolute, display=resolved.relative)
        lines = text.split("\n")
        if not 1 <= line <= len(lines):
            raise InvalidToolInput(f"line {line} is outside {resolved.relative}: it has {len(lines)} lines")
        line_text = lines[line - 1].rstrip("\r")
        if column is None:
            column = len(line_text) - len(line_text.lstrip()) + 1
            if symbol:
                found = line_text.find(symbol.split(".")[-1])
                column = found + 1 if found >= 0 else column
        if not 1 <= column <= len(line_text) + 1:
            raise InvalidToolInput(
                f"column {column} is outside line {line} of {resolved.relative}: it has {len(line_text)} characters"
            )
        target = Target(
            absolute=resolved.absolute,
            relative=resolved.relative,
            language=language,
            line=line,
            column=column,
            name=word_at(line_text, column),
            match=None,
        )
        return [target], [], f"{resolved.relative}:{line}:{column}"

    async def _by_name(self, symbol: str) -> tuple[list[Target], list[str], str]:
        matches, via = await asyncio.to_thread(self._resolver.resolve, symbol, limit=10)
        if not matches:
            raise InvalidToolInput(
                f"symbol {symbol!r} was not found in the workspace (looked in the index and with a Tree-sitter "
                "scan); check the spelling, qualify it as 'Class.method' or 'module.func', or give file + line"
            )
        best, notes = best_matches(symbol, matches, via)
        targets: list[Target] = []
        for match in best:
            absolute = self._paths.root / match.path
            text = await asyncio.to_thread(read_text, absolute, display=match.path)
            line_no, col = name_position(text.split("\n"), match)
            targets.append(
                Target(
                    absolute=absolute,
                    relative=match.path,
                    language=match.language,
                    line=line_no,
                    column=col,
                    name=match.name,
                    match=match,
                )
            )
        return targets, notes, symbol
