"""The VectorStore behaviour both adapters share, written once over a few engine primitives.

Qdrant Edge (``store_edge``) and qdrant-client (``store_qdrant``: a server, or local mode) store the
same points (``_payload``) and answer the same questions the same way: batched writes under one
write lock, delete by path, dense vectors attached vector first and flag second, missing-dense and
dense-by-hash lookups, filters with exact path globs, and hybrid queries fused here with
:func:`~daemon.index._payload.rrf_fuse`. What differs between the engines is only how a condition,
a filter, a point, a query and a page of records are spelled; a subclass supplies those as the
``_engine_*`` / ``_cond_*`` primitives below and never re-implements a protocol method.

Every primitive is called inside :func:`~daemon.index._payload.engine_errors`, so an engine
exception reaches the caller as a ``StoreError`` naming the store and the action.

**Decoded chunks are remembered** when this process is the store's only writer (Edge, local mode):
a search's candidates are hundreds of points, and reading each one's payload and decoding it into
a ``Chunk`` was most of a query's cost (about 30 µs a point with qdrant-edge-py 0.9.0, against 3 µs
for its id and score), while the stages of an upfront retrieval, the queries of one stage and the
searches of a session find largely the same chunks. So a query asks the engine for ids and scores
only, takes each chunk from the memo (``ChunkMemo``, the last ``MEMO_CHUNKS`` used) and reads the
payloads of the others by id. A write forgets the points it replaces (by id) and the files it
deletes (by path) as it begins and as it ends, and a chunk read while any write ran is not
remembered, so a remembered chunk is always the stored one. Point counts and the stored paths a
glob is matched against are remembered the same way, until any write. On a server other processes
write too: nothing is remembered.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast

from daemon.core.lru import LruMap
from daemon.core.models import Chunk, SearchFilters
from daemon.core.ports import ScoredChunk, SparseVector, StoredPoint, StoreQuery
from daemon.index._payload import (
    CHUNK_HASH,
    DENSE,
    EMBEDDED,
    EMBEDDED_NO,
    EMBEDDED_YES,
    KIND,
    LANGUAGE,
    LEXICAL,
    PATH,
    PAYLOAD_INDEXES,
    GlobMode,
    IndexKind,
    PathGlob,
    batched,
    build_payload,
    chunk_from_payload,
    chunk_to_payload,
    engine_errors,
    rrf_fuse,
)
from daemon.index.encoded_chunks import EncodedChunks

__all__ = ["MEMO_CHUNKS", "ChunkMemo", "EngineHit", "EngineRecord", "EngineRow", "NoMatch", "PointStoreBase"]

logger = logging.getLogger(__name__)

WRITE_BATCH = 256
FILTER_BATCH = 512
SCROLL_PAGE = 256
MEMO_CHUNKS = 8_192
"""Decoded chunks remembered (least recently used out first): an upfront retrieval over this checkout
decodes about 1,800 distinct candidates; its 6,226 chunks decoded take 15 MB, so 8,192 about 20 MB."""

T = TypeVar("T")
S = TypeVar("S")
CondT = TypeVar("CondT")
FilterT = TypeVar("FilterT")
PointT = TypeVar("PointT")


@dataclass(frozen=True, slots=True)
class EngineHit:
    """One scored point as an engine returned it (payload only when it was asked for)."""

    id: str
    score: float
    payload: Mapping[str, Any] | None


class EngineRecord(Protocol):
    """One stored point as an engine's scroll or retrieve gives it (both engines' records have these)."""

    @property
    def id(self) -> object: ...

    @property
    def payload(self) -> Mapping[str, Any] | None: ...

    @property
    def vector(self) -> object:
        """The named vectors that were asked for (a dict), else None."""
        ...


@dataclass(frozen=True, slots=True)
class EngineRow:
    """One stored point read back: its id, its payload (or the asked-for part), its vectors if read."""

    id: str
    payload: Mapping[str, Any] | None
    dense: list[float] | None
    sparse: SparseVector | None = None

    @classmethod
    def of(cls, record: EngineRecord) -> EngineRow:
        """The row of an engine's record, with whichever of its vectors were read."""
        vector = record.vector
        named = cast("dict[str, object]", vector) if isinstance(vector, dict) else {}
        return cls(str(record.id), record.payload, _dense_of(named.get(DENSE)), _sparse_of(named.get(LEXICAL)))


class NoMatch(Exception):
    """A filter that no point can satisfy (a glob that matches no stored path)."""


