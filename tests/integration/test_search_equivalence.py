"""The search's shortcuts change no answer: on a real repository (a copy of this project's index
package and its search docs, indexed with the real grammars, BM25, embedding model and Qdrant Edge),
searches that take chunks, counts and stored paths from the store's memo rank exactly as searches
that read every candidate's payload, before and after a file is edited and re-indexed; and ranking
only the head of the list gives the head of the whole ranking."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from daemon.core.models import ChunkKind, SearchFilters, SearchMode, SearchResult, SymbolKind
from daemon.core.ports import StoreQuery
from daemon.index._store_base import PointStoreBase
from daemon.index.query_analysis import analyze_query
from daemon.index.ranking import rank
from daemon.index.searcher import LEXICAL_CANDIDATES
from daemon.index.workspace_index import WorkspaceIndex
from tests.integration.conftest import make_config

PROJECT = Path(__file__).resolve().parents[2]
QUERIES: list[tuple[str, SearchFilters | None, SearchMode, int]] = [
    ("remember decoded chunks between writes", None, SearchMode.HYBRID, 10),
    ("HybridSearcher.search ranks lexical and dense candidates", None, SearchMode.HYBRID, 3),
    ("def rank(query", SearchFilters(kind=ChunkKind.CODE), SearchMode.HYBRID, 8),
    ("path glob prefix match", SearchFilters(path_glob="index/store_*"), SearchMode.HYBRID, 5),
    ("tie cut by the store's limit", SearchFilters(path_glob="*sea?cher*"), SearchMode.LEXICAL, 4),
    ("how are vectors filled", SearchFilters(kind=ChunkKind.DOCS), SearchMode.HYBRID, 6),
    ("qdrant edge shard reload statistics", None, SearchMode.LEXICAL, 1),
]


def _workspace(root: Path) -> Path:
    shutil.copytree(PROJECT / "daemon" / "index", root / "index", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "docs").mkdir()
    for page in ("search.md", "architecture.md"):
        shutil.copy(PROJECT / "docs" / page, root / "docs" / page)
    return root


def _answers(ws: WorkspaceIndex) -> list[SearchResult]:
    return [ws.search(q, k=k, filters=f, mode=mode) for q, f, mode, k in QUERIES]


def _same(a: list[SearchResult], b: list[SearchResult]) -> None:
    for x, y in zip(a, b, strict=True):
        assert [(h.id, h.score, h.sources, h.chunk) for h in x.hits] == [
            (h.id, h.score, h.sources, h.chunk) for h in y.hits
        ], x.query
        assert (x.matches, x.mode, x.notes) == (y.matches, y.mode, y.notes), x.query


def _symbol_lines(answers: list[SearchResult], path: str) -> dict[str, int]:
    """The first line of each function, method or class of ``path`` among the hits."""
    kinds = {SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CLASS}
    return {
        h.chunk.qualified_name or "": h.chunk.start_line
        for r in answers
        for h in r.hits
        if h.chunk.path == path and h.chunk.symbol_kind in kinds
    }


def _without_memo(ws: WorkspaceIndex, store: PointStoreBase[Any, Any, Any]) -> list[SearchResult]:
    memo = store._memo
    store._memo = None  # every candidate's payload read and decoded, every count asked of the engine
    store._until_write.clear()
    try:
        return _answers(ws)
    finally:
        store._memo = memo


def test_searches_from_the_memo_rank_exactly_as_searches_that_read_every_payload(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    config = make_config(root, tmp_path / "state")
    with WorkspaceIndex.open(config) as ws:
        ws.index()
        ws.embed()
        store = ws._store
        assert isinstance(store, PointStoreBase) and store._memo is not None
        first = _answers(ws)  # fills the memo
        assert any(len(r.hits) == k for r, (_, _, _, k) in zip(first, QUERIES, strict=True))
        _same(first, _answers(ws))
        _same(first, _without_memo(ws, store))

        # an edit moves a function down (same text, so the same point id) and renames nothing else
        searcher = root / "index" / "searcher.py"
        searcher.write_text("# moved\n\n\n" + searcher.read_text(encoding="utf-8"), encoding="utf-8")
        ws.update_paths(["index/searcher.py"])
        edited = _answers(ws)
        _same(edited, _without_memo(ws, store))
        before, after = (_symbol_lines(answers, "index/searcher.py") for answers in (first, edited))
        assert before.keys() & after.keys()
        assert all(after[name] == before[name] + 3 for name in before.keys() & after.keys())


def test_ranking_only_the_head_gives_the_head_of_the_whole_ranking(tmp_path: Path) -> None:
    root = _workspace(tmp_path / "ws")
    config = make_config(root, tmp_path / "state", embedding={"enabled": False})
    with WorkspaceIndex.open(config) as ws:
        ws.index()
        store, sparse = ws._store, ws._sparse
        longest = 0
        for text, filters, _, _ in QUERIES:
            analyzed = analyze_query(text, sparse.tokenize)
            vector = sparse.encode_terms(analyzed.terms)
            lexical = store.query(
                StoreQuery(sparse=vector, filters=filters, limit=LEXICAL_CANDIDATES, prefetch_limit=0)
            )
            whole = rank(analyzed, lexical)
            longest = max(longest, len(whole))
            for limit in (1, 5, 10):
                assert rank(analyzed, lexical, limit=limit) == whole[:limit], text
        assert longest > 100  # real candidate lists, not a handful
