"""An in-memory index of a few files that stand in for their indexed versions: a run's overlay.

``OverlayIndex`` holds the chunks of the files a run changed (``put``: the file's new bytes;
``drop``: the file is gone) and answers searches over them with the workspace index's own parts:
the Tree-sitter chunker (``daemon.intel.chunking``), the code-aware BM25 encoder
(``daemon.index.sparse``), the query analysis and the ranking (``query_analysis``, ``ranking``). The
store's IDF is computed here over the overlay's chunks, with the formula Qdrant's IDF modifier uses
(``ln(1 + (N - df + 0.5) / (df + 0.5))``). There are no dense vectors: overlay search is lexical.

``masked`` is every path the overlay answers for (changed, added or deleted): a search that merges
the workspace index with the overlay drops the index's hits in those paths, so a changed file is
seen in its new version only and a deleted file not at all.

Blocking and not thread-safe: one owner (``daemon.retrieval.run_overlay``) serializes its calls.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable

from daemon.core.languages import language_for_path
from daemon.core.models import (
    Chunk,
    MatchConfidence,
    SearchFilters,
    SearchHit,
    SearchMode,
    SearchResult,
    chunk_point_id,
)
from daemon.core.ports import ScoredChunk, SparseVector
from daemon.index._payload import PathGlob
from daemon.index.query_analysis import analyze_query
from daemon.index.ranking import confidence, rank
from daemon.index.sparse import CodeBm25Encoder
from daemon.intel.chunking import chunk_source

__all__ = ["OverlayIndex"]


class _Entry:
    __slots__ = ("chunk", "id", "vector")

    def __init__(self, pid: str, chunk: Chunk, vector: SparseVector) -> None:
        self.id = pid
        self.chunk = chunk
        self.vector = dict(zip(vector.indices, vector.values, strict=True))


class OverlayIndex:
    """Chunks of changed files, searchable lexically; ``masked`` paths hide the workspace index's versions."""

    def __init__(self, *, max_chunk_lines: int = 150, encoder: CodeBm25Encoder | None = None) -> None:
        self._encoder = encoder or CodeBm25Encoder()
        self._max_chunk_lines = max_chunk_lines
        self._files: dict[str, list[_Entry]] = {}
        self._deleted: set[str] = set()
        self._df: Counter[int] = Counter()

    @property
    def masked(self) -> frozenset[str]:
        """Every path the overlay answers for: changed or added (searched here) and deleted (found nowhere)."""
        return frozenset(self._files) | frozenset(self._deleted)

    @property
    def chunk_count(self) -> int:
        return sum(len(entries) for entries in self._files.values())

    def put(self, path: str, data: bytes) -> int:
        """Index ``path`` (workspace-relative POSIX) as ``data``, replacing what the overlay had; its chunk count.

        A file no chunker reads (unknown language) is masked with no chunks.
        """
        self._forget(path)
        self._deleted.discard(path)
        language = language_for_path(path)
        chunks = (
            chunk_source(path, data, language, max_chunk_lines=self._max_chunk_lines) if language is not None else []
        )
        entries = [
            _Entry(chunk_point_id(path, i, c.chunk_hash), c, self._encoder.encode_document(c))
            for i, c in enumerate(chunks)
        ]
        for entry in entries:
            self._df.update(entry.vector.keys())
        self._files[path] = entries
        return len(entries)

    def drop(self, path: str) -> None:
        """``path`` no longer exists in the overlaid tree: masked, nothing found in it."""
        self._forget(path)
        self._deleted.add(path)

    def restore(self, path: str) -> None:
        """``path`` is as the workspace index has it again: neither searched here nor masked."""
        self._forget(path)
        self._deleted.discard(path)

    def paths(self) -> frozenset[str]:
        return frozenset(self._files)

    def clear(self) -> None:
        self._files.clear()
        self._deleted.clear()
        self._df.clear()

    def _forget(self, path: str) -> None:
        for entry in self._files.pop(path, []):
            self._df.subtract(entry.vector.keys())
        self._df = +self._df  # drop zero counts

    def search(self, query: str, *, k: int, filters: SearchFilters | None = None) -> SearchResult:
        """The overlay's best ``k`` chunks for ``query``, ranked as the workspace index ranks (lexical only)."""
        started = time.perf_counter()
        analyzed = analyze_query(query, self._encoder.tokenize)
        wanted = self._encoder.encode_terms(analyzed.terms)
        terms = dict(zip(wanted.indices, wanted.values, strict=True))
        candidates = list(self._candidates(filters))
        total = self.chunk_count  # IDF over the whole overlay, as the store's is over the whole collection
        idf = {t: math.log(1.0 + (total - self._df[t] + 0.5) / (self._df[t] + 0.5)) for t in terms}
        lexical: list[ScoredChunk] = []
        for entry in candidates:
            score = sum(w * entry.vector[t] * idf[t] for t, w in terms.items() if t in entry.vector)
            if score > 0:
                lexical.append(ScoredChunk(id=entry.id, score=score, chunk=entry.chunk, sources=("lexical",)))
        lexical.sort(key=lambda s: (-s.score, s.id))
        ranked = rank(analyzed, lexical)
        matches = confidence(analyzed, ranked, self._encoder.tokenize) if ranked else MatchConfidence.NONE
        hits = tuple(SearchHit(id=s.id, score=s.score, chunk=s.chunk, sources=s.sources) for s in ranked[: max(1, k)])
        return SearchResult(
            query=query,
            hits=hits,
            mode=SearchMode.LEXICAL,
            embedded_fraction=0.0,
            matches=matches,
            seconds=time.perf_counter() - started,
        )

    def _candidates(self, filters: SearchFilters | None) -> Iterable[_Entry]:
        glob = PathGlob.parse(filters.path_glob) if filters is not None and filters.path_glob else None
        for path, entries in self._files.items():
            if glob is not None and not glob.matches(path):
                continue
            for entry in entries:
                c = entry.chunk
                if filters is not None and filters.kind is not None and c.kind is not filters.kind:
                    continue
                if filters is not None and filters.language is not None and c.language != filters.language:
                    continue
                yield entry
