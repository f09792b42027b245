"""Search: the query analysed, lexical and dense candidates ranked as one list, then an optional rerank.

The query is analysed once (:mod:`daemon.index.query_analysis`: weighted terms, the names and
paths it mentions); the store gives the lexical ranker's top ``LEXICAL_CANDIDATES`` and, when dense
vectors are ready, the dense ranker's top; :func:`daemon.index.ranking.rank` orders them (file
evidence, what the query names, priors by kind of file) and says how sure it is (``matches``). A
query of several lines is ranked a second time by its first line alone (lexical candidates of its
own), and :func:`daemon.index.ranking.fuse_headline` makes the two orders one. The ranking then runs
again with the best files complete: the store gives each ranker's top chunks of the first ranking's
best ``COMPLETED_FILES`` files, so a function of the right file that did not make the workspace-wide
top ``LEXICAL_CANDIDATES`` is still ranked on its own evidence (on the SWE-bench-Lite dev set, with
vectors, FnR@10 0.636 to 0.684 over 51 instances: ``bench/localization.py``, docs/search.md).

With ``search.ranker = "learned"`` (or ``"auto"``, for queries of one line) the final candidates are
ordered by the learned ranker over the same evidence (:func:`daemon.index.ranking.rank_learned`); the
first ranking, which only chooses the files to complete, stays the formula's.

A search never waits for embedding: while vectors are filling (under ``DENSE_MIN_FRACTION`` of the
chunks embedded), a hybrid search ranks lexically unless every chunk of the files of its best
``COVERED_HEAD`` lexical candidates already has its vector (the likeliest files are embedded first,
:mod:`daemon.index.embed_order`), so its answer is fast and the same for the same query on the same
index; its notes say how complete the vectors are and whether they took part.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from daemon.core.models import MatchConfidence, SearchFilters, SearchHit, SearchMode, SearchResult
from daemon.core.ports import DenseEmbedder, Reranker, ScoredChunk, SparseEncoder, StoreQuery, VectorStore
from daemon.errors import EmbeddingUnavailable, InvalidToolInput
from daemon.index.query_analysis import MAX_QUERY_CHARS, AnalyzedQuery, analyze_query
from daemon.index.ranking import CONFIDENCE_HEAD, Scorer, confidence, fuse_headline, rank, rank_features, rank_learned

__all__ = ["DENSE_MIN_FRACTION", "LEXICAL_CANDIDATES", "MAX_K", "HybridSearcher"]


LEXICAL_CANDIDATES = 400
DENSE_MIN_FRACTION = 0.95
MAX_K = 1000
COVERED_HEAD = 20
"""While vectors fill, dense joins a hybrid search once the files of its best this many lexical candidates
are embedded whole (``HybridSearcher._covered``)."""
COMPLETED_FILES = 3
"""How many of the first ranking's best files are completed (see ``HybridSearcher._ranked``)."""
COMPLETION_DEPTH = 200
"""How many chunks of those files each ranker adds at most."""
FIRST_FILES_FROM = 60
"""The first ranking's best files are read from its first this many hits (at least ``k``)."""


