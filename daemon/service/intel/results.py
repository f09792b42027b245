"""Building the code-intel result models from language-server answers: definition sources,
reference containers, call-hierarchy calls, chunk outlines. Blocking (reads and parses files):
the service calls these through ``asyncio.to_thread``. Each parse runs under the service's syntax
budget; a file too complex for it still gives its definitions and references, without the scope
around them.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from daemon.core.intel_models import CallHierarchyCall, Definition, Location, Reference, SymbolInfo
from daemon.core.languages import language_for_path
from daemon.errors import TooComplex
from daemon.intel.ast_nodes import SyntaxFile, excerpt
from daemon.intel.chunking import chunk_source
from daemon.intel.file_cache import FileCache
from daemon.intel.lsp.convert import FileLines, LspTarget, path_of_uri, shown_lines, symbol_kind_name
from daemon.intel.lsp.documents import read_text, to_lsp_character
from daemon.intel.parsers import has_grammar
from daemon.intel.syntax_budget import DEFAULT_BUDGET, SyntaxBudget
from daemon.intel.workspace_paths import WorkspacePaths

if TYPE_CHECKING:
    from daemon.service.intel.targets import Target

__all__ = ["IntelResults"]

logger = logging.getLogger(__name__)


class IntelResults:
    """Result builders for one workspace (paths shown relative to it)."""

    def __init__(self, paths: WorkspacePaths, budget: SyntaxBudget = DEFAULT_BUDGET) -> None:
        self.paths = paths
        self.budget = budget
        self.files = FileCache(shown_lines)

    def _lines(self) -> FileLines:
        return FileLines(self.paths, read=self.files.lines)

    def file_lines(self) -> FileLines:
        """The workspace's files as lines (read through this builder's cache)."""
        return self._lines()

    def definitions(self, targets: list[LspTarget], max_chars: int) -> list[Definition]:
        lines = self._lines()
        out: list[Definition] = []
        for target in targets:
            location = lines.location(target.path, target.selection)
            source, symbol, kind = self._definition_source(target, lines)
            out.append(
                Definition(
                    location=location,
                    symbol=symbol,
                    kind=kind,
                    source=excerpt(source, max_chars) if source else None,
                    source_truncated=bool(source) and len(source) > max_chars,
                )
            )
        return out

    def _definition_source(self, target: LspTarget, lines: FileLines) -> tuple[str | None, str | None, str | None]:
        language = language_for_path(target.path.name)
        file_lines = lines.lines(target.path)
        if file_lines is None:
            return None, None, None
        if language is not None and has_grammar(language):
            start = lines.source_range(target.path, target.selection)
            try:
                syntax = self.files.syntax(target.path, language, file_lines, self.budget)
                scopes = syntax.scopes_at(start.start_line, start.start_column)
            except TooComplex as exc:  # the definition is still answered, without its enclosing scope
                logger.info("no scope for a definition in %s: %s", target.path, exc.message)
                scopes = []
            scope = next((s for s in scopes if s.range.start_line <= start.start_line), None)
            if scope is not None and scope.range.start_line >= start.start_line - 40:
                rng = scope.range
                return "\n".join(file_lines[rng.start_line - 1 : rng.end_line]), scope.qualified_name, scope.kind
        rng = target.range
        return "\n".join(file_lines[rng.start.line : rng.end.line + 1]), None, None

    def references(self, targets: list[LspTarget], declarations: set[tuple[Path, int]]) -> list[Reference]:
        lines = self._lines()
        trees: dict[Path, SyntaxFile | None] = {}
        out: list[Reference] = []
        for target in targets:
            location = lines.location(target.path, target.range)
            if target.path not in trees:
                trees[target.path] = self._syntax(target.path, lines)
            syntax = trees[target.path]
            container = None
            if syntax is not None:
                try:
                    container = syntax.container_of(location.range.start_line, location.range.start_column)
                except TooComplex as exc:  # the reference is still answered, without its container
                    logger.info("no container for a reference in %s: %s", target.path, exc.message)
            out.append(
                Reference(
                    location=location,
                    container=container,
                    is_declaration=(target.path, location.range.start_line) in declarations,
                )
            )
        return out

    def _syntax(self, path: Path, lines: FileLines) -> SyntaxFile | None:
        language = language_for_path(path.name)
        file_lines = lines.lines(path)
        if not language or not has_grammar(language) or file_lines is None:
            return None
        try:
            return self.files.syntax(path, language, file_lines, self.budget)
        except TooComplex as exc:
            logger.info("no syntax tree for %s: %s", path, exc.message)
            return None

    def calls(
        self, item: lsp.CallHierarchyItem | None, calls: list[Any], direction: str
    ) -> tuple[SymbolInfo | None, list[CallHierarchyCall]]:
        lines = self._lines()

        def info(it: lsp.CallHierarchyItem) -> SymbolInfo:
            path = path_of_uri(it.uri) or Path(it.uri)
            return SymbolInfo(
                name=it.name,
                kind=symbol_kind_name(it.kind),
                detail=(it.detail or None) and (it.detail or "")[:200],
                location=lines.location(path, it.selection_range),
            )

        out: list[CallHierarchyCall] = []
        for call in calls:
            other: lsp.CallHierarchyItem = call.from_ if direction == "incoming" else call.to
            sites_item = other if direction == "incoming" else item
            assert sites_item is not None
            sites_path = path_of_uri(sites_item.uri) or Path(sites_item.uri)
            out.append(
                CallHierarchyCall(
                    symbol=info(other),
                    call_sites_path=self.paths.display(sites_path)[0],
                    call_sites=tuple(dict.fromkeys(lines.source_range(sites_path, r) for r in call.from_ranges)),
                )
            )
        return (info(item) if item is not None else None), out

    def chunk_symbols(self, absolute: Path, relative: str, language: str, limit: int) -> tuple[list[SymbolInfo], int]:
        text = read_text(absolute, display=relative)
        lines = FileLines(self.paths, overrides={absolute: text})
        chunks = [c for c in chunk_source(relative, text.encode("utf-8"), language) if c.part == 1 and c.name]
        out: list[SymbolInfo] = []
        for chunk in chunks[:limit]:
            qualified = chunk.qualified_name or chunk.name or ""
            rng = lsp.Range(
                start=lsp.Position(line=chunk.start_line - 1, character=0),
                end=lsp.Position(line=chunk.start_line - 1, character=0),
            )
            out.append(
                SymbolInfo(
                    name=chunk.name or qualified,
                    kind=chunk.symbol_kind.value,
                    container=qualified.rpartition(".")[0] or None,
                    detail=chunk.signature,
                    location=lines.location(absolute, rng),
                )
            )
        return out, len(chunks)

    def index_definitions(self, targets: list[Target], max_chars: int) -> list[Definition]:
        """The definitions the index found for a name (``Target.match``), with their source, without a server."""
        lines = self._lines()
        out: list[Definition] = []
        for target in targets:
            match = target.match
            if match is None:
                continue
            file_lines = lines.lines(target.absolute)
            source = "\n".join(file_lines[match.start_line - 1 : match.end_line]) if file_lines else None
            out.append(
                Definition(
                    location=self.point_location(target.absolute, target.line, target.column, target.name, lines),
                    symbol=match.qualified_name,
                    kind=match.kind,
                    source=excerpt(source, max_chars) if source else None,
                    source_truncated=bool(source) and len(source or "") > max_chars,
                )
            )
        return out

    def point_location(
        self, absolute: Path, line: int, column: int, name: str | None, lines: FileLines | None = None
    ) -> Location:
        """The location of ``name`` starting at (line, column) of ``absolute``."""
        lines = lines or self._lines()
        line_text = lines.line(absolute, line)
        start = lsp.Position(line=line - 1, character=to_lsp_character(line_text, column))
        end = lsp.Position(line=line - 1, character=to_lsp_character(line_text, column + len(name or "")))
        return lines.location(absolute, lsp.Range(start=start, end=end))
