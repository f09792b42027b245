"""Ports: the interfaces the index, intel and retrieval layers implement, and the workspace API.

Store, encoders and chunkers are CPU- or disk-bound and blocking by design; async callers
(the daemon's fronts) run them through ``asyncio.to_thread``.

``Workspace`` is the one API the fronts and the pipeline hold for a workspace's search, code
intelligence and status. Two transports implement it (``daemon.service.workspace.local`` in this
process, ``daemon.service.workspace.remote`` through the daemon's socket); a holder never asks which.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar

from pydantic import BaseModel

if TYPE_CHECKING:
    from daemon.core.intel_models import IntelStatus
    from daemon.core.models import Chunk, SearchFilters, SearchMode, SearchResult

__all__ = [
    "DenseEmbedder",
    "Reranker",
    "ScoredChunk",
    "SparseEncoder",
    "SparseVector",
    "StoreQuery",
    "StoredPoint",
    "VectorStore",
    "Workspace",
]

R = TypeVar("R", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class SparseVector:
    """A sparse vector: parallel lists of token ids and weights (ids unique)."""

    indices: list[int]
    values: list[float]


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredPoint:
    """A chunk with its vectors, ready to be written. ``dense`` is None until embedded."""

    id: str
    chunk: Chunk
    sparse: SparseVector
    dense: list[float] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoredChunk:
    """One result of a store query."""

    id: str
    score: float
    chunk: Chunk
    sources: tuple[str, ...] = field(default=())


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreQuery:
    """One question to a ``VectorStore``: each given vector ranks the points under ``filters`` (and in
    ``paths``, when given); with both, each ranks ``prefetch_limit`` (at least ``limit``) and RRF fuses
    them."""

    sparse: SparseVector | None = None
    dense: list[float] | None = None
    filters: SearchFilters | None = None
    paths: tuple[str, ...] = ()
    """Only the chunks of these files (workspace-relative, exact); empty: every file."""
    limit: int
    prefetch_limit: int = 0


class SparseEncoder(Protocol):
    """Turns text into BM25-style sparse vectors (IDF is applied by the store)."""

    @property
    def name(self) -> str: ...

    def encode_document(self, chunk: Chunk) -> SparseVector: ...

    def encode_query(self, text: str) -> SparseVector: ...

    def tokenize(self, text: str) -> list[str]:
        """The lexical terms of ``text``, in order, with repeats."""
        ...

    def encode_terms(self, weights: Mapping[str, float]) -> SparseVector:
        """A query vector from terms (as ``tokenize`` gives them) and their weights."""
        ...


class DenseEmbedder(Protocol):
    """Dense text embeddings (normalized, cosine)."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, chunks: Sequence[Chunk]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


class Reranker(Protocol):
    """A cross-encoder: scores (query, passage) pairs, higher is more relevant."""

    @property
    def name(self) -> str: ...

    def score(self, query: str, passages: Sequence[str]) -> list[float]: ...


class VectorStore(Protocol):
    """One workspace's collection of chunk points with a sparse and an optional dense vector.

    Implementations: Qdrant Edge (in-process, default) and qdrant-client (a Qdrant server, or local
    mode), both on one shared body of code over engine primitives (``daemon.index._store_base``).
    Every method is blocking. Point ids are deterministic (see ``chunk_point_id``), so writing the
    same chunk twice never duplicates it. On a server, several processes may hold the same
    collection at once (one indexer, many searchers); Edge lets one process open a shard.
    """

    @property
    def name(self) -> str: ...

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        """Insert or replace points (sparse always; dense when given)."""
        ...

    def delete_paths(self, paths: Iterable[str]) -> None:
        """Delete every point whose chunk lives in one of ``paths``."""
        ...

    def dense_by_hash(self, paths: Iterable[str]) -> dict[str, list[float]]:
        """Dense vectors already stored for chunks of ``paths``, keyed by ``Chunk.chunk_hash``."""
        ...

    def set_dense(self, vectors: Mapping[str, list[float]]) -> None:
        """Attach dense vectors to existing points, by point id."""
        ...

    def missing_dense(self, limit: int, paths: Sequence[str] | None = None) -> list[tuple[str, Chunk]]:
        """Up to ``limit`` points that have no dense vector yet (restricted to ``paths`` when given)."""
        ...

    def query(self, request: StoreQuery) -> list[ScoredChunk]:
        """The best ``request.limit`` points for the request's vectors (see ``StoreQuery``)."""
        ...

    def count(self, *, embedded_only: bool = False) -> int: ...

    def counts_by_path(self) -> dict[str, int]:
        """Number of points per path (used to repair after a crash)."""
        ...

    def counts_by_kind(self) -> dict[str, int]: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


class Workspace(Protocol):
    """One workspace's search, code intelligence and status, whichever process serves them.

    Every method may raise ``DaemonError`` with its code (``invalid_tool_input``, ``indexing``,
    ``language_server``, ...), the same code whichever transport carried the call.
    """

    @property
    def serves_intel(self) -> bool:
        """Whether code intelligence answers here (language servers attached); the index always does."""
        ...

    async def search(
        self, query: str, *, k: int | None, filters: SearchFilters | None, mode: SearchMode | None = None
    ) -> SearchResult:
        """Hybrid search over the workspace index (``mode`` None: hybrid)."""
        ...

    async def intel(self, method: str, params: BaseModel, result: type[R]) -> R:
        """The code-intel capability served as ``method`` (``intel/definition``, ...), answered as ``result``."""
        ...

    async def status(self) -> IntelStatus:
        """The index's and the language servers' state."""
        ...

    async def aclose(self) -> None:
        """Release what this handle holds (a connection, or the in-process servers and index)."""
        ...
