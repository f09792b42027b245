"""A definition by name answered from a Tree-sitter scan, with no index and no language server.

What ``ided mcp`` answers ``find_definition(symbol=...)`` with while its workspace (the daemon, or
its own index and language servers) is still opening, so the first answer waits for neither.
``ScannedDefinitions(config).answer(params)`` resolves the name as the index path does
(``SymbolResolver`` without an index: package re-exports such as ``requests.get``, then the code
files whose text holds the name's last part, parsed and chunked with Tree-sitter and matched by the
same rules as the index's chunks) and builds the answer the service gives from the index while a
language server starts: ``answered_by="index"``, the same definitions (location, symbol, kind,
source excerpt), targets and notes about other matches, plus a note that says it came from a scan
while the workspace opened. ``None`` when there is nothing to say this way: a position
(``file`` given), a name not found (the opened workspace then answers, with its own error), a name
in a language no server would answer for (none installed, disabled, or chosen by an untrusted
repository: the service then answers an error saying why, not the index), a file that cannot be
read, or ``stop()`` turning true mid-scan.

Light on purpose: no language-server protocol module is imported (``lsprotocol``, ``pygls``), so
answering costs a front only the Tree-sitter grammars. Lines are read with the same rules as the
service's answers (``MAX_DOCUMENT_BYTES``, binary files refused, files holding credentials quoted
by location only). Blocking: run it in a thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from daemon.config import Config
from daemon.core.intel_models import Definition, DefinitionResult, Location, SourceRange
from daemon.core.regular_files import read_regular
from daemon.index.scanner import Scanner
from daemon.intel.lsp.registry import resolve_servers
from daemon.intel.workspace_paths import WorkspacePaths, secret_reason
from daemon.service.intel.params import DefinitionParams
from daemon.service.intel.symbol_resolver import (
    ResolutionStopped,
    SymbolMatch,
    SymbolResolver,
    best_matches,
    name_position,
)

__all__ = ["MAX_DOCUMENT_BYTES", "SCAN_NOTE", "ScannedDefinitions"]

MAX_DOCUMENT_BYTES = 5_000_000
"""Files larger than this are not read for an answer (as ``daemon.intel.lsp.documents``)."""

_BINARY_SNIFF = 8192
_MAX_LINE_TEXT = 240

SCAN_NOTE = (
    "answered from a Tree-sitter scan of the workspace (the parse the index is built from) while the "
    "workspace's daemon, index and language servers start; ask again in a few seconds for the language "
    "server's answer (imports followed, types resolved)"
)


def _shown_lines(path: Path) -> list[str] | None:
    """A file's lines; None when it is too large, binary, unreadable or holds credentials."""
    try:
        data = read_regular(path, MAX_DOCUMENT_BYTES + 1)
        if len(data) > MAX_DOCUMENT_BYTES:
            return None
    except OSError:
        return None
    if b"\x00" in data[:_BINARY_SNIFF]:
        return None
    text = data.decode("utf-8", "replace")
    return None if secret_reason(path, data=text.encode("utf-8", "replace")) is not None else text.split("\n")


def _excerpt(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


class ScannedDefinitions:
    """See the module docstring. One per workspace: it keeps the chunks of the files it parsed."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self._paths = WorkspacePaths(config.workspace_path)
        self._available: dict[str, bool] = {}
        self._resolver = SymbolResolver(
            self._paths.root,
            index_search=lambda _query: None,
            scanner=Scanner.for_workspace(self._paths.root, config.index, include_secrets=False),
            max_file_bytes=config.index.max_file_bytes,
        )
        self._lock = threading.Lock()  # one scan at a time: the resolver's chunk cache is not shared

    def answer(self, params: DefinitionParams, *, stop: Callable[[], bool] | None = None) -> DefinitionResult | None:
        """The index's answer for ``params.symbol`` from a scan; None when there is none (see the module docstring)."""
        symbol = params.symbol
        if params.file or not symbol or not symbol.strip():
            return None
        try:
            with self._lock:
                matches, via = self._resolver.resolve(symbol, limit=10, stop=stop)
        except ResolutionStopped:
            return None
        if not matches:
            return None
        best, notes = best_matches(symbol, matches, via)
        if not all(self._served(m.language) for m in best):
            return None  # no server will answer: the workspace says why (not installed, untrusted, disabled)
        definitions: list[Definition] = []
        for match in best[: params.max_results]:
            definition = self._definition(match, params.max_chars)
            if definition is None:
                return None
            definitions.append(definition)
        notes = [n for n in notes if not n.startswith("symbol found by a Tree-sitter scan")]
        notes.append(SCAN_NOTE)
        return DefinitionResult(
            query=symbol,
            definitions=tuple(definitions),
            total=len(best),
            truncated=len(best) > params.max_results,
            server=None,
            answered_by="index",
            notes=tuple(notes),
        )

    def _served(self, language: str) -> bool:
        """Whether a language server will answer for ``language`` (the index answers while it starts)."""
        if language not in self._available:
            refused = dict.fromkeys(self._config.project.untrusted_languages, ("", ""))
            specs = resolve_servers(
                self._config.intel,
                self._config.workspace_path,
                refused,
                only={language},
                trusted=self._config.project.trusted is True,
            )
            self._available[language] = any(spec.available and language in spec.languages for spec in specs)
        return self._available[language]

    def _definition(self, match: SymbolMatch, max_chars: int) -> Definition | None:
        absolute = self._paths.root / match.path
        lines = _shown_lines(absolute)
        if lines is None:
            return None  # the workspace's answer says why (or quotes the location alone)
        line, column = name_position(lines, match)
        line_text = lines[line - 1].rstrip("\r") if 1 <= line <= len(lines) else ""
        end = column + len(match.name)
        shown, inside = self._paths.display(absolute)
        location = Location(
            path=shown,
            in_workspace=inside,
            range=SourceRange(
                start_line=line,
                start_column=min(column, len(line_text) + 1),
                end_line=line,
                end_column=min(end, len(line_text) + 1),
            ),
            line_text=line_text.strip()[:_MAX_LINE_TEXT] or None,
        )
        source = "\n".join(lines[match.start_line - 1 : match.end_line])
        return Definition(
            location=location,
            symbol=match.qualified_name,
            kind=match.kind,
            source=_excerpt(source, max_chars) if source else None,
            source_truncated=bool(source) and len(source) > max_chars,
        )
