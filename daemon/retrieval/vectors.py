"""Dense vectors for fusion: candidate chunks (near duplicates, relevance) and free texts (queries, facts)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence

from daemon.core.lru import LruMap
from daemon.core.models import Chunk, content_hash
from daemon.core.ports import DenseEmbedder, VectorStore

__all__ = ["EmbedderVectors", "IndexVectors", "StoreVectors"]


class StoreVectors:
    """The vectors stored in the index for the chunks' paths (``VectorStore.dense_by_hash``)."""

    def __init__(self, store: VectorStore) -> None:
        self._store = store

    def vectors(self, chunks: Sequence[Chunk]) -> dict[str, list[float]]:
        stored = self._store.dense_by_hash({c.path for c in chunks})
        return {c.chunk_hash: stored[c.chunk_hash] for c in chunks if c.chunk_hash in stored}

    def text_vectors(self, texts: Sequence[str]) -> list[list[float]] | None:
        """None: the store holds chunk vectors only (fusion then ranks without similarities)."""
        return None


class EmbedderVectors:
    """The embedding model's vectors of the chunks (the same model the index stores), cached by chunk hash."""

    def __init__(self, embedder: DenseEmbedder, *, cache_size: int = 4096) -> None:
        self._embedder = embedder
        self._cache: LruMap[str, list[float]] = LruMap(cache_size)
        self._lock = threading.Lock()

    def vectors(self, chunks: Sequence[Chunk]) -> dict[str, list[float]]:
        with self._lock:
            found = {c.chunk_hash: v for c in chunks if (v := self._cache.get(c.chunk_hash)) is not None}
            missing = {c.chunk_hash: c for c in chunks if c.chunk_hash not in found}
            if missing:
                for key, vector in zip(missing, self._embedder.embed_documents(list(missing.values())), strict=True):
                    self._cache.put(key, vector)
                    found[key] = vector
            return found

    def text_vectors(self, texts: Sequence[str]) -> list[list[float]] | None:
        """Vectors of ``texts`` as the model embeds a query (no prefix), cached by text."""
        with self._lock:
            keys = ["text:" + content_hash(t) for t in texts]
            out: list[list[float]] = []
            for key, text in zip(keys, texts, strict=True):
                vector = self._cache.get(key)
                if vector is None:
                    vector = self._embedder.embed_query(text)
                    self._cache.put(key, vector)
                out.append(vector)
            return out


class IndexVectors:
    """The index's stored vectors first; the model's for chunks not embedded yet, and for texts.

    Near-duplicate removal then compares the vectors the index holds (the issue's "stored
    vectors"), and a retrieval embeds only what the index has not embedded yet.
    """

    def __init__(self, stored: Callable[[Iterable[str]], dict[str, list[float]]], model: EmbedderVectors) -> None:
        self._stored = stored
        self._model = model

    def vectors(self, chunks: Sequence[Chunk]) -> dict[str, list[float]]:
        found = self._stored({c.path for c in chunks})
        out = {c.chunk_hash: found[c.chunk_hash] for c in chunks if c.chunk_hash in found}
        missing = [c for c in chunks if c.chunk_hash not in out]
        if missing:
            out.update(self._model.vectors(missing))
        return out

    def text_vectors(self, texts: Sequence[str]) -> list[list[float]] | None:
        return self._model.text_vectors(texts)
