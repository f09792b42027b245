"""Hybrid search: BM25 sparse + dense prefetch fused with RRF, then optional cross-encoder rerank."""

from __future__ import annotations

import logging
import time

from daemon.core.models import SearchFilters, SearchHit, SearchMode, SearchResult
from daemon.core.ports import DenseEmbedder, Reranker, ScoredChunk, SparseEncoder, VectorStore

__all__ = ["HybridSearcher"]

logger = logging.getLogger(__name__)


class HybridSearcher:
    """Answers queries over one store. ``embedder``/``reranker`` are None when unavailable."""

    def __init__(
        self,
        *,
        store: VectorStore,
        sparse: SparseEncoder,
        embedder: DenseEmbedder | None,
        reranker: Reranker | None,
        prefetch: int,
        rerank_top_n: int,
    ) -> None:
        self._store = store
        self._sparse = sparse
        self._embedder = embedder
        self._reranker = reranker
        self._prefetch = prefetch
        self._rerank_top_n = rerank_top_n

    def search(
        self,
        query: str,
        *,
        k: int,
        filters: SearchFilters | None = None,
        mode: SearchMode = SearchMode.HYBRID,
        rerank: bool = True,
    ) -> SearchResult:
        started = time.perf_counter()
        notes: list[str] = []
        total = self._store.count()
        embedded = self._store.count(embedded_only=True)
        fraction = 1.0 if total == 0 else embedded / total
        use_dense = mode in (SearchMode.HYBRID, SearchMode.DENSE) and self._embedder is not None and embedded > 0
        use_sparse = mode in (SearchMode.HYBRID, SearchMode.LEXICAL)
        if mode is not SearchMode.LEXICAL and not use_dense:
            notes.append("no dense vectors available: lexical ranking only")
            use_sparse = True
        elif use_dense and fraction < 1.0:
            notes.append(f"dense vectors cover {fraction:.0%} of chunks; the rest rank lexically")
        sparse = self._sparse.encode_query(query) if use_sparse else None
        if sparse is not None and not sparse.indices:
            sparse = None
            notes.append("the query has no searchable terms for the lexical ranker")
        dense = self._embedder.embed_query(query) if use_dense and self._embedder is not None else None
        actual = (
            SearchMode.HYBRID
            if sparse is not None and dense is not None
            else SearchMode.DENSE
            if dense is not None
            else SearchMode.LEXICAL
        )
        scored: list[ScoredChunk] = []
        if sparse is not None or dense is not None:
            want = max(k, self._rerank_top_n) if self._reranker is not None and rerank else k
            scored = self._store.query(
                sparse=sparse, dense=dense, filters=filters, limit=want, prefetch_limit=max(self._prefetch, want)
            )
        reranked = False
        if self._reranker is not None and rerank and scored:
            scored = self._rerank(query, scored)
            reranked = True
        hits = tuple(
            SearchHit(id=s.id, score=s.score, chunk=s.chunk, sources=(*s.sources, *(("rerank",) if reranked else ())))
            for s in scored[:k]
        )
        return SearchResult(
            query=query,
            hits=hits,
            mode=actual,
            embedded_fraction=fraction,
            reranked=reranked,
            notes=tuple(notes),
            seconds=time.perf_counter() - started,
        )

    def _rerank(self, query: str, scored: list[ScoredChunk]) -> list[ScoredChunk]:
        assert self._reranker is not None
        head = scored[: self._rerank_top_n]
        scores = self._reranker.score(query, [s.chunk.text for s in head])
        order = sorted(range(len(head)), key=lambda i: scores[i], reverse=True)
        reranked = [
            ScoredChunk(id=head[i].id, score=float(scores[i]), chunk=head[i].chunk, sources=head[i].sources)
            for i in order
        ]
        return reranked + scored[self._rerank_top_n :]
