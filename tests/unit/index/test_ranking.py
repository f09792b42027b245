"""The ranking's own rules on hand-made candidates: the headline fusion, how a named file weighs, traceback
frames and class evidence."""

from __future__ import annotations

from dataclasses import replace

from daemon.core.models import Chunk, ChunkKind, SymbolKind
from daemon.core.ports import ScoredChunk
from daemon.index.query_analysis import analyze_query
from daemon.index.ranking import DEFAULT_WEIGHTS, fuse_headline, rank
from daemon.index.sparse import CodeBm25Encoder

_TOKENIZE = CodeBm25Encoder().tokenize


def _hit(
    pid: str, score: float, path: str = "pkg/mod.py", name: str | None = None, qualified: str | None = None
) -> ScoredChunk:
    name = name or pid
    chunk = Chunk(
        path=path,
        kind=ChunkKind.CODE,
        symbol_kind=SymbolKind.METHOD if qualified and "." in qualified else SymbolKind.FUNCTION,
        language="python",
        text=f"def {name}():\n    pass\n",
        start_line=1,
        end_line=2,
        name=name,
        qualified_name=qualified or name,
    )
    return ScoredChunk(id=pid, score=score, chunk=chunk, sources=("lexical",))


def test_a_query_of_several_lines_carries_its_first_line_analysed_alone() -> None:
    issue = analyze_query("Product pretty print could be improved\nThis is what `pprint(Product(1))` shows", _TOKENIZE)
    assert issue.headline is not None
    assert issue.headline.text == "Product pretty print could be improved"
    assert "pprint" not in issue.headline.terms and "pprint" in issue.terms
    assert analyze_query("merge the session settings", _TOKENIZE).headline is None
    assert analyze_query("\n\n  one line after blank lines  \n", _TOKENIZE).headline is None


def test_fusion_lifts_what_the_headline_ranks_first_and_keeps_the_whole_texts_order_otherwise() -> None:
    whole = [_hit("a", 10.0), _hit("b", 9.0), _hit("c", 8.0)]
    headline = [_hit("c", 4.0), _hit("d", 1.0)]
    fused = fuse_headline(whole, headline)
    # c: 0.8 + 0.25 * 1.0 = 1.05 beats a's 1.0; b keeps 0.9; d is found by the headline alone (0.0625)
    assert [s.id for s in fused] == ["c", "a", "b", "d"]
    assert fused[0].score == 1.05
    assert [s.id for s in fuse_headline(whole, headline, limit=2)] == ["c", "a"]
    assert [s.id for s in fuse_headline(whole, [])] == ["a", "b", "c"]


def test_fusion_breaks_ties_by_chunk_id_so_the_order_never_depends_on_the_input_order() -> None:
    one = fuse_headline([_hit("y", 1.0), _hit("x", 1.0)], [])
    other = fuse_headline([_hit("x", 1.0), _hit("y", 1.0)], [])
    assert [s.id for s in one] == [s.id for s in other] == ["x", "y"]


def test_a_named_file_weighs_less_when_the_query_names_many_files() -> None:
    candidates = [_hit("inside", 10.0, path="lib/core/engine.py"), _hit("elsewhere", 10.0, path="lib/other/util.py")]
    weights = DEFAULT_WEIGHTS

    def lift(query: str) -> float:
        ranked = {s.id: s.score for s in rank(analyze_query(query, _TOKENIZE), candidates, weights=weights)}
        return ranked["inside"] - ranked["elsewhere"]

    # "inside" scores 1 + path/sqrt(n) against 1.0, and each adds (file + klass) * its file's relative
    # score (one chunk per file, each function its own class)
    def expected(n: int) -> float:
        inside = 1.0 + weights.path / n**0.5
        lifts = weights.file + weights.klass
        return inside + lifts - (1.0 + lifts / inside)

    assert round(lift("it fails in core/engine.py"), 6) == round(expected(1), 6)
    assert round(lift("it fails in core/engine.py via a/one.py, b/two.py and c/three.py"), 6) == round(expected(4), 6)
    assert expected(1) > expected(4) > 0


_WINDOWS_TRACEBACK = """Array([]) fails
Traceback (most recent call last):
  File "C:\\Python310\\lib\\site-packages\\pkg\\array\\dense.py", line 130, in __new__
    return cls._new(iterable, shape)
  File "C:\\Python310\\lib\\site-packages\\pkg\\array\\ndim.py", line 127, in _scan_shape
    return f(iterable)
ValueError: not enough values to unpack
"""


def test_a_windows_traceback_gives_its_frames_with_forward_slashes() -> None:
    query = analyze_query(_WINDOWS_TRACEBACK, _TOKENIZE)
    assert query.frames == (
        ("C:/Python310/lib/site-packages/pkg/array/dense.py", "__new__"),
        ("C:/Python310/lib/site-packages/pkg/array/ndim.py", "_scan_shape"),
    )
    assert "C:/Python310/lib/site-packages/pkg/array/ndim.py" in query.paths


def test_a_traceback_frames_function_outranks_the_same_name_in_another_file() -> None:
    query = analyze_query(_WINDOWS_TRACEBACK, _TOKENIZE)
    framed = _hit("framed", 5.0, path="pkg/array/ndim.py", name="_scan_shape")
    namesake = _hit("namesake", 5.0, path="pkg/matrix/ndim.py", name="_scan_shape")
    ranked = {s.id: s.score for s in rank(query, [framed, namesake])}
    # both carry the name and the file name; only "framed" matches the frame's path on two components
    assert ranked["framed"] > ranked["namesake"]
    without = rank(query, [framed, namesake], weights=replace(DEFAULT_WEIGHTS, frame=0.0))
    assert round(ranked["framed"] - ranked["namesake"], 6) > round(without[0].score - without[1].score, 6)


def test_a_method_rises_with_the_best_chunk_of_its_class() -> None:
    query = analyze_query("isnull on a key transform matches JSON null", _TOKENIZE)
    candidates = [
        _hit("outline", 10.0, path="db/json.py", name="KeyTransformIsNull", qualified="KeyTransformIsNull"),
        _hit("sibling", 6.0, path="db/json.py", name="as_sql", qualified="KeyTransformExact.as_sql"),
        _hit("method", 5.5, path="db/json.py", name="as_oracle", qualified="KeyTransformIsNull.as_oracle"),
    ]
    order = [s.id for s in rank(query, candidates)]
    assert order == ["outline", "method", "sibling"]
    flat = [s.id for s in rank(query, candidates, weights=replace(DEFAULT_WEIGHTS, klass=0.0))]
    assert flat == ["outline", "sibling", "method"]


def test_hits_come_in_the_order_of_the_scores_they_show_whatever_their_file() -> None:
    query = analyze_query("parse the settings", _TOKENIZE)
    candidates = [
        _hit("a1", 10.0, path="pkg/a.py"),
        _hit("a2", 9.0, path="pkg/a.py"),
        _hit("a3", 1.0, path="pkg/a.py"),
        _hit("b1", 8.0, path="pkg/b.py"),
    ]
    ranked = rank(query, candidates)
    scores = [s.score for s in ranked]
    assert scores == sorted(scores, reverse=True)
    # a's weak third chunk is not listed above b's strong one because it shares the best file
    assert [s.id for s in ranked] == ["a1", "a2", "b1", "a3"]
