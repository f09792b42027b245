"""VectorStore on Qdrant Edge: one shard in this process, the default store.

Layout: the shard lives in ``<dir>/`` (segments, WAL, ``edge_config.json``) and a sidecar
``<dir>.json`` records the dense model and dimension the vectors were made with. Opening with
another model drops every dense vector (the points stay lexically searchable and are
re-embedded); another dimension recreates the dense vector slot.

Durability: the WAL is on, so an update is durable once ``update`` returns; a process killed
at any point reopens with what the WAL holds (tested with SIGKILL). ``flush`` writes the
segments so the next open has less WAL to replay.

Scoring statistics: BM25's IDF is the engine's (``Modifier.Idf``), counted from the shard's in-memory
sparse index. A deleted point stays counted there until the shard is loaded again (qdrant-edge-py
0.9.0: delete 1,000 of 2,000 points and upsert them again, and every IDF is computed over 3,000), and
a shard reopened after a kill replays its WAL into the same state. So the counts are made exact again
when it matters: ``flush`` reloads the shard when points were deleted since it was loaded (about 0.7 s
per 100k points; a pass ends with one flush), and ``open`` reloads it when the previous owner did not
close it (the ``<dir>.open`` marker is still there). Scores after any kill equal a clean index's
(``tests/adversarial/test_processes.py``).

Indexing: Edge has no background optimizer. Without ``optimize()`` dense search is a brute-force
scan of the appendable segment (about 15 ms at 100k points, 384 dims, 2 cores); ``optimize()``
builds HNSW and the sparse index (about 1.5 ms per query afterwards) but takes about a minute
per 100k points and, like every call into qdrant-edge-py 0.9.0, holds the GIL while it runs.
So the store never optimizes on its own; the owner calls ``optimize()`` when it can afford it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import qdrant_edge as qe

from daemon.core.models import Chunk, SearchFilters
from daemon.core.ports import ScoredChunk, SparseVector, StoredPoint
from daemon.errors import DaemonError, StoreError
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
    REBUILD_HINT,
    GlobMode,
    PathGlob,
    batched,
    build_payload,
    chunk_from_payload,
    chunk_to_payload,
    engine_errors,
    engine_state_error,
    rrf_fuse,
)
from daemon.index.encoded_chunks import EncodedChunks

__all__ = ["EdgeVectorStore"]

logger = logging.getLogger(__name__)

_WRITE_BATCH = 256
_FILTER_BATCH = 512
_SCROLL_PAGE = 256
_FACET_ALL = 1 << 30
_META_VERSION = 1


def _edge_config(dense_dim: int) -> qe.EdgeConfig:
    return qe.EdgeConfig(
        vectors={DENSE: qe.EdgeVectorParams(size=dense_dim, distance=qe.Distance.Cosine)},
        sparse_vectors={LEXICAL: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
    )


def _match(key: str, value: str | int) -> qe.FieldCondition:
    return qe.FieldCondition(key=key, match=qe.MatchValue(value))


def _any_of(key: str, values: list[str]) -> qe.FieldCondition:
    return qe.FieldCondition(key=key, match=qe.MatchAny(values))


def _is_embedded(flag: int) -> qe.FieldCondition:
    return _match(EMBEDDED, flag)


class _NoMatch(Exception):
    """A filter that no point can satisfy (a glob that matches no stored path)."""


class EdgeVectorStore:
    """The VectorStore protocol on a Qdrant Edge shard. Open with :meth:`open`."""

    def __init__(self, shard: qe.EdgeShard, *, directory: Path, dense_dim: int) -> None:
        self._shard: qe.EdgeShard | None = shard
        self._directory = directory
        self._dense_dim = dense_dim
        self._write_lock = threading.Lock()
        self._stats_stale = False
        """Points were deleted since the shard was loaded: its IDF counts include them until a reload."""

    # -- lifecycle ------------------------------------------------------------------------------

    @classmethod
    def open(cls, directory: Path, *, dense_dim: int, dense_model: str) -> EdgeVectorStore:
        """Open the shard in ``directory``, creating it when absent; StoreError names what to do if not."""
        meta_path = directory.with_name(directory.name + ".json")
        config = _edge_config(dense_dim)
        try:
            fresh = not directory.exists() or not any(directory.iterdir())
        except OSError as exc:
            raise _open_error(directory, exc) from exc
        meta = {} if fresh else _read_meta(meta_path)
        same_dim = meta.get("dense_dim") == dense_dim
        marker = _open_marker(directory)
        unclean = not fresh and marker.exists()
        try:
            if fresh:
                directory.mkdir(parents=True, exist_ok=True)
                shard = qe.EdgeShard.create(str(directory), config)
            else:
                shard = qe.EdgeShard.load(str(directory), config if same_dim else None)
        except Exception as exc:
            raise _open_error(directory, exc) from exc
        store = cls(shard, directory=directory, dense_dim=dense_dim)
        try:
            if unclean:
                logger.info("%s: %s was not closed cleanly; recounting its scoring statistics", store.name, directory)
                store._stats_stale = True
            store._ensure_indexes()
            if not fresh and (not same_dim or meta.get("dense_model") != dense_model):
                store._reset_dense(recreate=not same_dim)
            store.flush()
            _write_meta(meta_path, {"version": _META_VERSION, "dense_model": dense_model, "dense_dim": dense_dim})
            _write_atomically(marker, str(os.getpid()))
        except BaseException:
            store.close()
            raise
        logger.debug("opened Qdrant Edge shard %s (%s)", directory, "created" if fresh else "loaded")
        return store

    @property
    def name(self) -> str:
        return "qdrant-edge"

    @property
    def directory(self) -> Path:
        return self._directory

    def flush(self) -> None:
        """Write the segments; after deletions also reload the shard so its IDF counts are exact (module doc)."""
        with engine_errors(self.name, "flush"):
            self._live().flush()
            if self._stats_stale:
                self._reload()

    def close(self) -> None:
        """Flush and release the shard; calling it again does nothing."""
        shard, self._shard = self._shard, None
        if shard is None:
            return
        with engine_errors(self.name, "close"):
            try:
                shard.flush()
            finally:
                shard.close()
        with contextlib.suppress(OSError):
            _open_marker(self._directory).unlink()

    def optimize(self) -> bool:
        """Build the vector and payload indexes now (blocking, GIL held); True if anything changed."""
        with engine_errors(self.name, "optimize"):
            return self._live().optimize()

    # -- writes ---------------------------------------------------------------------------------

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        with self._write_lock, engine_errors(self.name, "upsert"):
            shard = self._live()
            for batch in batched(points, _WRITE_BATCH):
                shard.update(qe.UpdateOperation.upsert_points([_to_edge_point(p) for p in batch]))

    def upsert_encoded(self, files: Sequence[EncodedChunks], dense: Mapping[str, list[float]]) -> None:
        """Insert or replace the chunks of ``files`` (the index pass's fast path, see ``encoded_chunks``)."""
        points = (_encoded_edge_point(f, i, dense) for f in files for i in range(len(f)))
        with self._write_lock, engine_errors(self.name, "upsert"):
            shard = self._live()
            for batch in batched(points, _WRITE_BATCH):
                shard.update(qe.UpdateOperation.upsert_points(batch))

    def delete_paths(self, paths: Iterable[str]) -> None:
        unique = sorted(set(paths))
        if not unique:
            return
        with self._write_lock, engine_errors(self.name, "delete by path"):
            self._stats_stale = True
            shard = self._live()
            for batch in batched(unique, _FILTER_BATCH):
                flt = qe.Filter(must=[_any_of(PATH, batch)])
                shard.update(qe.UpdateOperation.delete_points_by_filter(flt))

    def set_dense(self, vectors: Mapping[str, list[float]]) -> None:
        """Attach dense vectors; ids that no longer exist (deleted meanwhile) are skipped."""
        if not vectors:
            return
        with self._write_lock, engine_errors(self.name, "set dense vectors"):
            shard = self._live()
            for batch in batched(list(vectors), _WRITE_BATCH):
                records = shard.retrieve(list(batch), with_payload=False, with_vector=False)
                present = [str(r.id) for r in records]
                if len(present) < len(batch):
                    logger.debug("set_dense: %d of %d point(s) are gone", len(batch) - len(present), len(batch))
                if not present:
                    continue
                # vector first, flag second: a crash in between leaves a point that is re-embedded,
                # never one flagged as embedded without a vector
                point_vectors = [qe.PointVectors(pid, {DENSE: vectors[pid]}) for pid in present]
                shard.update(qe.UpdateOperation.update_vectors(point_vectors))
                shard.update(qe.UpdateOperation.set_payload(list(present), {EMBEDDED: EMBEDDED_YES}))

    # -- reads ----------------------------------------------------------------------------------

    def dense_by_hash(self, paths: Iterable[str]) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        with engine_errors(self.name, "read dense vectors"):
            for batch in batched(sorted(set(paths)), _FILTER_BATCH):
                flt = qe.Filter(must=[_any_of(PATH, batch), _is_embedded(EMBEDDED_YES)])
                for record in self._scroll_all(flt, with_payload=[CHUNK_HASH], with_vector=[DENSE]):
                    vector = _dense_of(record.vector)
                    if vector is not None and record.payload is not None:
                        out[str(record.payload[CHUNK_HASH])] = vector
        return out

    def missing_dense(self, limit: int, paths: Sequence[str] | None = None) -> list[tuple[str, Chunk]]:
        if limit <= 0 or (paths is not None and not paths):
            return []
        must: list[qe.FieldCondition] = [_is_embedded(EMBEDDED_NO)]
        if paths is not None:
            must.append(_any_of(PATH, sorted(set(paths))))
        with engine_errors(self.name, "list points without a dense vector"):
            records, _ = self._live().scroll(
                qe.ScrollRequest(limit=limit, filter=qe.Filter(must=list(must)), with_payload=True, with_vector=False)
            )
            return [(str(r.id), chunk_from_payload(r.payload)) for r in records]

    def query(
        self,
        *,
        sparse: SparseVector | None,
        dense: list[float] | None,
        filters: SearchFilters | None,
        limit: int,
        prefetch_limit: int,
    ) -> list[ScoredChunk]:
        """Each given ranker finds ``prefetch_limit`` ids under the filter; RRF fuses them here.

        With one ranker its own scores are returned; with both, RRF scores (see ``RRF_K``).
        """
        rankers: list[tuple[str, qe.Query]] = []
        if sparse is not None and sparse.indices:
            rankers.append((LEXICAL, qe.Query.Nearest(qe.SparseVector(sparse.indices, sparse.values), using=LEXICAL)))
        if dense is not None:
            rankers.append((DENSE, qe.Query.Nearest(list(dense), using=DENSE)))
        if not rankers or limit <= 0:
            return []
        with engine_errors(self.name, "query"):
            shard = self._live()
            try:
                flt = self._filter(filters)
            except _NoMatch:
                return []
            if len(rankers) == 1:
                name, query = rankers[0]
                hits = shard.query(
                    qe.QueryRequest(limit=limit, query=query, filter=flt, with_payload=True, with_vector=False)
                )
                return [
                    ScoredChunk(id=str(h.id), score=h.score, chunk=chunk_from_payload(h.payload), sources=(name,))
                    for h in hits
                ]
            depth = max(prefetch_limit, limit)
            requests = [
                qe.QueryRequest(limit=depth, query=q, filter=flt, with_payload=False, with_vector=False)
                for _, q in rankers
            ]
            lists = shard.query_batch(qe.QueryBatchRequest(requests))
            fused = rrf_fuse(
                [(name, [str(h.id) for h in hits]) for (name, _), hits in zip(rankers, lists, strict=True)],
                strengths=[[h.score for h in hits] for hits in lists],
            )[:limit]
            records = shard.retrieve([f.id for f in fused], with_payload=True, with_vector=False)
            by_id = {str(r.id): r for r in records}
            return [
                ScoredChunk(id=f.id, score=f.score, chunk=chunk_from_payload(by_id[f.id].payload), sources=f.sources)
                for f in fused
                if f.id in by_id
            ]

    def count(self, *, embedded_only: bool = False) -> int:
        flt = qe.Filter(must=[_is_embedded(EMBEDDED_YES)]) if embedded_only else None
        with engine_errors(self.name, "count"):
            return self._live().count(qe.CountRequest(exact=True, filter=flt))

    def counts_by_path(self) -> dict[str, int]:
        return self._facet(PATH)

    def counts_by_kind(self) -> dict[str, int]:
        return self._facet(KIND)

    # -- internals ------------------------------------------------------------------------------

    def _reload(self) -> None:
        """Close and load the shard again: the engine rebuilds its sparse index without deleted points."""
        with self._write_lock:
            shard = self._live()
            shard.close()
            self._shard = None
            self._shard = qe.EdgeShard.load(str(self._directory), None)
            self._stats_stale = False
        logger.debug("%s: reloaded %s to recount its scoring statistics", self.name, self._directory)

    def _live(self) -> qe.EdgeShard:
        if self._shard is None:
            raise StoreError(f"{self.name}: the store at {self._directory} is closed")
        return self._shard

    def _facet(self, key: str, *, exact: bool = True) -> dict[str, int]:
        """Points per value of ``key``; ``exact=False`` is ~50x faster at 100k points and lists the same values."""
        with engine_errors(self.name, f"count by {key}"):
            response = self._live().facet(qe.FacetRequest(key=key, limit=_FACET_ALL, exact=exact))
            # an exact facet lists values whose points were all deleted, with count 0 (0.9.0)
            return {str(hit.value): hit.count for hit in response.hits if hit.count > 0}

    def _scroll_all(
        self, flt: qe.Filter, *, with_payload: list[str] | bool, with_vector: list[str] | bool
    ) -> Iterable[qe.Record]:
        shard = self._live()
        offset: qe.PointId | None = None
        while True:
            records, offset = shard.scroll(
                qe.ScrollRequest(
                    offset=offset, limit=_SCROLL_PAGE, filter=flt, with_payload=with_payload, with_vector=with_vector
                )
            )
            yield from records
            if offset is None:
                return

    def _filter(self, filters: SearchFilters | None) -> qe.Filter | None:
        """The engine filter for ``filters``; raises _NoMatch when the path glob matches no stored path."""
        if filters is None:
            return None
        must: list[qe.FieldCondition] = []
        if filters.kind is not None:
            must.append(_match(KIND, filters.kind.value))
        if filters.language is not None:
            must.append(_match(LANGUAGE, filters.language))
        if filters.path_glob is not None:
            glob = PathGlob.parse(filters.path_glob)
            if glob.mode is GlobMode.EXACT:
                must.append(_match(PATH, glob.pattern))
            elif glob.mode is GlobMode.PREFIX:
                if glob.prefix:
                    must.append(qe.FieldCondition(key=PATH, match=qe.MatchPrefix(glob.prefix)))
            else:
                selected = glob.select(self._facet(PATH, exact=False))
                if not selected:
                    raise _NoMatch
                must.append(_any_of(PATH, selected))
        return qe.Filter(must=list(must)) if must else None

    def _ensure_indexes(self) -> None:
        with engine_errors(self.name, "create payload indexes"):
            shard = self._live()
            present = set(shard.info().payload_schema)
            wanted: dict[str, qe.PayloadSchemaType | qe.KeywordIndexParams] = {
                PATH: qe.KeywordIndexParams(prefix=True),
                KIND: qe.PayloadSchemaType.Keyword,
                LANGUAGE: qe.PayloadSchemaType.Keyword,
                EMBEDDED: qe.PayloadSchemaType.Integer,
            }
            for field, schema in wanted.items():
                if field not in present:
                    shard.update(qe.UpdateOperation.create_field_index(field, schema))

    def _reset_dense(self, *, recreate: bool) -> None:
        """Forget every dense vector (model changed); ``recreate`` also changes the dimension."""
        logger.warning("%s: the dense model changed; dropping stored dense vectors for re-embedding", self.name)
        with self._write_lock, engine_errors(self.name, "reset dense vectors"):
            shard = self._live()
            embedded = qe.Filter(must=[_is_embedded(EMBEDDED_YES)])
            if recreate:
                shard.update(qe.UpdateOperation.delete_vector_name(DENSE))
                shard.update(qe.UpdateOperation.create_dense_vector(DENSE, self._dense_dim, qe.Distance.Cosine))
            else:
                shard.update(qe.UpdateOperation.delete_vectors_by_filter(embedded, [DENSE]))
            shard.update(qe.UpdateOperation.set_payload_by_filter(embedded, {EMBEDDED: EMBEDDED_NO}))


def _to_edge_point(point: StoredPoint) -> qe.Point:
    vectors: dict[str, qe.NamedVector] = {LEXICAL: qe.SparseVector(point.sparse.indices, point.sparse.values)}
    if point.dense is not None:
        vectors[DENSE] = list(point.dense)
    return qe.Point(point.id, vectors, chunk_to_payload(point.chunk, embedded=point.dense is not None))


def _encoded_edge_point(f: EncodedChunks, i: int, dense: Mapping[str, list[float]]) -> qe.Point:
    chunk_hash = f.hashes[i]
    vectors: dict[str, qe.NamedVector] = {LEXICAL: qe.SparseVector(f.sparse_indices[i], f.sparse_values[i])}
    vector = dense.get(chunk_hash)
    if vector is not None:
        vectors[DENSE] = vector
    payload = build_payload(
        path=f.path,
        kind=f.kinds[i],
        language=f.languages[i],
        chunk_hash=chunk_hash,
        chunk_json=f.chunk_json[i],
        embedded=vector is not None,
    )
    return qe.Point(f.ids[i], vectors, payload)


def _dense_of(vector: qe.Vector | None) -> list[float] | None:
    named = vector.get(DENSE) if isinstance(vector, dict) else None
    if not isinstance(named, list):
        return None
    return [float(x) for x in cast("list[float]", named)]


def _open_error(directory: Path, exc: Exception) -> DaemonError:
    coded = engine_state_error(f"open the index at {directory}", exc)
    if coded is not None:
        return coded
    text = str(exc)
    if "WouldBlock" in text:
        return StoreError(
            f"the index at {directory} is open in another process (only one ided daemon per workspace)", cause=exc
        )
    return StoreError(
        f"the index at {directory} cannot be loaded (damaged, or written by an incompatible version); "
        f"delete that directory or {REBUILD_HINT}",
        cause=exc,
    )


def _read_meta(path: Path) -> dict[str, Any]:
    try:
        data: object = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        logger.warning("unreadable store metadata %s (%s); dense vectors will be rebuilt", path, exc)
        return {}
    return dict(data) if isinstance(data, dict) else {}  # type: ignore[arg-type]


def _write_meta(path: Path, meta: Mapping[str, Any]) -> None:
    _write_atomically(path, json.dumps(dict(meta), sort_keys=True))


def _open_marker(directory: Path) -> Path:
    """Present while a process has the shard open: found at open, the previous owner was killed."""
    return directory.with_name(directory.name + ".open")


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