@dataclass(frozen=True, kw_only=True)
class HybridSearcher:
    """Answers queries over one store. ``embedder``/``reranker`` are None when unavailable."""

    store: VectorStore
    sparse: SparseEncoder
    embedder: DenseEmbedder | None
    reranker: Reranker | None
    prefetch: int
    """Candidates each ranker gives at least (``search.prefetch``; ``LEXICAL_CANDIDATES`` when more)."""
    rerank_top_n: int
    """How many of the ranked hits the reranker reorders."""
    ranker: Scorer | None = None
    """The learned ranker that orders the final candidates (``search.ranker``); None: the formula."""
    ranker_scope: str = "all"
    """``all``: the learned ranker orders every query; ``questions``: only queries of one line (a question, a
    title, a name), with or without vectors, while a text of several lines (an issue) keeps the formula."""
    ranker_note: str | None = None
    """Why the learned ranker asked for is not used (its model could not be loaded), said in every answer."""

    def search(
        self,
        query: str,
        *,
        k: int,
        filters: SearchFilters | None = None,
        mode: SearchMode = SearchMode.HYBRID,
        rerank: bool = True,
    ) -> SearchResult:
        """Rank the workspace for ``query``; never waits for embedding (see the module doc).

        Raises:
            InvalidToolInput: an empty query, or ``k`` under 1.
        """
        started = time.perf_counter()
        if not query.strip():
            raise InvalidToolInput("the query is empty: give words or code to search for")
        if k < 1:
            raise InvalidToolInput(f"k must be at least 1 (got {k})")
        notes: list[str] = [self.ranker_note] if self.ranker_note else []
        if k > MAX_K:
            notes.append(f"k={k} is more than {MAX_K}: {MAX_K} hits at most")
            k = MAX_K
        analyzed = analyze_query(query, self.sparse.tokenize)
        if analyzed.truncated:
            notes.append(f"the query is longer than {MAX_QUERY_CHARS:,} characters: only its start was used")
        total = self.store.count()
        embedded = self.store.count(embedded_only=True)
        fraction = 1.0 if total == 0 else embedded / total
        depth = max(k, self.prefetch, LEXICAL_CANDIDATES)
        dense_ready = self.embedder is not None and embedded > 0
        early: list[ScoredChunk] | None = None  # the lexical candidates, when they decide whether dense joins
        if mode is SearchMode.HYBRID and dense_ready and fraction < DENSE_MIN_FRACTION:
            early = self._top(StoreQuery(sparse=self.sparse.encode_terms(analyzed.terms), filters=filters, limit=depth))
            dense_ready = self._covered(early)
            notes.append(_partial_note(fraction, dense_ready))
        dense: list[float] | None = None
        if mode in (SearchMode.HYBRID, SearchMode.DENSE) and dense_ready and self.embedder is not None:
            try:
                dense = self.embedder.embed_query(analyzed.text)  # the query model loads on first use
            except EmbeddingUnavailable as exc:
                notes.append(f"the dense model is unavailable ({exc}): lexical ranking only")
        use_sparse = mode in (SearchMode.HYBRID, SearchMode.LEXICAL)
        if mode is not SearchMode.LEXICAL and dense is None:
            if not dense_ready and (self.embedder is None or embedded == 0):
                notes.append("no dense vectors available: lexical ranking only")
            use_sparse = True
        elif mode is SearchMode.DENSE and fraction < 1.0:
            notes.append(f"dense vectors cover {fraction:.0%} of chunks; the rest are not searched")
        sparse = self.sparse.encode_terms(analyzed.terms) if use_sparse else None
        if sparse is not None and not sparse.indices:
            sparse = None
            notes.append("the query has no searchable terms for the lexical ranker")
        actual = (
            SearchMode.HYBRID
            if sparse is not None and dense is not None
            else SearchMode.DENSE
            if dense is not None
            else SearchMode.LEXICAL
        )
        lexical_query = StoreQuery(sparse=sparse, filters=filters, limit=depth)
        dense_query = StoreQuery(dense=dense, filters=filters, limit=depth)
        lexical = early if early is not None and sparse is not None else self._top(lexical_query)
        dense_hits = self._top(dense_query)
        reranking = self.reranker is not None and rerank
        # what is used of the ranked list: the hits, the head confidence reads, what the reranker reorders
        used = max(k, CONFIDENCE_HEAD, self.rerank_top_n if reranking else 0)
        scored = self._ranked(analyzed, (lexical_query, lexical), (dense_query, dense_hits), limit=used)
        matches = confidence(
            analyzed,
            scored,
            self.sparse.tokenize,
            dense_top=max((h.score for h in dense_hits), default=None),
        )
        if matches is MatchConfidence.NONE:
            notes.append("nothing in the index matches the query: the hits, if any, are unrelated")
        reranked = False
        if reranking and scored:
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
            matches=matches,
            notes=tuple(notes),
            seconds=time.perf_counter() - started,
        )

    def _covered(self, lexical: list[ScoredChunk]) -> bool:
        """Whether every chunk of the files of the best ``COVERED_HEAD`` lexical candidates has its dense
        vector: then the dense evidence is fair between the chunks that decide the answer, though the
        workspace's vectors are not complete (the likeliest files are embedded first, ``embed_order``)."""
        files = tuple(dict.fromkeys(s.chunk.path for s in lexical[:COVERED_HEAD]))
        return bool(files) and not self.store.missing_dense(1, files)

    def _top(self, request: StoreQuery) -> list[ScoredChunk]:
        """The store's answer to ``request`` without a tie cut by its limit (nothing, at no cost, when
        the request carries no vector)."""
        return _whole_ties(self.store.query(request), request.limit)

    def _ranked(
        self,
        analyzed: AnalyzedQuery,
        lexical: tuple[StoreQuery, list[ScoredChunk]],
        dense: tuple[StoreQuery, list[ScoredChunk]],
        *,
        limit: int,
    ) -> list[ScoredChunk]:
        """Each ranker's candidates (with the request that gave them) ranked, then ranked again with the
        best files complete (:meth:`_candidates`); by the learned ranker when there is one."""
        first, final = self._candidates(analyzed, lexical, dense, first_limit=max(limit, FIRST_FILES_FROM))
        lex, den, headline = final or first.candidates
        if self.ranker is not None and (self.ranker_scope == "all" or analyzed.headline is None):
            return rank_learned(
                self.ranker, analyzed, lex, den, headline=headline, tokenize=self.sparse.tokenize, limit=limit
            )
        if final is None:
            return first.ranked[:limit]  # the best files were complete already: the second ranking is the first
        return _formula(analyzed, lex, den, headline, limit)

    def _candidates(
        self,
        analyzed: AnalyzedQuery,
        lexical: tuple[StoreQuery, list[ScoredChunk]],
        dense: tuple[StoreQuery, list[ScoredChunk]],
        *,
        first_limit: int,
    ) -> tuple[_First, _Candidates | None]:
        """The first ranking (the formula's) and the candidates with the best files complete (None when
        the completion found nothing new).

        With a headline (and lexical candidates), each ranking is fused with the headline's own lexical
        candidates ranked alone. The first ranking names the best ``COMPLETED_FILES`` files; each ranker
        then gives its top ``COMPLETION_DEPTH`` chunks of those files, so that every function of the best
        files is ranked on all its evidence, not only those that made the whole workspace's top."""
        (lexical_query, lexical_hits), (dense_query, dense_hits) = lexical, dense
        head = analyzed.headline
        head_sparse = self.sparse.encode_terms(head.terms) if head is not None and lexical_hits else None
        headline: list[ScoredChunk] | None = None
        if head is not None and head_sparse is not None and head_sparse.indices:
            headline = rank(head, self._top(replace(lexical_query, sparse=head_sparse)))
        first = _First(
            _formula(analyzed, lexical_hits, dense_hits, headline, first_limit), (lexical_hits, dense_hits, headline)
        )
        best = tuple(dict.fromkeys(s.chunk.path for s in first.ranked))[:COMPLETED_FILES]
        if not best:
            return first, None
        more_lexical = _missing(lexical_hits, self._top(replace(lexical_query, paths=best, limit=COMPLETION_DEPTH)))
        more_dense = _missing(dense_hits, self._top(replace(dense_query, paths=best, limit=COMPLETION_DEPTH)))
        if not more_lexical and not more_dense:
            return first, None
        return first, (lexical_hits + more_lexical, dense_hits + more_dense, headline)

    def candidate_features(
        self, query: str, *, mode: SearchMode = SearchMode.LEXICAL, filters: SearchFilters | None = None
    ) -> tuple[list[ScoredChunk], list[list[float]]]:
        """Every final candidate of ``query`` (what :meth:`search` ranks, in the formula's order) with its
        feature row (:data:`daemon.index.ranking.FEATURES`): the learned ranker's training data
        (``bench/ranker_data.py``). Lexical unless ``mode`` is hybrid and vectors are complete."""
        analyzed = analyze_query(query, self.sparse.tokenize)
        sparse = self.sparse.encode_terms(analyzed.terms)
        if not sparse.indices:
            return [], []
        dense: list[float] | None = None
        total, embedded = self.store.count(), self.store.count(embedded_only=True)
        if mode is not SearchMode.LEXICAL and self.embedder is not None and total and embedded / total >= 0.95:
            dense = self.embedder.embed_query(analyzed.text)
        lexical_query = StoreQuery(sparse=sparse, filters=filters, limit=max(self.prefetch, LEXICAL_CANDIDATES))
        dense_query = StoreQuery(dense=dense, filters=filters, limit=max(self.prefetch, LEXICAL_CANDIDATES))
        lexical = (lexical_query, self._top(lexical_query))
        first, final = self._candidates(analyzed, lexical, (dense_query, self._top(dense_query)), first_limit=60)
        lex, den, headline = final or first.candidates
        return rank_features(analyzed, lex, den, headline=headline, tokenize=self.sparse.tokenize)

    def _rerank(self, query: str, scored: list[ScoredChunk]) -> list[ScoredChunk]:
        assert self.reranker is not None
        head = scored[: self.rerank_top_n]
        scores = self.reranker.score(query, [s.chunk.text for s in head])
        order = sorted(range(len(head)), key=lambda i: scores[i], reverse=True)
        reranked = [
            ScoredChunk(id=head[i].id, score=float(scores[i]), chunk=head[i].chunk, sources=head[i].sources)
            for i in order
        ]
        return reranked + scored[self.rerank_top_n :]