class ChunkMemo:
    """Chunks by point id, the last ``size`` used; a reader remembers only what no write overlapped.

    ``writes`` counts write starts and ends: a reader notes it before reading the engine and
    ``remember`` keeps its chunks only when it is unchanged (no write began or ended meanwhile).
    A write forgets, as it begins and as it ends, the points it replaces (by id) and the files it
    deletes (by path); the other chunks stay as they are stored.
    """

    def __init__(self, size: int) -> None:
        self._chunks: LruMap[str, Chunk] = LruMap(size)
        self._lock = threading.Lock()
        self.writes = 0

    def known(self, ids: Iterable[str]) -> dict[str, Chunk]:
        out: dict[str, Chunk] = {}
        with self._lock:
            for pid in ids:
                chunk = self._chunks.get(pid)
                if chunk is not None:
                    out[pid] = chunk
        return out

    def remember(self, since: int, chunks: Mapping[str, Chunk]) -> None:
        with self._lock:
            if since != self.writes:
                return
            for pid, chunk in chunks.items():
                self._chunks.put(pid, chunk)

    def changing(self, ids: Sequence[str], paths: frozenset[str]) -> None:
        """A write begins or ends: it replaces the points ``ids`` and deletes the files ``paths``."""
        with self._lock:
            self.writes += 1
            for pid in ids:
                self._chunks.pop(pid)
            if paths:
                for pid in [pid for pid, chunk in self._chunks.items() if chunk.path in paths]:
                    self._chunks.pop(pid)

    def clear(self) -> None:
        with self._lock:
            self.writes += 1
            self._chunks.clear()


