"""The AST context map of a code workflow: functions, classes and imports of the relevant files.

Built with the same Tree-sitter chunkers as the index, from the files' current text, so it never
lags behind an edit. Document workflows never ask for it (no static analysis on documents).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from daemon.core.languages import language_for_path
from daemon.core.models import ChunkKind, SymbolKind
from daemon.intel.chunking import chunk_source
from daemon.retrieval.file_snapshot import FileSnapshot, SnapshotFile

__all__ = ["ast_context_map"]

logger = logging.getLogger(__name__)

_TYPES = {SymbolKind.CLASS, SymbolKind.INTERFACE, SymbolKind.STRUCT, SymbolKind.ENUM, SymbolKind.TRAIT}
_MAX_FILE_BYTES = 1_000_000


def _outline(rel: str, taken: SnapshotFile, max_symbols: int) -> list[str] | None:
    if taken.real is None or not taken.is_file or taken.secret is not None:
        return None
    language = language_for_path(rel)
    if language is None:
        return None
    if taken.data is None:
        logger.info("no AST map for %s: %s", rel, taken.error)
        return None
    data = taken.data[:_MAX_FILE_BYTES]
    chunks = [c for c in chunk_source(rel, data, language) if c.kind is ChunkKind.CODE and c.part == 1]
    if not chunks:
        return None
    imports = sorted({i for c in chunks for i in c.imports})
    lines = [f"{rel} ({language})"]
    if imports:
        shown = ", ".join(imports[:12]) + (f", ... ({len(imports)} in all)" if len(imports) > 12 else "")
        lines.append(f"  imports: {shown}")
    for chunk in chunks[:max_symbols]:
        if chunk.symbol_kind in (SymbolKind.WINDOW, SymbolKind.MODULE):
            continue
        label = "class" if chunk.symbol_kind in _TYPES else chunk.symbol_kind.value
        signature = (chunk.signature or chunk.qualified_name or chunk.name or "?").splitlines()[0][:160]
        lines.append(
            f"  {label} {chunk.qualified_name or chunk.name} L{chunk.start_line}-{chunk.end_line}: {signature}"
        )
    return lines


def ast_context_map(
    root: Path,
    paths: Sequence[str],
    *,
    max_files: int = 8,
    max_symbols: int = 40,
    files: FileSnapshot | None = None,
) -> str | None:
    """The outline of up to ``max_files`` of ``paths`` (blocking: run it in a thread); None if none parsed.
    ``files``: the retrieval's snapshot of the workspace files under ``root`` (a new one when None)."""
    files = files if files is not None else FileSnapshot(root)
    blocks: list[str] = []
    for rel in dict.fromkeys(paths):
        if len(blocks) >= max_files:
            break
        try:
            lines = files.derived(rel, f"outline {max_symbols}", partial(_outline, rel, max_symbols=max_symbols))
        except OSError as exc:
            logger.info("no AST map for %s: %s", rel, exc)
            continue
        if lines:
            blocks.append("\n".join(lines))
    return "\n".join(blocks) if blocks else None