_Candidates = tuple[list[ScoredChunk], list[ScoredChunk], list[ScoredChunk] | None]
"""Lexical candidates, dense candidates, and the headline's ranking (None without a headline)."""


@dataclass(frozen=True)
class _First:
    ranked: list[ScoredChunk]
    candidates: _Candidates


def _formula(
    analyzed: AnalyzedQuery,
    lexical: list[ScoredChunk],
    dense: list[ScoredChunk],
    headline: list[ScoredChunk] | None,
    limit: int,
) -> list[ScoredChunk]:
    if headline is None:
        return rank(analyzed, lexical, dense, limit=limit)
    return fuse_headline(rank(analyzed, lexical, dense), headline, limit=limit)


def _partial_note(fraction: float, covered: bool) -> str:
    if covered:
        return (
            f"dense vectors cover {fraction:.0%} of chunks, and all of the files of this query's best lexical "
            "candidates: ranked with them"
        )
    return f"dense vectors cover {fraction:.0%} of chunks: lexical ranking until they are complete"


def _missing(candidates: list[ScoredChunk], more: list[ScoredChunk]) -> list[ScoredChunk]:
    """The chunks of ``more`` that ``candidates`` lacks (the same ranker's scores: one scale)."""
    seen = {s.id for s in candidates}
    return [s for s in more if s.id not in seen]


def _whole_ties(candidates: list[ScoredChunk], depth: int) -> list[ScoredChunk]:
    """The candidates without a tie cut by the store's limit: when the list is full, the chunks that
    score exactly as its last one may be only some of those that do (the store picks them by its own
    layout, which a restart changes), so they are left out. File evidence then never depends on the
    store's layout. A list of nothing but ties is kept whole."""
    if len(candidates) < depth or not candidates:
        return candidates
    last = candidates[-1].score
    kept = [c for c in candidates if c.score != last]
    return kept or candidates
