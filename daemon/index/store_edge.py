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
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import qdrant_edge as qe

from daemon.core.ports import SparseVector
from daemon.errors import DaemonError, StoreError
from daemon.index._payload import DENSE, LEXICAL, REBUILD_HINT, IndexKind, engine_errors, engine_state_error
from daemon.index._store_base import EngineHit, PointStoreBase

__all__ = ["EdgeVectorStore"]

logger = logging.getLogger(__name__)

_FACET_ALL = 1 << 30
_INDEX_SCHEMAS: dict[IndexKind, qe.PayloadSchemaType | qe.KeywordIndexParams] = {
    IndexKind.PREFIX_KEYWORD: qe.KeywordIndexParams(prefix=True),
    IndexKind.KEYWORD: qe.PayloadSchemaType.Keyword,
    IndexKind.INTEGER: qe.PayloadSchemaType.Integer,
}
_META_VERSION = 1


def _edge_config(dense_dim: int) -> qe.EdgeConfig:
    return qe.EdgeConfig(
        vectors={DENSE: qe.EdgeVectorParams(size=dense_dim, distance=qe.Distance.Cosine)},
        sparse_vectors={LEXICAL: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
    )


class EdgeVectorStore(PointStoreBase[qe.FieldCondition, qe.Filter, qe.Point]):
    """The VectorStore protocol on a Qdrant Edge shard. Open with :meth:`open`."""

    def __init__(self, shard: qe.EdgeShard, *, directory: Path, dense_dim: int) -> None:
        super().__init__(only_writer=True)
        self._shard: qe.EdgeShard | None = shard
        self._directory = directory
        self._dense_dim = dense_dim
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
                store._drop_dense(recreate=not same_dim)
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

    def _engine_close(self) -> None:
        """Flush and release the shard, then remove the open marker."""
        shard, self._shard = self._shard, None
        try:
            if shard is not None:
                shard.flush()
                shard.close()
        finally:
            with contextlib.suppress(OSError):
                _open_marker(self._directory).unlink()

    def optimize(self) -> bool:
        """Build the vector and payload indexes now (blocking, GIL held); True if anything changed."""
        with engine_errors(self.name, "optimize"):
            return self._live().optimize()

    # -- engine primitives (see _store_base) ----------------------------------------------------

    def _cond_match(self, key: str, value: str | int) -> qe.FieldCondition:
        return qe.FieldCondition(key=key, match=qe.MatchValue(value))

    def _cond_any(self, key: str, values: list[str]) -> qe.FieldCondition:
        return qe.FieldCondition(key=key, match=qe.MatchAny(values))

    def _cond_prefix(self, key: str, prefix: str) -> qe.FieldCondition:
        return qe.FieldCondition(key=key, match=qe.MatchPrefix(prefix))

    def _engine_filter(self, must: list[qe.FieldCondition]) -> qe.Filter:
        return qe.Filter(must=list(must))

    def _engine_point(
        self, point_id: str, sparse: SparseVector, dense: list[float] | None, payload: dict[str, Any]
    ) -> qe.Point:
        vectors: dict[str, qe.NamedVector] = {LEXICAL: qe.SparseVector(sparse.indices, sparse.values)}
        if dense is not None:
            vectors[DENSE] = dense
        return qe.Point(point_id, vectors, payload)

    def _engine_upsert(self, points: list[qe.Point]) -> None:
        self._live().update(qe.UpdateOperation.upsert_points(points))

    def _deleting(self) -> None:
        self._stats_stale = True

    def _engine_delete(self, flt: qe.Filter) -> None:
        self._live().update(qe.UpdateOperation.delete_points_by_filter(flt))

    def _engine_set_dense(self, vectors: Mapping[str, list[float]]) -> None:
        point_vectors = [qe.PointVectors(pid, {DENSE: vector}) for pid, vector in vectors.items()]
        self._live().update(qe.UpdateOperation.update_vectors(point_vectors))

    def _engine_set_payload(self, points: list[str] | qe.Filter, payload: dict[str, Any]) -> None:
        if isinstance(points, list):
            self._live().update(qe.UpdateOperation.set_payload(list(points), payload))
        else:
            self._live().update(qe.UpdateOperation.set_payload_by_filter(points, payload))

    def _engine_drop_dense(self, embedded: qe.Filter, *, recreate: bool) -> None:
        shard = self._live()
        if recreate:
            shard.update(qe.UpdateOperation.delete_vector_name(DENSE))
            shard.update(qe.UpdateOperation.create_dense_vector(DENSE, self._dense_dim, qe.Distance.Cosine))
        else:
            shard.update(qe.UpdateOperation.delete_vectors_by_filter(embedded, [DENSE]))

    def _engine_scroll(
        self, flt: qe.Filter | None, *, limit: int, offset: object, payload: list[str] | bool, vectors: list[str]
    ) -> tuple[list[qe.Record], object]:
        request = qe.ScrollRequest(
            offset=cast("qe.PointId | None", offset),
            limit=limit,
            filter=flt,
            with_payload=payload,
            with_vector=vectors or False,
        )
        return self._live().scroll(request)

    def _engine_retrieve(self, ids: list[str], *, payload: bool) -> list[qe.Record]:
        return self._live().retrieve(list(ids), with_payload=payload, with_vector=False)

    def _engine_query(
        self, using: str, vector: SparseVector | list[float], flt: qe.Filter | None, limit: int, *, payload: bool
    ) -> list[EngineHit]:
        request = qe.QueryRequest(
            limit=limit, query=_nearest(using, vector), filter=flt, with_payload=payload, with_vector=False
        )
        return [EngineHit(str(h.id), h.score, h.payload) for h in self._live().query(request)]

    def _engine_query_batch(
        self, rankers: list[tuple[str, SparseVector | list[float]]], flt: qe.Filter | None, limit: int
    ) -> list[list[EngineHit]]:
        requests = [
            qe.QueryRequest(
                limit=limit, query=_nearest(using, vector), filter=flt, with_payload=False, with_vector=False
            )
            for using, vector in rankers
        ]
        lists = self._live().query_batch(qe.QueryBatchRequest(requests))
        return [[EngineHit(str(h.id), h.score, None) for h in hits] for hits in lists]

    def _engine_count(self, flt: qe.Filter | None) -> int:
        return self._live().count(qe.CountRequest(exact=True, filter=flt))

    def _engine_facet(self, key: str, *, exact: bool) -> dict[str, int]:
        """``exact=False`` is ~50x faster at 100k points and lists the same values."""
        response = self._live().facet(qe.FacetRequest(key=key, limit=_FACET_ALL, exact=exact))
        # an exact facet lists values whose points were all deleted, with count 0 (0.9.0)
        return {str(hit.value): hit.count for hit in response.hits if hit.count > 0}

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

    def _ensure_indexes(self) -> None:
        with engine_errors(self.name, "create payload indexes"):
            shard = self._live()
            present = set(shard.info().payload_schema)
            for field, schema in self._payload_indexes(_INDEX_SCHEMAS):
                if field not in present:
                    shard.update(qe.UpdateOperation.create_field_index(field, schema))


def _nearest(using: str, vector: SparseVector | list[float]) -> qe.Query:
    if isinstance(vector, SparseVector):
        return qe.Query.Nearest(qe.SparseVector(vector.indices, vector.values), using=using)
    return qe.Query.Nearest(vector, using=using)


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
