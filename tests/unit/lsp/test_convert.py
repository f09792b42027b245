"""Daemon positions (1-based, code points) <-> LSP positions (0-based, negotiated encoding)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.workspace import PositionCodec

from daemon.core.intel_models import Location, SourceRange
from daemon.core.models import Chunk, ChunkKind, SearchHit, SearchMode, SearchResult, SymbolKind
from daemon.lsp.convert import PositionMapper, symbol_information


def _mapper(tmp_path: Path, encoding: types.PositionEncodingKind = types.PositionEncodingKind.Utf16) -> PositionMapper:
    (tmp_path / "emoji.py").write_text('x = "😋"; y = 1\n', encoding="utf-8")
    return PositionMapper(tmp_path, PositionCodec(encoding))


def test_columns_after_an_astral_character_count_two_utf16_units(tmp_path: Path) -> None:
    mapper = _mapper(tmp_path)
    # "y" is the 11th code point (column 11, 1-based) and the 12th UTF-16 unit
    assert mapper.position("emoji.py", 1, 11) == types.Position(line=0, character=11)
    assert mapper.from_client("emoji.py", types.Position(line=0, character=11)) == (1, 11)


def test_utf32_clients_get_code_point_columns(tmp_path: Path) -> None:
    mapper = _mapper(tmp_path, types.PositionEncodingKind.Utf32)
    assert mapper.position("emoji.py", 1, 11) == types.Position(line=0, character=10)


def test_locations_become_file_uris_with_converted_ranges(tmp_path: Path) -> None:
    mapper = _mapper(tmp_path)
    location = mapper.location(
        Location(path="emoji.py", range=SourceRange(start_line=1, start_column=11, end_line=1, end_column=12))
    )
    assert location.uri == (tmp_path / "emoji.py").as_uri()
    assert (location.range.start.character, location.range.end.character) == (11, 12)


def test_a_fresh_mapper_rereads_a_file_that_changed(tmp_path: Path) -> None:
    mapper = _mapper(tmp_path)
    assert mapper.position("emoji.py", 1, 11).character == 11
    (tmp_path / "emoji.py").write_text("x = 1; y = 1\n", encoding="utf-8")
    assert mapper.fresh().position("emoji.py", 1, 11).character == 10


def _hit(name: str, qualified: str, kind: SymbolKind, part: int = 1) -> SearchHit:
    chunk = Chunk(
        path="src/a.py", kind=ChunkKind.CODE, symbol_kind=kind, language="python", text="...",
        start_line=3, end_line=5, name=name, qualified_name=qualified, part=part, parts=2 if part > 1 else 1,
    )  # fmt: skip
    return SearchHit(id=f"{qualified}-{part}", score=1.0, chunk=chunk)


def test_workspace_symbols_keep_fuzzy_matches_once_with_their_container(tmp_path: Path) -> None:
    result = SearchResult(
        query="area",
        hits=(
            _hit("area", "Circle.area", SymbolKind.METHOD),
            _hit("area", "Circle.area", SymbolKind.METHOD, part=2),
            _hit("perimeter", "Circle.perimeter", SymbolKind.METHOD),
            _hit("Circle", "Circle", SymbolKind.CLASS),
        ),
        mode=SearchMode.LEXICAL,
        embedded_fraction=0.0,
    )
    symbols = symbol_information(PositionMapper(tmp_path, PositionCodec()), result, "cir.ar", 10)
    assert [(s.name, s.kind, s.container_name) for s in symbols] == [("area", types.SymbolKind.Method, "Circle")]
    assert symbols[0].location.range.start == types.Position(line=2, character=0)
