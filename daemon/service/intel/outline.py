"""A file's outline as the ``document_symbols`` tool answers it: nesting kept to ``depth``, bounded
in characters, with notes that say what was left out and how to get it."""

from __future__ import annotations

from daemon.core.intel_models import SymbolInfo, SymbolsResult
from daemon.intel.lsp.convert import FlatSymbols

__all__ = ["budgeted_symbols", "chunk_outline", "outline_result"]


def _nesting(symbol: SymbolInfo) -> int:
    return 1 + (symbol.container.count(".") + 1 if symbol.container else 0)


def chunk_outline(symbols: list[SymbolInfo], total: int, *, depth: int | None, max_results: int) -> FlatSymbols:
    """The Tree-sitter chunker's symbols (the fallback outline) kept to ``depth`` and ``max_results``."""
    kept = [s for s in symbols if depth is None or _nesting(s) <= depth]
    return FlatSymbols(symbols=kept[:max_results], total=total, deeper=len(symbols) - len(kept))


def budgeted_symbols(symbols: list[SymbolInfo], max_chars: int | None) -> list[SymbolInfo]:
    """The leading symbols whose JSON fits in ``max_chars`` (all of them when None)."""
    if max_chars is None:
        return symbols
    used = 0
    for count, symbol in enumerate(symbols):
        used += len(symbol.model_dump_json(exclude_defaults=True)) + 1
        if used > max_chars:
            return symbols[:count]
    return symbols


def outline_result(
    query: str,
    flat: FlatSymbols,
    *,
    depth: int | None,
    max_chars: int | None,
    server: str | None,
    notes: list[str],
) -> SymbolsResult:
    """The answer for ``flat``: the symbols that fit ``max_chars``, and ``notes`` plus what was omitted."""
    symbols = budgeted_symbols(flat.symbols, max_chars)
    if flat.locals:
        notes.append(f"{flat.locals} parameters/locals inside functions omitted (include_locals=true lists them)")
    if flat.deeper:
        notes.append(f"{flat.deeper} symbols nested deeper than {depth} omitted (raise depth to list them)")
    listed = len(flat.symbols)
    if len(symbols) < listed:
        notes.append(
            f"{listed - len(symbols)} more symbols omitted to stay within max_chars={max_chars} "
            f"(continue after line {symbols[-1].location.range.start_line if symbols else 1}, or raise max_chars)"
        )
    elif listed < flat.total - flat.locals - flat.deeper:
        notes.append(f"{flat.total - flat.locals - flat.deeper - listed} more symbols omitted (max_results)")
    return SymbolsResult(
        query=query,
        symbols=tuple(symbols),
        total=flat.total,
        truncated=flat.total > len(symbols),
        server=server,
        notes=tuple(notes),
    )
