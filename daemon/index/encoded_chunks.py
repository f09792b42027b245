"""One file's chunks in the form the store writer needs: built in the workers, written without pydantic.

A full index pass has one writer (the process that owns the store) fed by parsing workers. What
crosses between them decides how much the writer does per chunk, and the writer is the pass's
bottleneck (qdrant-edge-py holds the GIL on every call). So a worker hands over, per file, only
builtins laid out column by column: point ids, chunk hashes, kinds, languages, each chunk as its
payload JSON string (see ``daemon.index._payload``) and each BM25 vector as two lists. Pickling
that is a few memory copies; pickling pydantic ``Chunk`` models instead cost ~30 µs per chunk in
the worker and ~67 µs to unpickle in the writer (measured on 15k site-packages chunks).

A store that implements :class:`EncodedChunkWriter` builds its engine points straight from these
columns; any other store gets :class:`~daemon.core.ports.StoredPoint` values rebuilt from them
(:func:`write_encoded` chooses).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from daemon.core.models import Chunk
from daemon.core.ports import SparseVector, StoredPoint, VectorStore

__all__ = ["EncodedChunkWriter", "EncodedChunks", "write_encoded"]


@dataclass(frozen=True, slots=True, kw_only=True)
class EncodedChunks:
    """The chunks of one file, column by column; row ``i`` is the file's ``i``-th chunk."""

    path: str
    ids: tuple[str, ...]
    hashes: tuple[str, ...]
    kinds: tuple[str, ...]
    languages: tuple[str, ...]
    chunk_json: tuple[str, ...]
    """Each chunk as ``daemon.index._payload.chunk_json`` writes it."""
    sparse_indices: tuple[list[int], ...]
    sparse_values: tuple[list[float], ...]

    def __len__(self) -> int:
        return len(self.ids)

    def stored_points(self, dense: Mapping[str, list[float]]) -> list[StoredPoint]:
        """The rows as StoredPoints (chunks rebuilt from JSON), with a reused dense vector where ``dense`` has one."""
        return [
            StoredPoint(
                id=self.ids[i],
                chunk=Chunk.model_validate_json(self.chunk_json[i]),
                sparse=SparseVector(indices=self.sparse_indices[i], values=self.sparse_values[i]),
                dense=dense.get(self.hashes[i]),
            )
            for i in range(len(self.ids))
        ]


@runtime_checkable
class EncodedChunkWriter(Protocol):
    """A store that writes :class:`EncodedChunks` directly."""

    def upsert_encoded(self, files: Sequence[EncodedChunks], dense: Mapping[str, list[float]]) -> None:
        """Insert or replace every row of ``files``; a row whose chunk hash is in ``dense`` gets that vector."""
        ...


def write_encoded(store: VectorStore, files: Sequence[EncodedChunks], dense: Mapping[str, list[float]]) -> None:
    """Write ``files`` to ``store`` by its fastest path (``dense``: reusable vectors by chunk hash)."""
    if isinstance(store, EncodedChunkWriter):
        store.upsert_encoded(files, dense)
        return
    store.upsert([point for f in files for point in f.stored_points(dense)])
