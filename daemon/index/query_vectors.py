"""The dense model with a memory of its recent query vectors.

A retrieval asks the index the same question under several filters (code, docs, each decision
glob) and the stages of a plan share questions (the task itself, its identifiers): without a
memory every one of those searches runs the model on the same text again. ``RememberedQueries``
keeps the vectors of the last ``size`` distinct query texts (least recently used out first);
documents are embedded as before. A query's vector depends only on its text and the model, which
the wrapper is bound to, so a remembered vector is always the one the model would give.

The model loads on the first query that needs a vector, not when the wrapper is made: while the
vectors fill, every search ranks lexically, so the daemon does not hold the query session (onnxruntime
and the weights: the daemon held 99 against 176 to 182 MB while requests' vectors filled) until a
search can use it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from daemon.core.lru import LruMap
from daemon.core.models import Chunk
from daemon.core.ports import DenseEmbedder

__all__ = ["RememberedQueries"]


class RememberedQueries:
    """``DenseEmbedder`` over the model ``load`` gives (called once, on first need), remembering the
    vectors of the last ``size`` query texts. ``load`` raises ``EmbeddingUnavailable`` when the model
    cannot load; each use raises it then."""

    def __init__(self, load: Callable[[], DenseEmbedder], *, size: int = 512) -> None:
        self._load = load
        self._model: DenseEmbedder | None = None
        self._vectors: LruMap[str, list[float]] = LruMap(size)
        self._lock = threading.Lock()
        self._loading = threading.Lock()

    def _loaded(self) -> DenseEmbedder:
        with self._loading:
            if self._model is None:
                self._model = self._load()
            return self._model

    @property
    def name(self) -> str:
        return self._loaded().name

    @property
    def dim(self) -> int:
        return self._loaded().dim

    def embed_documents(self, chunks: Sequence[Chunk]) -> list[list[float]]:
        return self._loaded().embed_documents(chunks)

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            known = self._vectors.get(text)
            if known is not None:
                return list(known)
        vector = self._loaded().embed_query(text)
        with self._lock:
            self._vectors.put(text, list(vector))
        return vector
