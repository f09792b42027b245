"""Translation between the daemon's API models and LSP wire types.

The daemon speaks workspace-relative paths, 1-based lines and 1-based columns counted in code
points; LSP speaks URIs, 0-based lines and columns in the negotiated encoding (UTF-16 by default).
Columns are converted against the text on disk, which is what the daemon answered about. The
functions here read files, so handlers call them off the event loop (``asyncio.to_thread``).
"""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import PositionCodec

from daemon.core.intel_models import (
    IntelStatus,
    Location,
    SourceRange,
)
from daemon.core.models import IndexStatus, SearchHit, SearchResult, SymbolKind
from daemon.core.regular_files import read_regular_text
from daemon.errors import DaemonError
from daemon.lsp import protocol as wire
from daemon.service.wire.api import IndexChanged

__all__ = [
    "PREVIEW_CHARS",
    "PREVIEW_LINES",
    "PositionMapper",
    "index_changed",
    "index_status",
    "search_result",
    "symbol_information",
]


PREVIEW_LINES = 8
PREVIEW_CHARS = 600

_SYMBOL_KINDS: dict[SymbolKind, types.SymbolKind] = {
    SymbolKind.FUNCTION: types.SymbolKind.Function,
    SymbolKind.METHOD: types.SymbolKind.Method,
    SymbolKind.CLASS: types.SymbolKind.Class,
    SymbolKind.INTERFACE: types.SymbolKind.Interface,
    SymbolKind.STRUCT: types.SymbolKind.Struct,
    SymbolKind.ENUM: types.SymbolKind.Enum,
    SymbolKind.TRAIT: types.SymbolKind.Interface,
    SymbolKind.IMPL: types.SymbolKind.Object,
    SymbolKind.TYPE: types.SymbolKind.TypeParameter,
    SymbolKind.MODULE: types.SymbolKind.Module,
    SymbolKind.NAMESPACE: types.SymbolKind.Namespace,
}


class PositionMapper:
    """Paths <-> URIs and daemon positions <-> LSP positions for one workspace and one client."""

    def __init__(self, root: Path, codec: PositionCodec) -> None:
        self.root = root
        self._codec = codec
        self._lines: dict[Path, list[str]] = {}

    def fresh(self) -> PositionMapper:
        """The same mapping with an empty line cache: one per request, so edits on disk are seen."""
        return PositionMapper(self.root, self._codec)

    # -- paths ----------------------------------------------------------------------------------

    def absolute(self, path: str) -> Path:
        candidate = Path(path)
        return candidate if candidate.is_absolute() else self.root / candidate

    def uri(self, path: str) -> str:
        return from_fs_path(str(self.absolute(path))) or f"file://{self.absolute(path)}"

    def path_of(self, uri: str) -> str:
        """The file system path of a ``file:`` URI (the daemon accepts absolute paths inside the workspace)."""
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if not path:
            raise JsonRpcInvalidParams(f"textDocument.uri must be a file: URI, got {uri!r}")
        return path

    # -- positions ------------------------------------------------------------------------------

    def _file_lines(self, path: str) -> list[str]:
        absolute = self.absolute(path)
        lines = self._lines.get(absolute)
        if lines is None:
            try:
                lines = read_regular_text(absolute).splitlines()
            except OSError:
                lines = []
            self._lines[absolute] = lines
        return lines

    def position(self, path: str, line: int, column: int) -> types.Position:
        """1-based line and code-point column -> LSP position."""
        lines = self._file_lines(path)
        zero = types.Position(line=max(line - 1, 0), character=max(column - 1, 0))
        if zero.line >= len(lines):
            return zero
        return self._codec.position_to_client_units(lines, zero)

    def range(self, path: str, source: SourceRange) -> types.Range:
        return types.Range(
            start=self.position(path, source.start_line, source.start_column),
            end=self.position(path, source.end_line, source.end_column),
        )

    def location(self, location: Location) -> types.Location:
        return types.Location(uri=self.uri(location.path), range=self.range(location.path, location.range))

    def from_client(self, path: str, position: types.Position) -> tuple[int, int]:
        """LSP position -> (1-based line, 1-based code-point column)."""
        lines = self._file_lines(path)
        if position.line >= len(lines):
            return position.line + 1, position.character + 1
        server = self._codec.position_from_client_units(lines, types.Position(position.line, position.character))
        return server.line + 1, server.character + 1


