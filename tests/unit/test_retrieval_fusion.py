"""Fusion on crafted overlaps: dedup, near duplicates (real embedding model), merging, budgets (real tokenizer)."""

from __future__ import annotations

import pytest

from daemon.config import EmbeddingConfig, default_cache_root
from daemon.core.models import Chunk, ChunkKind, SymbolKind
from daemon.index.embedder import FastembedEmbedder
from daemon.retrieval.fusion import Fusion, fit_budget
from daemon.retrieval.models import Attribution, Candidate, SourceName, WorkflowKind
from daemon.retrieval.tokens import WordPieceCounter, load_token_counter
from daemon.retrieval.validation import grounded
from daemon.retrieval.vectors import EmbedderVectors

FILE = [f"line {i}" for i in range(1, 41)]


def _cand(ident: str, first: int, last: int, *, query: str = "line", rank: int = 1, path: str = "a.py") -> Candidate:
    text = "\n".join(FILE[first - 1 : last])
    chunk = Chunk(
        path=path,
        kind=ChunkKind.CODE,
        symbol_kind=SymbolKind.FUNCTION,
        language="python",
        text=text,
        start_line=first,
        end_line=last,
        name=ident,
        qualified_name=ident,
    )
    attribution = Attribution(path=path, start_line=first, end_line=last, symbol=ident, ast_type="function")
    return Candidate(
        id=ident,
        source=SourceName.CODE,
        text=text,
        attribution=attribution,
        score=1.0,
        rank=rank,
        query=query,
        chunk=chunk,
    )


def test_the_same_chunk_from_two_queries_is_one_piece_with_both_queries() -> None:
    pieces, folded = Fusion(workflow=WorkflowKind.CODE).rank(
        [_cand("f", 1, 3, query="first"), _cand("f", 1, 3, query="second", rank=4)]
    )
    assert [p.id for p in pieces] == ["f"]
    assert pieces[0].queries == ("first", "second")
    assert folded == []


def test_equal_text_under_two_ids_is_deduplicated_and_the_fold_is_recorded() -> None:
    twin = _cand("g", 1, 3, path="b.py")
    pieces, folded = Fusion(workflow=WorkflowKind.CODE).rank([_cand("f", 1, 3), twin])
    assert len(pieces) == 1 and pieces[0].merged_from == ("g",)
    assert [(r.id, r.step) for r in folded] == [("g", "dedup")]


def test_adjacent_and_overlapping_chunks_of_one_file_merge_into_one_verbatim_piece() -> None:
    pieces, folded = Fusion(workflow=WorkflowKind.CODE).rank(
        [_cand("f", 1, 5), _cand("g", 4, 8, rank=2), _cand("h", 9, 10, rank=3), _cand("far", 30, 31, rank=4)]
    )
    merged = next(p for p in pieces if p.id == "f")
    assert (merged.attribution.start_line, merged.attribution.end_line) == (1, 10)
    assert merged.text == "\n".join(FILE[0:10])
    assert merged.attribution.symbol == "f + g + h"
    assert {p.id for p in pieces} == {"f", "far"}
    assert sorted((r.id, r.step) for r in folded) == [("g", "merge"), ("h", "merge")]


def test_a_chunk_inside_another_is_folded_into_it() -> None:
    pieces, _ = Fusion(workflow=WorkflowKind.CODE).rank([_cand("cls", 1, 20), _cand("method", 5, 8, rank=2)])
    assert len(pieces) == 1 and pieces[0].attribution.end_line == 20 and pieces[0].merged_from == ("method",)


def test_scores_are_normalized_and_the_query_named_symbol_ranks_first() -> None:
    pieces, _ = Fusion(workflow=WorkflowKind.CODE).rank(
        [
            _cand("other", 1, 2, query="apply discount", rank=1),
            _cand("apply_discount", 20, 22, query="apply discount", rank=2),
        ]
    )
    assert pieces[0].id == "apply_discount" and pieces[0].score == 1.0
    assert 0 < pieces[1].score < 1.0


def test_budget_keeps_whole_pieces_in_score_order_and_records_each_cut() -> None:
    counter = load_token_counter(EmbeddingConfig())
    assert isinstance(counter, WordPieceCounter)
    pieces, _ = Fusion(workflow=WorkflowKind.CODE).rank(
        [_cand("a", 1, 12), _cand("b", 15, 16, rank=2), _cand("c", 25, 27, rank=3)]
    )
    sizes = {p.id: counter.count(f"# {p.attribution.cite()}\n{p.text}") for p in pieces}
    budget = sizes["b"] + sizes["c"]
    assert sizes["a"] > budget - sizes["b"]
    kept, cuts, used = fit_budget(pieces, budget, counter)
    assert pieces[0].id == "a" and {p.id for p in kept} == {"b", "c"}
    assert [c.id for c in cuts] == ["a"] and cuts[0].step == "budget"
    assert used == sum(p.tokens for p in kept) == budget
    assert all(p.text in "\n".join(FILE) for p in kept)  # whole chunks, never cut


@pytest.fixture(scope="module")
def embedder() -> FastembedEmbedder:
    return FastembedEmbedder.from_config(EmbeddingConfig(threads=1), default_cache_root())


def _code(ident: str, text: str, first: int, *, name: str | None = None) -> Candidate:
    lines = text.count("\n") + 1
    chunk = Chunk(
        path="m.py",
        kind=ChunkKind.CODE,
        symbol_kind=SymbolKind.FUNCTION,
        language="python",
        text=text,
        start_line=first,
        end_line=first + lines - 1,
        name=name or ident,
        qualified_name=name or ident,
    )
    attribution = Attribution(path="m.py", start_line=first, end_line=first + lines - 1, symbol=name or ident)
    return Candidate(id=ident, source=SourceName.CODE, text=text, attribution=attribution, score=1.0, chunk=chunk)


def test_near_duplicates_by_stored_model_vectors_are_one_piece(embedder: FastembedEmbedder) -> None:
    body = "def total(items):\n    s = 0\n    for item in items:\n        s += item.price * item.quantity\n    return s"
    copy = body.replace("s += item.price * item.quantity", "s+=item.price*item.quantity")  # reformatted
    unrelated = "def parse_header(line):\n    key, _, value = line.partition(':')\n    return key.strip(), value"
    fusion = Fusion(workflow=WorkflowKind.CODE, vectors=EmbedderVectors(embedder))
    pieces, folded = fusion.rank(
        [_code("total", body, 1), _code("total_copy", copy, 20, name="total"), _code("parse", unrelated, 40)]
    )
    assert {p.id for p in pieces} == {"total", "parse"}
    assert [(r.id, r.step) for r in folded] == [("total_copy", "near_duplicate")]


def test_grounding_accepts_a_slice_with_skipped_lines_and_rejects_changed_text() -> None:
    assert grounded("line 2\nline 4", FILE[0:5])
    assert not grounded("line 2\nline 99", FILE[0:5])
    assert not grounded("line 4\nline 2", FILE[0:5])
