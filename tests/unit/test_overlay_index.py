"""The in-memory overlay index: the run's chunks found with the index's own chunker and ranking, paths masked."""

from __future__ import annotations

from daemon.core.models import (
    Chunk,
    ChunkKind,
    MatchConfidence,
    SearchFilters,
    SearchHit,
    SearchMode,
    SearchResult,
    SymbolKind,
)
from daemon.index.overlay import OverlayIndex
from daemon.retrieval.run_overlay import merge_results

CALC = (
    b'def add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    """Product of two numbers."""\n    return a * b\n'
)
README = b"# Calc\n\nA tiny calculator: add and multiply numbers.\n"


def test_a_put_file_is_chunked_by_symbol_and_found_by_its_words() -> None:
    overlay = OverlayIndex()
    assert overlay.put("src/calc.py", CALC) == 2
    result = overlay.search("multiply two numbers", k=5)
    assert result.hits and result.hits[0].chunk.name == "multiply"
    assert result.hits[0].chunk.path == "src/calc.py"
    assert result.mode is SearchMode.LEXICAL and result.matches is not MatchConfidence.NONE
    assert overlay.masked == {"src/calc.py"}


def test_filters_narrow_by_kind_and_path_glob() -> None:
    overlay = OverlayIndex()
    overlay.put("src/calc.py", CALC)
    overlay.put("README.md", README)
    docs = overlay.search("multiply numbers", k=5, filters=SearchFilters(kind=ChunkKind.DOCS))
    assert {h.chunk.path for h in docs.hits} == {"README.md"}
    code = overlay.search("multiply numbers", k=5, filters=SearchFilters(path_glob="src/*"))
    assert {h.chunk.path for h in code.hits} == {"src/calc.py"}


def test_replacing_dropping_and_restoring_a_file() -> None:
    overlay = OverlayIndex()
    overlay.put("src/calc.py", CALC)
    overlay.put("src/calc.py", b"def divide(a, b):\n    return a / b\n")
    assert not overlay.search("multiply", k=5).hits  # the old text is gone from the overlay
    assert overlay.search("divide", k=5).hits[0].chunk.name == "divide"
    overlay.drop("src/calc.py")
    assert overlay.masked == {"src/calc.py"} and not overlay.search("divide", k=5).hits
    overlay.restore("src/calc.py")
    assert overlay.masked == frozenset() and overlay.chunk_count == 0


def test_nothing_matches_an_unrelated_query() -> None:
    overlay = OverlayIndex()
    overlay.put("src/calc.py", CALC)
    result = overlay.search("websocket reconnect backoff", k=5)
    assert not result.hits and result.matches is MatchConfidence.NONE


def _hit(path: str, score: float, text: str) -> SearchHit:
    chunk = Chunk(
        path=path,
        kind=ChunkKind.CODE,
        symbol_kind=SymbolKind.FUNCTION,
        language="python",
        text=text,
        start_line=1,
        end_line=2,
    )
    return SearchHit(id=f"{path}:{text}", score=score, chunk=chunk)


def test_merging_drops_the_masked_originals_and_interleaves_by_score() -> None:
    base = SearchResult(
        query="q",
        hits=(_hit("src/calc.py", 1.5, "def multiply(a, b)"), _hit("src/other.py", 1.2, "def other(x)")),
        mode=SearchMode.LEXICAL,
        embedded_fraction=0.0,
    )
    overlay = SearchResult(
        query="q",
        hits=(_hit("src/calc.py", 1.4, "def multiply(a, b, c)"),),
        mode=SearchMode.LEXICAL,
        embedded_fraction=0,
    )
    merged = merge_results(base, overlay, frozenset({"src/calc.py", "src/gone.py"}), k=5)
    assert [h.chunk.text for h in merged.hits] == ["def multiply(a, b, c)", "def other(x)"]
    assert any("run overlay" in n and "1 hit(s) of their original version left out" in n for n in merged.notes)
