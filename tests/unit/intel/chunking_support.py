"""Shared helpers of the chunking tests: fixture loading and the invariants every chunk list keeps."""

from __future__ import annotations

from pathlib import Path

from daemon.core.models import Chunk, SymbolKind
from daemon.intel.chunking import chunk_source

__all__ = ["FIXTURES", "assert_well_formed", "chunk_fixture", "fixture_bytes", "named", "only"]

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "chunking"


def fixture_bytes(family: str, name: str) -> bytes:
    return (FIXTURES / family / name).read_bytes()


def chunk_fixture(family: str, name: str, language: str, *, max_chunk_lines: int = 150) -> list[Chunk]:
    """Chunk a fixture as ``pkg/<name>`` and check the general invariants on the way."""
    source = fixture_bytes(family, name)
    chunks = chunk_source(f"pkg/{name}", source, language, max_chunk_lines=max_chunk_lines)
    assert_well_formed(chunks, source, max_chunk_lines=max_chunk_lines)
    return chunks


def named(chunks: list[Chunk]) -> dict[str, Chunk]:
    """Symbol chunks by qualified name (module/window chunks left out); names must be unique."""
    out: dict[str, Chunk] = {}
    for chunk in chunks:
        if chunk.symbol_kind in (SymbolKind.MODULE, SymbolKind.WINDOW) or chunk.part > 1:
            continue
        assert chunk.qualified_name is not None
        assert chunk.qualified_name not in out, f"duplicate {chunk.qualified_name}"
        out[chunk.qualified_name] = chunk
    return out


def only(chunks: list[Chunk], kind: SymbolKind) -> list[Chunk]:
    return [c for c in chunks if c.symbol_kind is kind]


def assert_well_formed(chunks: list[Chunk], source: bytes, *, max_chunk_lines: int = 150) -> None:
    """Sorted, non-blank, in range, and every text line is a source line of the chunk's range, in order."""
    lines = source.decode("utf-8", "replace").replace("\r\n", "\n").split("\n")
    starts = [c.start_line for c in chunks]
    assert starts == sorted(starts), "chunks are not ordered by start line"
    for chunk in chunks:
        assert chunk.text.strip(), f"blank chunk {chunk.qualified_name}"
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines), chunk
        assert 1 <= chunk.part <= chunk.parts
        text_lines = chunk.text.split("\n")
        if chunk.part > 1 and chunk.symbol_kind not in (SymbolKind.MODULE, SymbolKind.WINDOW):
            assert text_lines[0].endswith(f"(part {chunk.part}/{chunk.parts})"), text_lines[0]
            text_lines = text_lines[1:]
        if chunk.parts > 1:
            assert len(chunk.text.split("\n")) <= max_chunk_lines, "a part is longer than max_chunk_lines"
        assert text_lines[0] == lines[chunk.start_line - 1], f"{chunk.qualified_name}: first line is off"
        if chunk.part == chunk.parts:
            assert text_lines[-1] in lines[chunk.start_line - 1 : chunk.end_line], chunk.qualified_name
        window = iter(lines[chunk.start_line - 1 : chunk.end_line])
        assert all(any(line == candidate for candidate in window) for line in text_lines), (
            f"{chunk.qualified_name}: text is not made of its range's lines in order"
        )
