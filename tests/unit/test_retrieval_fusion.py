"""Fusion on crafted overlaps: dedup, near duplicates (real embedding model), merging, budgets (real tokenizer)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from daemon.config import EmbeddingConfig, default_cache_root
from daemon.core.models import Chunk, ChunkKind, SymbolKind
from daemon.index.embedder import OnnxEmbedder
from daemon.retrieval.fusion import Fusion, _widest, cosine, fit_budget
from daemon.retrieval.models import Attribution, Candidate, SourceName, WorkflowKind
from daemon.retrieval.outline import outline_text
from daemon.retrieval.tokens import WordPieceCounter, load_token_counter
from daemon.retrieval.validation import Validator, grounded
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
        [_cand("a", 1, 20), _cand("b", 22, 23, rank=2), _cand("c", 25, 27, rank=3)]
    )
    sizes = {p.id: counter.count(f"# {p.attribution.cite()}\n{p.text}") for p in pieces}
    outline = outline_text(pieces[0].text, pieces[0].attribution, pieces[0].chunks)
    assert outline is not None
    budget = counter.count(f"# {pieces[0].attribution.cite()}\n{outline}") + sizes["b"]
    assert sizes["a"] > budget
    kept, cuts, used = fit_budget(pieces, budget, counter)
    # the best piece does not fit whole: it is given as its outline, never cut mid-way
    assert pieces[0].id == "a" and kept[0].id == "a" and kept[0].outline
    assert kept[0].text.endswith("... (outline of 20 lines)")
    assert [p.id for p in kept[1:]] == ["b"] and not kept[1].outline
    assert [c.id for c in cuts] == ["c"] and cuts[0].step == "budget"  # fits in neither form: a recorded cut
    assert used == sum(p.tokens for p in kept) == budget
    assert all(p.text in "\n".join(FILE) for p in kept if not p.outline)  # whole chunks, never cut


@pytest.fixture(scope="module")
def embedder() -> OnnxEmbedder:
    return OnnxEmbedder.from_config(EmbeddingConfig(threads=1), default_cache_root())


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


def test_near_duplicates_by_stored_model_vectors_are_one_piece(embedder: OnnxEmbedder) -> None:
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


def test_without_a_model_lexical_overlap_moves_a_piece_past_its_neighbour_but_not_past_the_first() -> None:
    pieces, _ = Fusion(workflow=WorkflowKind.CODE).rank(
        [
            _cand("first", 1, 2, query="parse header value", rank=1),
            _cand("second", 5, 6, query="parse header value", rank=2, path="b.py"),
            _cand("third", 9, 10, query="parse header value", rank=3, path="parse/header/value.py"),
        ]
    )
    # only the third one's path holds the query's words: it passes the second, not the first
    assert [p.id for p in pieces] == ["first", "third", "second"]
    assert pieces[0].similarity is None and pieces[0].score == 1.0 > pieces[1].score > pieces[2].score


def _texts(*pairs: tuple[str, str]) -> list[Candidate]:
    """One code candidate per (name, text), each in its own file, ranked in the order given."""
    out: list[Candidate] = []
    for rank, (name, text) in enumerate(pairs, start=1):
        cand = _code(name, text, 1, name=name)
        chunk = cand.chunk
        assert chunk is not None
        moved = chunk.model_copy(update={"path": f"{name}.py"})
        attribution = cand.attribution.model_copy(update={"path": f"{name}.py"})
        out.append(replace(cand, chunk=moved, attribution=attribution, rank=rank, query=QUERY))
    return out


QUERY = "compute the checksum of a file in chunks"
CHECKSUM = """def digest(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for block in iter(lambda: f.read(65536), b''):
            h.update(block)
    return h.hexdigest()"""
COLOUR = """def to_rgb(colour):
    r, g, b = colour[1:3], colour[3:5], colour[5:7]
    return int(r, 16), int(g, 16), int(b, 16)"""
RETRY = "def backoff(attempt):\n    delay = min(30, 2 ** attempt)\n    time.sleep(delay + random.random())"


def test_with_the_model_the_piece_that_means_the_query_ranks_first_and_the_rest_fall_under_the_threshold(
    embedder: OnnxEmbedder,
) -> None:
    fusion = Fusion(workflow=WorkflowKind.CODE, vectors=EmbedderVectors(embedder))
    pieces, _ = fusion.rank(_texts(("to_rgb", COLOUR), ("digest", CHECKSUM), ("backoff", RETRY)))
    assert pieces[0].id == "digest" and pieces[0].score == 1.0  # lexically silent, ranked 2nd by the search
    similarity = {p.id: p.similarity or 0.0 for p in pieces}
    assert similarity["digest"] > similarity["to_rgb"] + 0.2 and similarity["digest"] > similarity["backoff"] + 0.2
    outcome = Validator(None, workflow=WorkflowKind.CODE, code_threshold=0.7, docs_threshold=0.6).validate(pieces)
    assert [p.id for p in outcome.passed] == ["digest"]
    assert {r.id for r in outcome.rejected} == {"to_rgb", "backoff"}
    assert all(r.step == "relevance" and "under the threshold 0.7" in r.reason for r in outcome.rejected)


def test_a_merged_piece_is_as_relevant_as_its_best_chunk(embedder: OnnxEmbedder) -> None:
    filler = "\n".join(f"def helper_{i}(x):\n    return x + {i}" for i in range(60))  # past the model's 256 tokens
    head = _code("helpers", filler, 1, name="helpers")
    lines = filler.count("\n") + 1
    tail = _code("digest", CHECKSUM, lines + 1, name="digest")
    fusion = Fusion(workflow=WorkflowKind.CODE, vectors=EmbedderVectors(embedder))
    alone, _ = fusion.rank([replace(tail, query=QUERY)])
    merged, folded = fusion.rank([replace(head, query=QUERY), replace(tail, query=QUERY, rank=2)])
    assert [r.step for r in folded] == ["merge"] and len(merged) == 1
    assert merged[0].similarity == pytest.approx(alone[0].similarity)


def test_a_searched_piece_under_the_similarity_floor_is_dropped_but_a_language_server_fact_is_not(
    embedder: OnnxEmbedder,
) -> None:
    fact = Candidate(
        id="lsp:references:to_rgb",
        source=SourceName.LSP,
        text="2 reference(s) to to_rgb in 1 file(s):\n- ui.py:3 in paint: r, g, b = to_rgb(c)",
        attribution=Attribution(ref="references", symbol="to_rgb"),
        score=1.0,
        query=QUERY,
        grounded_text=False,
    )
    fusion = Fusion(workflow=WorkflowKind.CODE, vectors=EmbedderVectors(embedder))
    pieces, _ = fusion.rank([*_texts(("to_rgb", COLOUR)), fact])
    floor = max(p.similarity or 0.0 for p in pieces) + 0.01
    validator = Validator(
        None, workflow=WorkflowKind.CODE, code_threshold=0.0, docs_threshold=0.0, min_similarity=floor
    )
    outcome = validator.validate(pieces)
    assert [p.id for p in outcome.passed] == ["lsp:references:to_rgb"]
    (rejected,) = outcome.rejected
    assert rejected.id == "to_rgb" and f"under the similarity floor {floor:g}" in rejected.reason


def test_two_chunks_of_one_file_merged_do_not_outrank_a_better_single_chunk() -> None:
    pieces, folded = Fusion(workflow=WorkflowKind.CODE).rank(
        [_cand("best", 1, 3, rank=1, path="b.py"), _cand("outer", 1, 8, rank=2), _cand("inner", 4, 6, rank=3)]
    )
    assert [r.step for r in folded] == ["merge"]
    assert [p.id for p in pieces] == ["best", "outer"]  # not 1/12 + 1/13 > 1/11: a class and its method are one
    assert pieces[1].fused == pytest.approx(1 / 12)


def test_a_piece_found_by_the_identifiers_of_the_task_is_measured_against_the_whole_task(
    embedder: OnnxEmbedder,
) -> None:
    task = "compute the checksum of a file in chunks with hashlib sha256"
    named = "hashlib sha256"  # the identifiers the task names: a part of the task
    uses_names = "def fingerprint(secret):\n    return hashlib.sha256(secret.encode()).hexdigest()"
    found = [replace(c, query=task) for c in _texts(("digest", CHECKSUM), ("to_rgb", COLOUR))] + [
        replace(_texts(("fingerprint", uses_names))[0], query=named, rank=1)
    ]
    vectors = EmbedderVectors(embedder)
    pieces, _ = Fusion(workflow=WorkflowKind.CODE, vectors=vectors).rank(found)
    by_id = {p.id: p for p in pieces}
    [task_vector, named_vector] = vectors.text_vectors([task, named]) or []
    stored = vectors.vectors(by_id["fingerprint"].chunks)
    [fingerprint_vector] = stored.values()
    # its similarity is its cosine to the task, not to the two words it spells out in full
    assert by_id["fingerprint"].similarity == pytest.approx(cosine(fingerprint_vector, task_vector))
    assert cosine(fingerprint_vector, named_vector) > cosine(fingerprint_vector, task_vector) + 0.1
    assert pieces[0].id == "digest"  # the function the task describes, not the one that uses its names


def test_a_query_is_its_own_widest_form_unless_a_longer_query_holds_all_of_its_terms() -> None:
    widest = _widest({"retry delay", "parse the retry delay header", "flush buffer", "retry"})
    assert widest == {
        "retry delay": "parse the retry delay header",
        "retry": "parse the retry delay header",
        "parse the retry delay header": "parse the retry delay header",
        "flush buffer": "flush buffer",
    }
