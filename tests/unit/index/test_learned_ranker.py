"""The learned ranker's seam: the features the formula computes, the model file, and the fallback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from daemon.config import load_config
from daemon.core.models import Chunk, ChunkKind, SearchMode, SymbolKind
from daemon.core.ports import ScoredChunk
from daemon.index.learned_ranker import RankerModelError, learned_ranker, load_ranker, parse_model
from daemon.index.query_analysis import analyze_query
from daemon.index.ranking import FEATURES, fuse_headline, rank, rank_features, rank_learned
from daemon.index.sparse import CodeBm25Encoder
from daemon.index.workspace_index import WorkspaceIndex

_TOKENIZE = CodeBm25Encoder().tokenize


def _hit(pid: str, score: float, path: str = "pkg/mod.py", qualified: str | None = None) -> ScoredChunk:
    qualified = qualified or pid
    chunk = Chunk(
        path=path,
        kind=ChunkKind.CODE,
        symbol_kind=SymbolKind.METHOD if "." in qualified else SymbolKind.FUNCTION,
        language="python",
        text=f"def {qualified.rsplit('.', 1)[-1]}():\n    pass\n",
        start_line=1,
        end_line=2,
        name=qualified.rsplit(".", 1)[-1],
        qualified_name=qualified,
    )
    return ScoredChunk(id=pid, score=score, chunk=chunk, sources=("lexical",))


_CANDIDATES = [
    _hit("a", 9.0, "pkg/session.py", "Session.send"),
    _hit("b", 8.0, "pkg/session.py", "Session.resolve_redirects"),
    _hit("c", 7.5, "tests/test_session.py", "test_redirects"),
    _hit("d", 3.0, "pkg/models.py", "Response.is_redirect"),
]


def _column(rows: list[list[float]], name: str) -> list[float]:
    return [r[FEATURES.index(name)] for r in rows]


def _model(trees: list[dict[str, list[Any]]], **extra: Any) -> dict[str, Any]:
    return {"format": "ided-ranker", "version": 1, "features": list(FEATURES), "trees": trees, **extra}


def _stump(feature: str, threshold: float, low: float, high: float) -> dict[str, list[Any]]:
    return {
        "feature": [FEATURES.index(feature), -1, -1],
        "threshold": [threshold, 0.0, 0.0],
        "left": [1, 0, 0],
        "right": [2, 0, 0],
        "value": [0.0, low, high],
    }


def test_the_features_come_in_the_formulas_own_order_with_what_the_formula_read() -> None:
    query = analyze_query("how does `resolve_redirects` follow redirects", _TOKENIZE)
    candidates, rows = rank_features(query, _CANDIDATES, tokenize=_TOKENIZE)
    assert [c.id for c in candidates] == [c.id for c in rank(query, _CANDIDATES)]
    assert all(len(r) == len(FEATURES) for r in rows)
    by_id = {c.id: r for c, r in zip(candidates, rows, strict=True)}
    assert by_id["b"][FEATURES.index("name")] == 1.0 and by_id["a"][FEATURES.index("name")] == 0.0
    assert by_id["c"][FEATURES.index("test")] == 1.0 and by_id["c"][FEATURES.index("prior")] == 0.5
    assert by_id["a"][FEATURES.index("lexical")] == 1.0
    assert by_id["d"][FEATURES.index("lexical")] == pytest.approx(1 / 3)
    assert by_id["b"][FEATURES.index("method")] == 1.0 and by_id["c"][FEATURES.index("function")] == 1.0
    assert by_id["b"][FEATURES.index("name_cover")] > 0 and by_id["a"][FEATURES.index("name_cover")] == 0.0
    assert max(_column(rows, "formula")) == 1.0


def test_with_a_headline_the_features_follow_the_fused_order_and_carry_the_headlines_share() -> None:
    query = analyze_query("Redirects are not followed\nSession.send returns the 302", _TOKENIZE)
    headline = rank(analyze_query("Redirects are not followed", _TOKENIZE), [_hit("d", 5.0, "pkg/models.py")])
    candidates, rows = rank_features(query, _CANDIDATES, headline=headline, tokenize=_TOKENIZE)
    fused = fuse_headline(rank(query, _CANDIDATES), headline)
    assert [c.id for c in candidates] == [c.id for c in fused]
    share = dict(zip((c.id for c in candidates), _column(rows, "headline"), strict=True))
    assert share["d"] == 1.0 and share["a"] == 0.0


def test_a_learned_ranking_orders_by_the_models_score_and_shows_it() -> None:
    query = analyze_query("follow redirects", _TOKENIZE)
    model = parse_model(_model([_stump("test", 0.5, 0.0, 2.0), _stump("lexical", 0.9, 0.0, 0.5)]), name="t")
    ranked = rank_learned(model, query, _CANDIDATES, tokenize=_TOKENIZE)
    assert ranked[0].id == "c"  # the test chunk: 2.0 + 0.0
    assert ranked[0].score == 2.0 and ranked[1].id == "a" and ranked[1].score == 0.5
    assert [s.id for s in rank_learned(model, query, _CANDIDATES, limit=2)] == ["c", "a"]


def test_the_numpy_walk_follows_every_branch_of_a_deeper_tree() -> None:
    # lexical <= 0.5 ? (name <= 0.5 ? 1 : 2) : (test <= 0.5 ? 3 : 4)
    tree = {
        "feature": [FEATURES.index("lexical"), FEATURES.index("name"), FEATURES.index("test"), -1, -1, -1, -1],
        "threshold": [0.5, 0.5, 0.5, 0, 0, 0, 0],
        "left": [1, 3, 5, 0, 0, 0, 0],
        "right": [2, 4, 6, 0, 0, 0, 0],
        "value": [0, 1.0, 2.0, 0, 0, 0, 0],
    }
    tree["value"] = [0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0]
    model = parse_model(_model([tree], max_depth=3), name="t")
    row = [0.0] * len(FEATURES)

    def at(lexical: float, name: float, test: float) -> list[float]:
        r = list(row)
        r[FEATURES.index("lexical")], r[FEATURES.index("name")], r[FEATURES.index("test")] = lexical, name, test
        return r

    assert model.score([at(0.2, 0, 0), at(0.2, 1, 0), at(0.9, 0, 0), at(0.9, 0, 1), at(0.5, 1, 1)]) == [
        1.0,
        2.0,
        3.0,
        4.0,
        2.0,
    ]
    assert model.score([]) == []


def test_a_tree_of_one_leaf_and_trees_of_unequal_depth_score_together() -> None:
    deep = {
        "feature": [FEATURES.index("lexical"), -1, FEATURES.index("name"), -1, FEATURES.index("test"), -1, -1],
        "threshold": [0.5, 0, 0.5, 0, 0.5, 0, 0],
        "left": [1, 0, 3, 0, 5, 0, 0],
        "right": [2, 0, 4, 0, 6, 0, 0],
        "value": [0, 10.0, 0, 20.0, 0, 30.0, 40.0],
    }
    leaf = {"feature": [-1], "threshold": [0.0], "left": [0], "right": [0], "value": [0.5]}
    model = parse_model(_model([deep, leaf, _stump("test", 0.5, 100.0, 200.0)]), name="t")
    assert model.depth == 3

    def at(lexical: float, name: float, test: float) -> list[float]:
        r = [0.0] * len(FEATURES)
        r[FEATURES.index("lexical")], r[FEATURES.index("name")], r[FEATURES.index("test")] = lexical, name, test
        return r

    assert model.score([at(0, 0, 0), at(1, 0, 0), at(1, 1, 0), at(1, 1, 1), at(0, 1, 1)]) == [
        110.5,
        120.5,
        130.5,
        240.5,
        210.5,
    ]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        (json.dumps({"format": "other", "version": 1}), "not an ided-ranker model"),
        (json.dumps(_model([])), "no trees"),
        (json.dumps({**_model([]), "features": ["lexical"], "trees": [{}]}), "other features"),
        (json.dumps(_model([{"feature": [0], "threshold": [0]}])), "has no 'left'"),
        (json.dumps(_model([{**_stump("lexical", 0.5, 0, 1), "left": [7, 0, 0]}])), "outside its 3 nodes"),
        (json.dumps(_model([{**_stump("lexical", 0.5, 0, 1), "value": [0, "x", 1]}])), "not a number"),
        (json.dumps(_model([{**_stump("lexical", 0.5, 0, 1), "feature": [999, -1, -1]}])), "does not list"),
        (json.dumps(_model([{**_stump("lexical", 0.5, 0, 1), "left": [0, 0, 0]}])), "is not a tree"),
        (json.dumps(_model([{**_stump("lexical", 0.5, 0, 1), "right": [1, 0, 0]}])), "is not a tree"),
    ],
)
def test_a_corrupted_model_file_is_a_clear_error(tmp_path: Path, text: str, says: str) -> None:
    file = tmp_path / "model.json"
    file.write_text(text)
    with pytest.raises(RankerModelError) as caught:
        load_ranker(file)
    assert says in caught.value.message and str(file) in caught.value.message


def test_a_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RankerModelError, match="cannot read the ranker model"):
        load_ranker(tmp_path / "absent.json")


def test_the_bundled_model_loads_and_scores_rows_of_the_rankings_features() -> None:
    model = load_ranker()
    assert model.features == FEATURES
    assert model.meta["name"] == "ranker-v1" and model.meta["trained_on"]
    assert not set(model.meta["trained_on"]) & set(model.meta["held_out"])
    assert not any(
        r.split("+")[-1] in {"django", "sympy", "requests", "scikit-learn"} for r in model.meta["trained_on"]
    )
    assert len(model.score([[0.0] * len(FEATURES), [1.0] * len(FEATURES)])) == 2


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "session.py").write_text(
        "class Session:\n"
        "    def send(self, request):\n        return self.adapter.send(request)\n\n"
        "    def resolve_redirects(self, response):\n        '''Follow redirects.'''\n"
        "        while response.is_redirect:\n"
        "            response = self.send(response.next)\n        return response\n"
    )
    return ws


def test_search_with_a_corrupted_model_ranks_by_the_formula_and_says_why(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    (ws / "broken.json").write_text("{broken")
    overrides: dict[str, Any] = {
        "state_dir": str(tmp_path / "state"),
        "embedding": {"enabled": False},
        "search": {"ranker": "learned", "ranker_model": "broken.json"},
    }
    config = load_config(ws, overrides=overrides)
    assert learned_ranker(config)[0] is None
    with WorkspaceIndex.open(config) as index:
        index.index()
        result = index.search("follow redirects", k=3, mode=SearchMode.LEXICAL)
    assert result.hits and result.hits[0].chunk.qualified_name == "Session.resolve_redirects"
    assert any("learned ranker is unavailable" in n and "not valid JSON" in n for n in result.notes)


def test_auto_ranks_questions_of_one_line_by_the_model_and_texts_of_several_lines_by_the_formula(
    tmp_path: Path,
) -> None:
    ws = _workspace(tmp_path)
    (ws / "tests").mkdir()
    (ws / "tests" / "test_session.py").write_text("def test_redirects():\n    assert run()\n")
    model = tmp_path / "tests-first.json"
    model.write_text(json.dumps(_model([_stump("test", 0.5, 0.0, 5.0)])))
    overrides: dict[str, Any] = {
        "state_dir": str(tmp_path / "state"),
        "embedding": {"enabled": False},
        "search": {"ranker": "auto", "ranker_model": str(model)},
    }
    with WorkspaceIndex.open(load_config(ws, overrides=overrides)) as index:
        index.index()
        question = index.search("follow redirects", k=3, mode=SearchMode.LEXICAL)
        issue = index.search("follow redirects\nThe session does not follow redirects.", k=3, mode=SearchMode.LEXICAL)
    assert question.hits[0].chunk.path == "tests/test_session.py"  # the model: tests first
    assert issue.hits[0].chunk.qualified_name == "Session.resolve_redirects"  # the formula: tests weigh half


def test_auto_ranks_a_question_by_the_model_with_vectors_too_and_an_issue_by_the_formula(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    (ws / "tests").mkdir()
    (ws / "tests" / "test_session.py").write_text("def test_redirects():\n    assert run()\n")
    model = tmp_path / "tests-first.json"
    model.write_text(json.dumps(_model([_stump("test", 0.5, 0.0, 5.0)])))
    overrides: dict[str, Any] = {
        "state_dir": str(tmp_path / "state"),
        "search": {"ranker": "auto", "ranker_model": str(model)},
    }
    with WorkspaceIndex.open(load_config(ws, overrides=overrides)) as index:
        index.index()
        assert index.embed() > 0
        hybrid = index.search("follow redirects", k=3, mode=SearchMode.HYBRID)
        issue = index.search("follow redirects\nThe session does not follow redirects.", k=3, mode=SearchMode.HYBRID)
    assert hybrid.mode is SearchMode.HYBRID and issue.mode is SearchMode.HYBRID
    assert hybrid.hits[0].chunk.path == "tests/test_session.py"  # the model: tests first
    assert issue.hits[0].chunk.qualified_name == "Session.resolve_redirects"  # the formula: tests weigh half


def test_search_with_the_learned_ranker_answers_without_a_note(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    overrides: dict[str, Any] = {
        "state_dir": str(tmp_path / "state"),
        "embedding": {"enabled": False},
        "search": {"ranker": "learned"},
    }
    with WorkspaceIndex.open(load_config(ws, overrides=overrides)) as index:
        index.index()
        result = index.search("follow redirects", k=3, mode=SearchMode.LEXICAL)
    assert result.hits and not any("ranker" in n for n in result.notes)
    assert result.hits[0].chunk.qualified_name == "Session.resolve_redirects"


def test_the_model_orders_the_formulas_first_candidates_and_the_rest_follow_in_the_formulas_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("daemon.index.ranking.LEARNED_TOP", 2)
    query = analyze_query("follow redirects", _TOKENIZE)
    formula = [s.id for s in rank(query, _CANDIDATES)]
    lowest_first = parse_model(_model([_stump("lexical", 0.95, 1.0, 0.0)]), name="t")  # the best lexical last
    ranked = rank_learned(lowest_first, query, _CANDIDATES)
    assert [s.id for s in ranked[:2]] == formula[:2][::-1]  # the model's order within the first two
    assert [s.id for s in ranked[2:]] == formula[2:]  # the rest as the formula ordered them
