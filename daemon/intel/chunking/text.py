"""Line windows for files without structure, and the fallback of every other chunker.

A window holds ``text_window_lines`` lines and overlaps the previous one by ``OVERLAP`` lines (at
most a quarter of the window), so a passage cut at a window edge is whole in one of the two.
Blank lines at a window's edges are trimmed (line numbers stay exact); blank windows are dropped.
Every window is ``symbol_kind=WINDOW``, ``name`` = the file name's stem, ``qualified_name`` = the
path without its extension, ``part``/``parts`` = its position among the file's windows.

Kind rule for ``language="text"``: prose is ``DOCS``, everything else ``CODE``. Prose = the
extensions ``.txt .text .adoc .asciidoc .org .tex .rtf .rst .md`` and well-known prose names
without extension (``README``, ``LICENSE``, ``CHANGELOG``, ``AUTHORS``, ``NOTICE``, ...), except
``requirements*.txt`` and ``CMakeLists.txt``, which are config. Config, data, scripts, build files
and sources of languages without a grammar (``.toml .yaml .json .ini .cfg .sh .sql .rb``,
``Dockerfile``, ``Makefile``, ``bin/tool``, ...) are ``CODE``.
"""

from __future__ import annotations

from daemon.core.models import Chunk, ChunkKind, SymbolKind
from daemon.intel.chunking._common import ChunkSpec, SourceText, module_name, piece_chunks

__all__ = ["OVERLAP", "text_kind", "window_chunks"]

OVERLAP = 5

_PROSE_EXTENSIONS = frozenset({".txt", ".text", ".adoc", ".asciidoc", ".org", ".tex", ".rtf", ".rst", ".md"})
_PROSE_NAMES = frozenset(
    {
        "readme", "license", "licence", "copying", "notice", "authors", "contributors", "changelog",
        "changes", "history", "news", "todo", "thanks", "install", "contributing",
    }
)  # fmt: skip


def text_kind(path: str) -> ChunkKind:
    """``DOCS`` for prose files, ``CODE`` for config/script-like ones (see the module docstring)."""
    name = path.rsplit("/", 1)[-1].lower()
    if name.startswith("requirements") or name == "cmakelists.txt":
        return ChunkKind.CODE
    dot = name.rfind(".")
    if dot > 0 and name[dot:] in _PROSE_EXTENSIONS:
        return ChunkKind.DOCS
    return ChunkKind.DOCS if name.split(".", 1)[0] in _PROSE_NAMES else ChunkKind.CODE


def window_chunks(
    path: str,
    source: bytes | SourceText,
    *,
    language: str,
    kind: ChunkKind,
    window_lines: int,
) -> list[Chunk]:
    """Overlapping line windows over the whole file."""
    src = source if isinstance(source, SourceText) else SourceText(source)
    lines = src.lines
    total = len(lines)
    window = max(2, window_lines)
    overlap = min(OVERLAP, window // 4)
    step = window - overlap
    ranges: list[tuple[int, int]] = []
    start = 0
    while start < total:
        first, last = src.trim(start, min(start + window, total) - 1)
        if first <= last and (not ranges or last > ranges[-1][1]):
            ranges.append((first, last))
        if start + window >= total:
            break
        start += step
    stem, base = module_name(path)
    spec = ChunkSpec(path=path, language=language, kind=kind)
    pieces = [(src.rows_text(first, last), first, last) for first, last in ranges]
    return list(piece_chunks(spec, pieces, symbol_kind=SymbolKind.WINDOW, name=stem, qualified_name=base))