# -- index results (line-granular: no column conversion, no file reads) --------------------------


def _line_range(start_line: int, end_line: int) -> types.Range:
    """Whole lines ``start_line..end_line`` (1-based, inclusive) as an LSP range."""
    return types.Range(
        start=types.Position(line=start_line - 1, character=0), end=types.Position(line=end_line, character=0)
    )


def _preview(text: str) -> str:
    lines = text.splitlines()[:PREVIEW_LINES]
    preview = "\n".join(lines)
    return preview if len(preview) <= PREVIEW_CHARS else preview[: PREVIEW_CHARS - 1] + "…"


def search_hit(mapper: PositionMapper, hit: SearchHit, *, include_text: bool) -> wire.SearchHitItem:
    chunk = hit.chunk
    return wire.SearchHitItem(
        location=types.Location(uri=mapper.uri(chunk.path), range=_line_range(chunk.start_line, chunk.end_line)),
        path=chunk.path,
        score=hit.score,
        kind=chunk.kind.value,
        symbol_kind=chunk.symbol_kind.value,
        language=chunk.language,
        name=chunk.name,
        qualified_name=chunk.qualified_name,
        signature=chunk.signature,
        preview=_preview(chunk.text),
        text=chunk.text if include_text else None,
        sources=list(hit.sources),
    )


def search_result(mapper: PositionMapper, result: SearchResult, *, include_text: bool) -> wire.IndexSearchResult:
    return wire.IndexSearchResult(
        query=result.query,
        mode=result.mode.value,
        hits=[search_hit(mapper, hit, include_text=include_text) for hit in result.hits],
        embedded_fraction=result.embedded_fraction,
        reranked=result.reranked,
        matches=result.matches.value,
        notes=list(result.notes),
        seconds=result.seconds,
    )


def _fuzzy(query: str, name: str) -> bool:
    """Every character of the query appears in the name, in order (case-insensitive)."""
    remaining = iter(name.lower())
    return all(ch in remaining for ch in query.lower() if not ch.isspace())


def symbol_information(
    mapper: PositionMapper, result: SearchResult, query: str, limit: int
) -> list[types.SymbolInformation]:
    """Named code chunks whose qualified name fuzzy-matches the query; one per symbol (first part)."""
    seen: set[tuple[str, str]] = set()
    symbols: list[types.SymbolInformation] = []
    for hit in result.hits:
        chunk = hit.chunk
        kind = _SYMBOL_KINDS.get(chunk.symbol_kind)
        if kind is None or not chunk.name:
            continue
        qualified = chunk.qualified_name or chunk.name
        if (chunk.path, qualified) in seen or not _fuzzy(query, qualified):
            continue
        seen.add((chunk.path, qualified))
        container = qualified.rpartition(".")[0] or None
        symbols.append(
            types.SymbolInformation(
                name=chunk.name,
                kind=kind,
                location=types.Location(
                    uri=mapper.uri(chunk.path), range=_line_range(chunk.start_line, chunk.end_line)
                ),
                container_name=container,
            )
        )
        if len(symbols) >= limit:
            break
    return symbols


def index_status(status: IntelStatus) -> wire.IndexStatusResult:
    """The workspace's status as its daemon answered it (the front's ``Workspace.status``)."""
    index: IndexStatus | None = status.index
    daemon = status.daemon
    if index is None or daemon is None:
        raise DaemonError(status.index_note or f"no daemon reported the index of {status.workspace}")
    return wire.IndexStatusResult(
        workspace=status.workspace,
        ready=index.ready,
        reason=index.reason,
        busy=daemon.busy,
        files_indexed=index.files_indexed,
        chunks=index.chunks,
        embedded=index.embedded,
        embedded_fraction=index.embedded_fraction,
        dense_model=index.dense_model,
        last_update=index.last_update,
        store=index.store,
        state_dir=index.state_dir,
        daemon_pid=daemon.pid,
        clients=len(daemon.clients),
        watching=daemon.watching,
    )


def index_changed(mapper: PositionMapper, changed: IndexChanged) -> wire.IndexChangedParams:
    report = changed.report
    return wire.IndexChangedParams(
        paths=list(changed.paths),
        uris=[mapper.uri(p) for p in changed.paths],
        files_indexed=report.files_indexed,
        files_removed=report.files_removed,
        chunks_written=report.chunks_written,
        chunks_deleted=report.chunks_deleted,
        seconds=report.seconds,
    )
