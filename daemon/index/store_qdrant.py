"""VectorStore on qdrant-client: a Qdrant server at a URL, or local mode in a directory.

Local mode (``QdrantClient(path=...)``) is pure Python and brute force: right for tests and small
folders, slow at workspace scale (see bench/store.py). It ignores payload indexes (and warns
when asked for one), so they are created on a server only. Both modes keep the dense model and
dimension in the collection's metadata: another model drops the dense vectors for re-embedding;
another dimension cannot be applied to an existing collection and asks for a rebuild.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from qdrant_client import QdrantClient, models
from qdrant_client.conversions.common_types import PointId

from daemon.core.models import Chunk, SearchFilters
from daemon.core.ports import ScoredChunk, SparseVector, StoredPoint
from daemon.errors import StoreError
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
    rrf_fuse,
)
from daemon.index.encoded_chunks import EncodedChunks

__all__ = ["QdrantClientStore"]

logger = logging.getLogger(__name__)

_WRITE_BATCH = 256
_FILTER_BATCH = 512
_SCROLL_PAGE = 256
_TIMEOUT_S = 30


def _match(key: str, value: str | int) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def _any_of(key: str, values: list[str]) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchAny(any=values))


def _is_embedded(flag: int) -> models.FieldCondition:
    return _match(EMBEDDED, flag)


class _NoMatch(Exception):
    """A filter that no point can satisfy (a glob that matches no stored path)."""


class QdrantClientStore:
    """The VectorStore protocol on one qdrant-client collection. Open with ``open_local``/``open_server``."""

    def __init__(self, client: QdrantClient, collection: str, *, where: str, local: bool) -> None:
        self._client: QdrantClient | None = client
        self._collection = collection
        self._where = where
        self._local = local
        self._write_lock = threading.Lock()

    # -- lifecycle ------------------------------------------------------------------------------

    @classmethod
    def open_local(cls, directory: Path, collection: str, *, dense_dim: int, dense_model: str) -> QdrantClientStore:
        """Local mode in ``directory`` (created when absent)."""
        try:
            directory.mkdir(parents=True, exist_ok=True)
            _probe_lock(directory)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                client = QdrantClient(path=str(directory))
            for warning in caught:
                logger.info("qdrant local mode: %s", warning.message)
        except StoreError:
            raise
        except Exception as exc:
            raise StoreError(
                f"the index at {directory} cannot be loaded; delete that directory or {REBUILD_HINT}", cause=exc
            ) from exc
        store = cls(client, collection, where=str(directory), local=True)
        store._prepare(dense_dim=dense_dim, dense_model=dense_model)
        return store

    @classmethod
    def open_server(
        cls, url: str, collection: str, *, api_key: str | None, dense_dim: int, dense_model: str
    ) -> QdrantClientStore:
        """A Qdrant server at ``url``; StoreError when it cannot be reached."""
        try:
            client = QdrantClient(url=url, api_key=api_key, timeout=_TIMEOUT_S, check_compatibility=False)
        except Exception as exc:
            raise StoreError(f"cannot connect to the Qdrant server at {url}", cause=exc) from exc
        store = cls(client, collection, where=url, local=False)
        store._prepare(dense_dim=dense_dim, dense_model=dense_model)
        return store

    @property
    def name(self) -> str:
        return "qdrant-local" if self._local else "qdrant-server"

    @property
    def collection(self) -> str:
        return self._collection

    def flush(self) -> None:
        """Nothing to do: both modes persist every acknowledged write (``wait=True``)."""
        self._live()

    def close(self) -> None:
        """Release the client (and local mode's directory lock); calling it again does nothing."""
        client, self._client = self._client, None
        if client is None:
            return
        with engine_errors(self.name, "close"):
            client.close()

    # -- writes ---------------------------------------------------------------------------------

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        with self._write_lock, engine_errors(self.name, "upsert"):
            client = self._live()
            for batch in batched(points, _WRITE_BATCH):
                client.upsert(self._collection, points=[_to_point(p) for p in batch], wait=True)

    def upsert_encoded(self, files: Sequence[EncodedChunks], dense: Mapping[str, list[float]]) -> None:
        """Insert or replace the chunks of ``files`` (the index pass's fast path, see ``encoded_chunks``)."""
        points = (_encoded_point(f, i, dense) for f in files for i in range(len(f)))
        with self._write_lock, engine_errors(self.name, "upsert"):
            client = self._live()
            for batch in batched(points, _WRITE_BATCH):
                client.upsert(self._collection, points=batch, wait=True)

    def delete_paths(self, paths: Iterable[str]) -> None:
        unique = sorted(set(paths))
        with self._write_lock, engine_errors(self.name, "delete by path"):
            client = self._live()
            for batch in batched(unique, _FILTER_BATCH):
                selector = models.FilterSelector(filter=models.Filter(must=[_any_of(PATH, batch)]))
                client.delete(self._collection, points_selector=selector, wait=True)

    def set_dense(self, vectors: Mapping[str, list[float]]) -> None:
        """Attach dense vectors; ids that no longer exist (deleted meanwhile) are skipped."""
        if not vectors:
            return
        with self._write_lock, engine_errors(self.name, "set dense vectors"):
            client = self._live()
            for batch in batched(list(vectors), _WRITE_BATCH):
                records = client.retrieve(self._collection, ids=batch, with_payload=False, with_vectors=False)
                present = [str(r.id) for r in records]
                if not present:
                    continue
                # vector first, flag second: a crash in between leaves a point that is re-embedded
                point_vectors = [models.PointVectors(id=pid, vector={DENSE: vectors[pid]}) for pid in present]
                client.update_vectors(self._collection, points=point_vectors, wait=True)
                selector = models.PointIdsList(points=list[models.ExtendedPointId](present))
                client.set_payload(self._collection, payload={EMBEDDED: EMBEDDED_YES}, points=selector, wait=True)

    # -- reads ----------------------------------------------------------------------------------

    def dense_by_hash(self, paths: Iterable[str]) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        with engine_errors(self.name, "read dense vectors"):
            for batch in batched(sorted(set(paths)), _FILTER_BATCH):
                flt = models.Filter(must=[_any_of(PATH, batch), _is_embedded(EMBEDDED_YES)])
                for record in self._scroll_all(flt, with_payload=[CHUNK_HASH], with_vectors=[DENSE]):
                    vector = _dense_of(record.vector)
                    if vector is not None and record.payload is not None:
                        out[str(record.payload[CHUNK_HASH])] = vector
        return out

    def missing_dense(self, limit: int, paths: Sequence[str] | None = None) -> list[tuple[str, Chunk]]:
        if limit <= 0 or (paths is not None and not paths):
            return []
        must: list[models.Condition] = [_is_embedded(EMBEDDED_NO)]
        if paths is not None:
            must.append(_any_of(PATH, sorted(set(paths))))
        with engine_errors(self.name, "list points without a dense vector"):
            records, _ = self._live().scroll(
                self._collection,
                scroll_filter=models.Filter(must=must),
                limit=limit,
                with_payload=True,
                with_vectors=False,
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
        rankers: list[tuple[str, models.SparseVector | list[float]]] = []
        if sparse is not None and sparse.indices:
            rankers.append((LEXICAL, models.SparseVector(indices=list(sparse.indices), values=list(sparse.values))))
        if dense is not None:
            rankers.append((DENSE, list(dense)))
        if not rankers or limit <= 0:
            return []
        with engine_errors(self.name, "query"):
            client = self._live()
            try:
                flt = self._filter(filters)
            except _NoMatch:
                return []
            if len(rankers) == 1:
                name, vector = rankers[0]
                response = client.query_points(
                    self._collection, query=vector, using=name, query_filter=flt, limit=limit, with_payload=True
                )
                return [
                    ScoredChunk(id=str(h.id), score=h.score, chunk=chunk_from_payload(h.payload), sources=(name,))
                    for h in response.points
                ]
            depth = max(prefetch_limit, limit)
            requests = [
                models.QueryRequest(query=vector, using=name, filter=flt, limit=depth, with_payload=False)
                for name, vector in rankers
            ]
            responses = client.query_batch_points(self._collection, requests=requests)
            fused = rrf_fuse(
                [
                    (name, [str(h.id) for h in response.points])
                    for (name, _), response in zip(rankers, responses, strict=True)
                ],
                strengths=[[h.score for h in response.points] for response in responses],
            )[:limit]
            records = client.retrieve(self._collection, ids=[f.id for f in fused], with_payload=True)
            by_id = {str(r.id): r for r in records}
            return [
                ScoredChunk(id=f.id, score=f.score, chunk=chunk_from_payload(by_id[f.id].payload), sources=f.sources)
                for f in fused
                if f.id in by_id
            ]

    def count(self, *, embedded_only: bool = False) -> int:
        flt = models.Filter(must=[_is_embedded(EMBEDDED_YES)]) if embedded_only else None
        with engine_errors(self.name, "count"):
            return self._live().count(self._collection, count_filter=flt, exact=True).count

    def counts_by_path(self) -> dict[str, int]:
        return self._facet(PATH)

    def counts_by_kind(self) -> dict[str, int]:
        return self._facet(KIND)

    # -- internals ------------------------------------------------------------------------------

    def _live(self) -> QdrantClient:
        if self._client is None:
            raise StoreError(f"{self.name}: the store at {self._where} is closed")
        return self._client

    def _facet(self, key: str, *, exact: bool = True) -> dict[str, int]:
        with engine_errors(self.name, f"count by {key}"):
            client = self._live()
            total = client.count(self._collection, exact=True).count
            if total == 0:
                return {}
            response = client.facet(self._collection, key=key, limit=total, exact=exact)
            return {str(hit.value): hit.count for hit in response.hits if hit.count > 0}

    def _scroll_all(
        self, flt: models.Filter, *, with_payload: list[str] | bool, with_vectors: list[str] | bool
    ) -> Iterable[models.Record]:
        client = self._live()
        offset: PointId | None = None
        while True:
            records, offset = client.scroll(
                self._collection,
                scroll_filter=flt,
                limit=_SCROLL_PAGE,
                offset=offset,
                with_payload=with_payload,
                with_vectors=with_vectors,
            )
            yield from records
            if offset is None:
                return

    def _filter(self, filters: SearchFilters | None) -> models.Filter | None:
        """The engine filter for ``filters``; raises _NoMatch when the path glob matches no stored path."""
        if filters is None:
            return None
        must: list[models.Condition] = []
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
                    must.append(models.FieldCondition(key=PATH, match=models.MatchPrefix(prefix=glob.prefix)))
            else:
                selected = glob.select(self._facet(PATH, exact=False))
                if not selected:
                    raise _NoMatch
                must.append(_any_of(PATH, selected))
        return models.Filter(must=must) if must else None

    def _prepare(self, *, dense_dim: int, dense_model: str) -> None:
        """Create the collection, or check it and reconcile the dense model; closes on failure."""
        try:
            with engine_errors(self.name, f"open collection {self._collection} at {self._where}"):
                client = self._live()
                if not client.collection_exists(self._collection):
                    self._create(dense_dim=dense_dim, dense_model=dense_model)
                    return
                config = client.get_collection(self._collection).config
                vectors = config.params.vectors
                params = vectors.get(DENSE) if isinstance(vectors, dict) else None
                sparse = config.params.sparse_vectors or {}
                if params is None or LEXICAL not in sparse:
                    raise StoreError(
                        f"collection {self._collection} at {self._where} was not made by ided; "
                        f"set another qdrant.collection_prefix or {REBUILD_HINT}"
                    )
                if params.size != dense_dim:
                    raise StoreError(
                        f"collection {self._collection} at {self._where} holds {params.size}-dim dense vectors, "
                        f"the configured model makes {dense_dim}; {REBUILD_HINT}"
                    )
                meta: dict[str, Any] = dict(config.metadata or {})
                if meta.get("dense_model") != dense_model:
                    self._reset_dense()
                    client.update_collection(
                        self._collection, metadata={"dense_model": dense_model, "dense_dim": dense_dim}
                    )
        except BaseException:
            self.close()
            raise

    def _create(self, *, dense_dim: int, dense_model: str) -> None:
        client = self._live()
        client.create_collection(
            self._collection,
            vectors_config={DENSE: models.VectorParams(size=dense_dim, distance=models.Distance.COSINE)},
            sparse_vectors_config={LEXICAL: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            metadata={"dense_model": dense_model, "dense_dim": dense_dim},
        )
        if self._local:
            return  # local mode ignores payload indexes and warns about them
        indexes: dict[str, models.PayloadSchemaType | models.KeywordIndexParams] = {
            PATH: models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, prefix=True),
            KIND: models.PayloadSchemaType.KEYWORD,
            LANGUAGE: models.PayloadSchemaType.KEYWORD,
            EMBEDDED: models.PayloadSchemaType.INTEGER,
        }
        for field, schema in indexes.items():
            client.create_payload_index(self._collection, field_name=field, field_schema=schema, wait=True)

    def _reset_dense(self) -> None:
        logger.warning("%s: the dense model changed; dropping stored dense vectors for re-embedding", self.name)
        client = self._live()
        selector = models.FilterSelector(filter=models.Filter(must=[_is_embedded(EMBEDDED_YES)]))
        with self._write_lock:
            client.delete_vectors(self._collection, vectors=[DENSE], points=selector, wait=True)
            client.set_payload(self._collection, payload={EMBEDDED: EMBEDDED_NO}, points=selector, wait=True)


def _to_point(point: StoredPoint) -> models.PointStruct:
    vector: dict[str, models.Vector] = {
        LEXICAL: models.SparseVector(indices=list(point.sparse.indices), values=list(point.sparse.values))
    }
    if point.dense is not None:
        vector[DENSE] = list(point.dense)
    return models.PointStruct(
        id=point.id, vector=vector, payload=chunk_to_payload(point.chunk, embedded=point.dense is not None)
    )


def _encoded_point(f: EncodedChunks, i: int, dense: Mapping[str, list[float]]) -> models.PointStruct:
    chunk_hash = f.hashes[i]
    vector: dict[str, models.Vector] = {
        LEXICAL: models.SparseVector(indices=f.sparse_indices[i], values=f.sparse_values[i])
    }
    dense_vector = dense.get(chunk_hash)
    if dense_vector is not None:
        vector[DENSE] = dense_vector
    payload = build_payload(
        path=f.path,
        kind=f.kinds[i],
        language=f.languages[i],
        chunk_hash=chunk_hash,
        chunk_json=f.chunk_json[i],
        embedded=dense_vector is not None,
    )
    return models.PointStruct(id=f.ids[i], vector=vector, payload=payload)


def _probe_lock(directory: Path) -> None:
    """Refuse early when another client holds local mode's lock file.

    QdrantLocal itself notices only after loading every point, and then leaks its lock file and
    SQLite handles; probing the same ``flock`` first avoids both.
    """
    try:
        import fcntl
    except ImportError:  # not POSIX: leave it to QdrantLocal
        return
    lock_path = directory / ".lock"
    with open(lock_path, "a+") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise StoreError(f"the index at {directory} is open in another process", cause=exc) from exc
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _dense_of(vector: object) -> list[float] | None:
    named = cast("dict[str, object]", vector).get(DENSE) if isinstance(vector, dict) else None
    if not isinstance(named, list):
        return None
    return [float(x) for x in cast("list[float]", named)]
