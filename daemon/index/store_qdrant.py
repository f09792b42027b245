"""VectorStore on qdrant-client: a Qdrant server at a URL, or local mode in a directory.

Server: each workspace is a collection of its own (``store_factory`` names it), which keeps every
workspace's points, payload indexes and BM25 statistics (the IDF modifier counts documents per
collection) apart; docs/scale-out.md has the measurement behind that choice. Every write waits for
the server's acknowledgement (``wait=True``), after which the server's WAL holds it: a client killed
at any point leaves what it was acknowledged and nothing half-written per point. Keyword prefix
matching arrived in Qdrant 1.19; against an older server a path glob's literal prefix is resolved
like any pattern (the stored paths, then an exact match on those), with the same results.

Local mode (``QdrantClient(path=...)``) is pure Python and brute force: right for tests and small
folders, slow at workspace scale (see bench/store.py). It ignores payload indexes (and warns
when asked for one), so they are created on a server only. Both modes keep the dense model and
dimension in the collection's metadata: another model drops the dense vectors for re-embedding;
another dimension cannot be applied to an existing collection and asks for a rebuild.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from qdrant_client import QdrantClient, models

from daemon.core.ports import SparseVector
from daemon.errors import StoreError
from daemon.index._payload import DENSE, LEXICAL, REBUILD_HINT, IndexKind, engine_errors
from daemon.index._store_base import EngineHit, PointStoreBase

__all__ = ["QdrantClientStore"]

logger = logging.getLogger(__name__)

_TIMEOUT_S = 30
_PREFIX_SINCE = (1, 19)
"""The first Qdrant server release with prefix matching on keyword indexes."""


class QdrantClientStore(PointStoreBase[models.Condition, models.Filter, models.PointStruct]):
    """The VectorStore protocol on one qdrant-client collection. Open with ``open_local``/``open_server``."""

    def __init__(self, client: QdrantClient, collection: str, *, where: str, local: bool) -> None:
        super().__init__(only_writer=local)
        self._client: QdrantClient | None = client
        self._collection = collection
        self._where = where
        self._local = local

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

    def _engine_close(self) -> None:
        """Release the client (and local mode's directory lock)."""
        client, self._client = self._client, None
        if client is not None:
            client.close()

    # -- engine primitives (see _store_base) ----------------------------------------------------

    def _cond_match(self, key: str, value: str | int) -> models.Condition:
        return models.FieldCondition(key=key, match=models.MatchValue(value=value))

    def _cond_any(self, key: str, values: list[str]) -> models.Condition:
        return models.FieldCondition(key=key, match=models.MatchAny(any=values))

    def _cond_prefix(self, key: str, prefix: str) -> models.Condition:
        return models.FieldCondition(key=key, match=models.MatchPrefix(prefix=prefix))

    def _engine_filter(self, must: list[models.Condition]) -> models.Filter:
        return models.Filter(must=list(must))

    def _engine_point(
        self, point_id: str, sparse: SparseVector, dense: list[float] | None, payload: dict[str, Any]
    ) -> models.PointStruct:
        vector: dict[str, models.Vector] = {
            LEXICAL: models.SparseVector(indices=list(sparse.indices), values=list(sparse.values))
        }
        if dense is not None:
            vector[DENSE] = dense
        return models.PointStruct(id=point_id, vector=vector, payload=payload)

    def _engine_upsert(self, points: list[models.PointStruct]) -> None:
        self._live().upsert(self._collection, points=points, wait=True)

    def _engine_delete(self, flt: models.Filter) -> None:
        self._live().delete(self._collection, points_selector=models.FilterSelector(filter=flt), wait=True)

    def _engine_set_dense(self, vectors: Mapping[str, list[float]]) -> None:
        points = [models.PointVectors(id=pid, vector={DENSE: vector}) for pid, vector in vectors.items()]
        self._live().update_vectors(self._collection, points=points, wait=True)

    def _engine_set_payload(self, points: list[str] | models.Filter, payload: dict[str, Any]) -> None:
        selector = (
            models.PointIdsList(points=list[models.ExtendedPointId](points))
            if isinstance(points, list)
            else models.FilterSelector(filter=points)
        )
        self._live().set_payload(self._collection, payload=payload, points=selector, wait=True)

    def _engine_drop_dense(self, embedded: models.Filter, *, recreate: bool) -> None:
        """``recreate`` is never asked: another dimension is refused at open (see ``_prepare``)."""
        selector = models.FilterSelector(filter=embedded)
        self._live().delete_vectors(self._collection, vectors=[DENSE], points=selector, wait=True)

    def _engine_scroll(
        self, flt: models.Filter | None, *, limit: int, offset: object, payload: list[str] | bool, vectors: list[str]
    ) -> tuple[list[models.Record], object]:
        return self._live().scroll(
            self._collection,
            scroll_filter=flt,
            limit=limit,
            offset=cast("models.ExtendedPointId | None", offset),
            with_payload=payload,
            with_vectors=vectors or False,
        )

    def _engine_retrieve(self, ids: list[str], *, payload: bool) -> list[models.Record]:
        return self._live().retrieve(self._collection, ids=list(ids), with_payload=payload, with_vectors=False)

    def _engine_query(
        self, using: str, vector: SparseVector | list[float], flt: models.Filter | None, limit: int, *, payload: bool
    ) -> list[EngineHit]:
        response = self._live().query_points(
            self._collection,
            query=_query_vector(vector),
            using=using,
            query_filter=flt,
            limit=limit,
            with_payload=payload,
        )
        return [EngineHit(str(h.id), h.score, h.payload) for h in response.points]

    def _engine_query_batch(
        self, rankers: list[tuple[str, SparseVector | list[float]]], flt: models.Filter | None, limit: int
    ) -> list[list[EngineHit]]:
        requests = [
            models.QueryRequest(query=_query_vector(vector), using=using, filter=flt, limit=limit, with_payload=False)
            for using, vector in rankers
        ]
        responses = self._live().query_batch_points(self._collection, requests=requests)
        return [[EngineHit(str(h.id), h.score, None) for h in response.points] for response in responses]

    def _engine_count(self, flt: models.Filter | None) -> int:
        return self._live().count(self._collection, count_filter=flt, exact=True).count

    def _engine_facet(self, key: str, *, exact: bool) -> dict[str, int]:
        client = self._live()
        total = client.count(self._collection, exact=True).count
        if total == 0:
            return {}
        response = client.facet(self._collection, key=key, limit=total, exact=exact)
        return {str(hit.value): hit.count for hit in response.hits if hit.count > 0}

    # -- internals ------------------------------------------------------------------------------

    def _live(self) -> QdrantClient:
        if self._client is None:
            raise StoreError(f"{self.name}: the store at {self._where} is closed")
        return self._client

    def _prepare(self, *, dense_dim: int, dense_model: str) -> None:
        """Create the collection, or check it and reconcile the dense model; closes on failure."""
        try:
            with engine_errors(self.name, f"open collection {self._collection} at {self._where}"):
                client = self._live()
                if not self._local:
                    self._prefix_match = _server_version(client.info().version) >= _PREFIX_SINCE
                if not client.collection_exists(self._collection):
                    try:
                        self._create(dense_dim=dense_dim, dense_model=dense_model)
                        return
                    except Exception:
                        if not client.collection_exists(self._collection):
                            raise
                        # another client (a teammate's daemon starting at the same time) made it first
                        logger.info(
                            "%s: collection %s was created meanwhile by another client", self.name, self._collection
                        )
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
                    self._drop_dense()
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
        schemas: dict[IndexKind, models.PayloadSchemaType | models.KeywordIndexParams] = {
            IndexKind.PREFIX_KEYWORD: models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, prefix=True)
            if self._prefix_match
            else models.PayloadSchemaType.KEYWORD,
            IndexKind.KEYWORD: models.PayloadSchemaType.KEYWORD,
            IndexKind.INTEGER: models.PayloadSchemaType.INTEGER,
        }
        for field, schema in self._payload_indexes(schemas):
            client.create_payload_index(self._collection, field_name=field, field_schema=schema, wait=True)


def _server_version(text: str) -> tuple[int, int]:
    """``(major, minor)`` of a server's version string; (0, 0) when it cannot be read (assume old)."""
    parts = text.lstrip("v").split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return 0, 0


def _query_vector(vector: SparseVector | list[float]) -> models.SparseVector | list[float]:
    if isinstance(vector, SparseVector):
        return models.SparseVector(indices=list(vector.indices), values=list(vector.values))
    return vector


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