class PointStoreBase(ABC, Generic[CondT, FilterT, PointT]):
    """The VectorStore protocol over one engine's primitives (see the module doc)."""

    def __init__(self, *, only_writer: bool) -> None:
        self._write_lock = threading.Lock()
        self._prefix_match = True
        """The engine has prefix matching on the path index (a Qdrant server before 1.19 has not)."""
        self._closed = False
        self._memo = ChunkMemo(MEMO_CHUNKS) if only_writer else None
        self._until_write: dict[tuple[str, object], tuple[int, Any]] = {}
        """Counts and facets (``_remembered``) with the memo's ``writes`` when they were read."""

    @property
    @abstractmethod
    def name(self) -> str: ...

    def close(self) -> None:
        """Release the engine; calling it again does nothing."""
        if self._closed:
            return
        self._closed = True
        with engine_errors(self.name, "close"):
            self._engine_close()

    # -- engine primitives ----------------------------------------------------------------------

    @abstractmethod
    def _engine_close(self) -> None: ...

    @abstractmethod
    def _cond_match(self, key: str, value: str | int) -> CondT: ...

    @abstractmethod
    def _cond_any(self, key: str, values: list[str]) -> CondT: ...

    @abstractmethod
    def _cond_prefix(self, key: str, prefix: str) -> CondT: ...

    @abstractmethod
    def _engine_filter(self, must: list[CondT]) -> FilterT: ...

    @abstractmethod
    def _engine_point(
        self, point_id: str, sparse: SparseVector, dense: list[float] | None, payload: dict[str, Any]
    ) -> PointT: ...

    @abstractmethod
    def _engine_upsert(self, points: list[PointT]) -> None: ...

    @abstractmethod
    def _engine_delete(self, flt: FilterT) -> None: ...

    @abstractmethod
    def _engine_set_dense(self, vectors: Mapping[str, list[float]]) -> None:
        """Set the dense vector of existing points (id -> vector); the flag is set separately."""

    @abstractmethod
    def _engine_set_payload(self, points: list[str] | FilterT, payload: dict[str, Any]) -> None:
        """Set these payload keys of the points of those ids, or of those under that filter."""

    @abstractmethod
    def _engine_drop_dense(self, embedded: FilterT, *, recreate: bool) -> None:
        """Delete the dense vectors of the points under ``embedded``; ``recreate``: make the dense slot
        again instead (another dimension; only an engine that can change it is asked)."""

    @abstractmethod
    def _engine_scroll(
        self, flt: FilterT | None, *, limit: int, offset: object, payload: list[str] | bool, vectors: list[str]
    ) -> tuple[Sequence[EngineRecord], object]:
        """One page of points under ``flt`` (every point when None) and the offset of the next (None after
        the last), with the named ``vectors``."""

    @abstractmethod
    def _engine_retrieve(self, ids: list[str], *, payload: bool) -> Sequence[EngineRecord]:
        """The points of ``ids`` that exist, with their payloads when asked."""

    @abstractmethod
    def _engine_query(
        self, using: str, vector: SparseVector | list[float], flt: FilterT | None, limit: int, *, payload: bool
    ) -> list[EngineHit]: ...

    @abstractmethod
    def _engine_query_batch(
        self, rankers: list[tuple[str, SparseVector | list[float]]], flt: FilterT | None, limit: int
    ) -> list[list[EngineHit]]:
        """One ranked list per ranker, without payloads, in one round trip when the engine can."""

    @abstractmethod
    def _engine_count(self, flt: FilterT | None) -> int: ...

    @abstractmethod
    def _engine_facet(self, key: str, *, exact: bool) -> dict[str, int]:
        """Points per value of the keyword-indexed ``key`` (values with no point left out)."""

    # -- writes ---------------------------------------------------------------------------------

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        engine_points = (
            self._engine_point(
                p.id,
                p.sparse,
                None if p.dense is None else list(p.dense),
                chunk_to_payload(p.chunk, embedded=p.dense is not None),
            )
            for p in points
        )
        self._write_points(engine_points, [p.id for p in points])

    def upsert_encoded(self, files: Sequence[EncodedChunks], dense: Mapping[str, list[float]]) -> None:
        """Insert or replace the chunks of ``files`` (the index pass's fast path, see ``encoded_chunks``)."""
        points = (self._encoded_point(f, i, dense) for f in files for i in range(len(f)))
        self._write_points(points, [pid for f in files for pid in f.ids])

    def delete_paths(self, paths: Iterable[str]) -> None:
        unique = sorted(set(paths))
        if not unique:
            return
        with self._writing(paths=unique), engine_errors(self.name, "delete by path"):
            self._deleting()
            for batch in batched(unique, FILTER_BATCH):
                self._engine_delete(self._engine_filter([self._cond_any(PATH, batch)]))

    def set_dense(self, vectors: Mapping[str, list[float]]) -> None:
        """Attach dense vectors; ids that no longer exist (deleted meanwhile) are skipped."""
        if not vectors:
            return
        with self._writing(), engine_errors(self.name, "set dense vectors"):
            for batch in batched(list(vectors), WRITE_BATCH):
                present = [str(r.id) for r in self._engine_retrieve(batch, payload=False)]
                if len(present) < len(batch):
                    logger.debug("set_dense: %d of %d point(s) are gone", len(batch) - len(present), len(batch))
                if not present:
                    continue
                # vector first, flag second: a crash in between leaves a point that is re-embedded,
                # never one flagged as embedded without a vector
                self._engine_set_dense({pid: vectors[pid] for pid in present})
                self._engine_set_payload(present, {EMBEDDED: EMBEDDED_YES})

    # -- reads ----------------------------------------------------------------------------------

    def dense_by_hash(self, paths: Iterable[str]) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        with engine_errors(self.name, "read dense vectors"):
            for batch in batched(sorted(set(paths)), FILTER_BATCH):
                flt = self._engine_filter([self._cond_any(PATH, batch), self._cond_match(EMBEDDED, EMBEDDED_YES)])
                for row in self._scroll_all(flt, payload=[CHUNK_HASH], dense=True):
                    if row.dense is not None and row.payload is not None:
                        out[str(row.payload[CHUNK_HASH])] = row.dense
        return out

    def missing_dense(self, limit: int, paths: Sequence[str] | None = None) -> list[tuple[str, Chunk]]:
        if limit <= 0 or (paths is not None and not paths):
            return []
        must = [self._cond_match(EMBEDDED, EMBEDDED_NO)]
        if paths is not None:
            must.append(self._cond_any(PATH, sorted(set(paths))))
        with engine_errors(self.name, "list points without a dense vector"):
            rows, _ = self._scroll_page(self._engine_filter(must), limit=limit, offset=None, payload=True, dense=False)
            return [(row.id, chunk_from_payload(row.payload)) for row in rows]

    def query(self, request: StoreQuery) -> list[ScoredChunk]:
        """Each given ranker finds ``prefetch_limit`` ids under the filter; RRF fuses them here.

        With one ranker its own scores are returned; with both, RRF scores (see ``RRF_K``).
        """
        sparse, dense, limit = request.sparse, request.dense, request.limit
        rankers: list[tuple[str, SparseVector | list[float]]] = []
        if sparse is not None and sparse.indices:
            rankers.append((LEXICAL, sparse))
        if dense is not None:
            rankers.append((DENSE, list(dense)))
        if not rankers or limit <= 0:
            return []
        with engine_errors(self.name, "query"):
            try:
                flt = self._filter(request.filters, request.paths)
            except NoMatch:
                return []
            if len(rankers) == 1:
                name, vector = rankers[0]
                hits = self._engine_query(name, vector, flt, limit, payload=self._memo is None)
                scored = [(h.id, h.score, (name,)) for h in hits]
            else:
                lists = self._engine_query_batch(rankers, flt, max(request.prefetch_limit, limit))
                fused = rrf_fuse(
                    [(name, [h.id for h in hits]) for (name, _), hits in zip(rankers, lists, strict=True)],
                    strengths=[[h.score for h in hits] for hits in lists],
                )[:limit]
                hits = []
                scored = [(f.id, f.score, f.sources) for f in fused]
            chunks = self._chunks(
                [pid for pid, _, _ in scored], {h.id: h.payload for h in hits if h.payload is not None}
            )
            return [
                ScoredChunk(id=pid, score=score, chunk=chunks[pid], sources=sources)
                for pid, score, sources in scored
                if pid in chunks
            ]

    def copy_into(self, target: PointStoreBase[Any, Any, Any], progress: Callable[[int], None] | None = None) -> int:
        """Write every point of this store into ``target`` as it is (id, payload, both vectors): no
        re-parsing, no re-embedding. Returns the number of points copied; ``progress`` gets the running count."""
        copied = 0
        with engine_errors(self.name, "read every point"):
            rows = self._scroll_all(None, payload=True, dense=True, sparse=True)
            for batch in batched(rows, WRITE_BATCH):
                points = [
                    target._engine_point(row.id, row.sparse or SparseVector([], []), row.dense, dict(row.payload or {}))
                    for row in batch
                ]
                target._write_points(points, [row.id for row in batch])
                copied += len(points)
                if progress is not None:
                    progress(copied)
        return copied

    def count(self, *, embedded_only: bool = False) -> int:
        def counted() -> int:
            flt = self._engine_filter([self._cond_match(EMBEDDED, EMBEDDED_YES)]) if embedded_only else None
            with engine_errors(self.name, "count"):
                return self._engine_count(flt)

        return self._remembered(("count", embedded_only), counted)

    def counts_by_path(self) -> dict[str, int]:
        return self._facet(PATH)

    def counts_by_kind(self) -> dict[str, int]:
        return self._facet(KIND)

    # -- shared internals -----------------------------------------------------------------------

    def _deleting(self) -> None:
        """Called under the write lock before points are deleted (Edge marks its IDF counts stale)."""

    @contextmanager
    def _writing(self, ids: Sequence[str] = (), paths: Iterable[str] = ()) -> Generator[None]:
        """Hold the write lock; the memo forgets the points ``ids`` and the files ``paths`` as the write
        begins and as it ends (module doc)."""
        deleted = frozenset(paths)
        with self._write_lock:
            if self._memo is not None:
                self._memo.changing(ids, deleted)
            try:
                yield
            finally:
                if self._memo is not None:
                    self._memo.changing(ids, deleted)

    def _write_points(self, points: Iterable[PointT], ids: Sequence[str]) -> None:
        with self._writing(ids), engine_errors(self.name, "upsert"):
            for batch in batched(points, WRITE_BATCH):
                self._engine_upsert(batch)

    def _encoded_point(self, f: EncodedChunks, i: int, dense: Mapping[str, list[float]]) -> PointT:
        chunk_hash = f.hashes[i]
        vector = dense.get(chunk_hash)
        payload = build_payload(
            path=f.path,
            kind=f.kinds[i],
            language=f.languages[i],
            chunk_hash=chunk_hash,
            chunk_json=f.chunk_json[i],
            embedded=vector is not None,
        )
        return self._engine_point(f.ids[i], SparseVector(f.sparse_indices[i], f.sparse_values[i]), vector, payload)

    def _chunks(self, ids: list[str], payloads: Mapping[str, Mapping[str, Any]]) -> dict[str, Chunk]:
        """The chunks of ``ids`` that exist: from ``payloads`` (a query's), the memo, or read by id."""
        out = {pid: chunk_from_payload(payloads[pid]) for pid in ids if pid in payloads}
        memo = self._memo
        since = memo.writes if memo is not None else 0
        if memo is not None:
            out.update(memo.known(pid for pid in ids if pid not in out))
        missing = [pid for pid in ids if pid not in out]
        if missing:
            read = {str(r.id): chunk_from_payload(r.payload) for r in self._engine_retrieve(missing, payload=True)}
            if memo is not None:
                memo.remember(since, read)
            out.update(read)
        return out

    def _facet(self, key: str, *, exact: bool = True) -> dict[str, int]:
        def counted() -> dict[str, int]:
            with engine_errors(self.name, f"count by {key}"):
                return self._engine_facet(key, exact=exact)

        return dict(self._remembered((f"facet {key}", exact), counted))

    @staticmethod
    def _payload_indexes(schemas: Mapping[IndexKind, S]) -> list[tuple[str, S]]:
        """The payload fields to index (``PAYLOAD_INDEXES``), each with the engine's schema of its kind."""
        return [(field, schemas[kind]) for field, kind in PAYLOAD_INDEXES.items()]

    def _remembered(self, key: tuple[str, object], read: Callable[[], T]) -> T:
        """``read()``, remembered until the next write when this process is the only writer (module doc)."""
        memo = self._memo
        if memo is None:
            return read()
        since = memo.writes
        known = self._until_write.get(key)
        if known is not None and known[0] == since:
            return known[1]
        value = read()
        if memo.writes == since:
            self._until_write[key] = (since, value)
        return value

    def _scroll_all(
        self, flt: FilterT | None, *, payload: list[str] | bool, dense: bool, sparse: bool = False
    ) -> Iterator[EngineRow]:
        offset: object = None
        while True:
            rows, offset = self._scroll_page(
                flt, limit=SCROLL_PAGE, offset=offset, payload=payload, dense=dense, sparse=sparse
            )
            yield from rows
            if offset is None:
                return

    def _scroll_page(
        self,
        flt: FilterT | None,
        *,
        limit: int,
        offset: object,
        payload: list[str] | bool,
        dense: bool,
        sparse: bool = False,
    ) -> tuple[list[EngineRow], object]:
        vectors = [name for name, wanted in ((DENSE, dense), (LEXICAL, sparse)) if wanted]
        records, after = self._engine_scroll(flt, limit=limit, offset=offset, payload=payload, vectors=vectors)
        return [EngineRow.of(r) for r in records], after

    def _drop_dense(self, *, recreate: bool = False) -> None:
        """Forget every dense vector (the dense model changed): the points stay, to be embedded again."""
        logger.warning("%s: the dense model changed; dropping stored dense vectors for re-embedding", self.name)
        embedded = self._engine_filter([self._cond_match(EMBEDDED, EMBEDDED_YES)])
        with self._writing(), engine_errors(self.name, "reset dense vectors"):
            self._engine_drop_dense(embedded, recreate=recreate)
            self._engine_set_payload(embedded, {EMBEDDED: EMBEDDED_NO})

    def _filter(self, filters: SearchFilters | None, paths: Sequence[str] = ()) -> FilterT | None:
        """The engine filter for ``filters`` and, when given, ``paths`` (exact); raises NoMatch when the
        path glob matches no stored path."""
        must: list[CondT] = [self._cond_any(PATH, sorted(set(paths)))] if paths else []
        if filters is None:
            return self._engine_filter(must) if must else None
        if filters.kind is not None:
            must.append(self._cond_match(KIND, filters.kind.value))
        if filters.language is not None:
            must.append(self._cond_match(LANGUAGE, filters.language))
        if filters.path_glob is not None:
            glob = PathGlob.parse(filters.path_glob)
            if glob.mode is GlobMode.EXACT:
                must.append(self._cond_match(PATH, glob.pattern))
            elif glob.mode is GlobMode.PREFIX and (self._prefix_match or not glob.prefix):
                if glob.prefix:
                    must.append(self._cond_prefix(PATH, glob.prefix))
            else:  # a pattern, or a prefix the engine cannot match: the stored paths it accepts
                selected = glob.select(self._facet(PATH, exact=False))
                if not selected:
                    raise NoMatch
                must.append(self._cond_any(PATH, selected))
        return self._engine_filter(must) if must else None


def _dense_of(value: object) -> list[float] | None:
    if not isinstance(value, list):
        return None
    return [float(x) for x in cast("list[float]", value)]


def _sparse_of(value: object) -> SparseVector | None:
    """A sparse vector of either engine's type (both have ``indices`` and ``values``)."""
    indices: object = getattr(value, "indices", None)
    values: object = getattr(value, "values", None)
    if not isinstance(indices, list) or not isinstance(values, list):
        return None
    return SparseVector([int(i) for i in cast("list[int]", indices)], [float(v) for v in cast("list[float]", values)])
