"""Dense embeddings with fastembed (ONNX): ``FastembedEmbedder`` implements ``DenseEmbedder``.

The model directory (by default the bundled all-MiniLM-L6-v2 int8, see ``model_files``) is registered
with fastembed as a custom model (mean pooling, L2-normalized) and loaded from that directory only:
nothing is ever downloaded.

Truncation: fastembed sets the tokenizer's truncation from ``tokenizer_config.json``
(``model_max_length``, 512 for MiniLM) and offers no argument for it, so after loading, the
tokenizer fastembed uses is re-configured to ``max_tokens`` (special tokens [CLS]/[SEP] included).
Attention cost grows with the padded batch length, so texts are sorted by length, embedded in
batches of ``batch_size`` and put back in input order.

``count_tokens`` counts with the same tokenizer, untruncated and without special tokens.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from tokenizers import Tokenizer

from daemon.errors import EmbeddingUnavailable
from daemon.index.embed_text import document_text
from daemon.index.fastembed_tokens import limit_tokens
from daemon.index.model_files import resolve_model_dir

if TYPE_CHECKING:
    from daemon.config import EmbeddingConfig
    from daemon.core.models import Chunk

# fastembed (and onnxruntime behind it) is imported where a model is loaded, not with this module:
# it costs ~0.3 s, which every command and front that never embeds would pay at start-up.

__all__ = ["DEFAULT_MODEL_NAME", "FastembedEmbedder", "register_custom_model"]

logger = logging.getLogger(__name__)

DEFAULT_MODEL_NAME = "ided/all-MiniLM-L6-v2-int8"
_REGISTRY_LOCK = threading.Lock()
_PROBE_TEXT = "def probe(): return 1"


def _fastembed_name(model_name: str, dim: int) -> str:
    """The name registered with fastembed: never one of fastembed's built-in models, one per dim."""
    return f"{model_name}@ided-{dim}d"


def register_custom_model(model_name: str, dim: int) -> str:
    """Register ``model_name`` (mean pooling, normalized) with fastembed once per process; return its key.

    Idempotent: a second call, from any instance or thread, finds the registration and returns.
    """
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    key = _fastembed_name(model_name, dim)
    with _REGISTRY_LOCK:
        known = {str(m["model"]).lower() for m in TextEmbedding.list_supported_models()}
        if key.lower() not in known:
            TextEmbedding.add_custom_model(
                model=key,
                pooling=PoolingType.MEAN,
                normalization=True,
                sources=ModelSource(hf=key),
                dim=dim,
                model_file="model.onnx",
                description=f"{model_name} (registered by ided)",
            )
            logger.debug("registered fastembed custom model %s", key)
    return key


class FastembedEmbedder:
    """Dense embedder over a local ONNX model directory (implements ``DenseEmbedder``).

    Args:
        model_dir: directory with ``model.onnx``, ``tokenizer.json``, ``tokenizer_config.json`` (and
            ``config.json``, ``special_tokens_map.json``).
        model_name: name recorded for the vectors (``DenseEmbedder.name``).
        dim: expected vector size; checked against the model's output at load.
        max_tokens: truncation length per text, special tokens included.
        batch_size: texts per ONNX run.
        threads: ONNX intra-op threads; None lets onnxruntime use every core.
        memory_arena: keep onnxruntime's CPU memory arena (faster; it grows to the peak of every
            batch shape and is never given back, so off by default).
        cache_dir: fastembed's cache directory (nothing is downloaded into it); None: fastembed's default.
        sort_by_length: embed in length-sorted batches (output order is always the input order).
        text_of: what text of a chunk to embed (default ``embed_text.document_text``).

    Raises:
        EmbeddingUnavailable: the model cannot be loaded (the cause is attached), or its output size
            is not ``dim``.
    """

    def __init__(
        self,
        model_dir: Path,
        *,
        model_name: str = DEFAULT_MODEL_NAME,
        dim: int = 384,
        max_tokens: int = 256,
        batch_size: int = 32,
        threads: int | None = None,
        memory_arena: bool = False,
        cache_dir: Path | None = None,
        sort_by_length: bool = True,
        text_of: Callable[[Chunk], str] = document_text,
    ) -> None:
        if max_tokens < 2:
            raise ValueError(f"max_tokens must be at least 2 (got {max_tokens})")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1 (got {batch_size})")
        self._name = model_name
        self._dim = dim
        self._max_tokens = max_tokens
        self._batch_size = batch_size
        self._sort_by_length = sort_by_length
        self._text_of = text_of
        self._model_dir = model_dir
        key = register_custom_model(model_name, dim)
        from fastembed import TextEmbedding

        try:
            self._model = TextEmbedding(
                model_name=key,
                cache_dir=str(cache_dir) if cache_dir is not None else None,
                threads=threads,
                specific_model_path=str(model_dir),
                local_files_only=True,
                enable_cpu_mem_arena=memory_arena,
            )
        except Exception as exc:
            raise EmbeddingUnavailable(f"cannot load dense model {model_name} from {model_dir}", cause=exc) from exc
        try:
            limit_tokens(self._model, max_tokens)
        except RuntimeError as exc:
            raise EmbeddingUnavailable(str(exc)) from exc
        try:
            self._counter = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        except Exception as exc:
            raise EmbeddingUnavailable(f"cannot read {model_dir / 'tokenizer.json'}", cause=exc) from exc
        self._counter.no_truncation()
        self._counter.no_padding()
        probe = self.embed_texts([_PROBE_TEXT])[0]
        if len(probe) != dim:
            raise EmbeddingUnavailable(
                f"dense model {model_name} in {model_dir} outputs {len(probe)} dimensions, "
                f"but embedding.dim is {dim}; set embedding.dim to {len(probe)}"
            )
        logger.info(
            "loaded dense model %s from %s (dim %d, max_tokens %d, batch %d, threads %s)",
            model_name,
            model_dir,
            dim,
            max_tokens,
            batch_size,
            threads if threads is not None else "all",
        )

    @classmethod
    def from_config(cls, config: EmbeddingConfig, cache_root: Path) -> FastembedEmbedder:
        """The embedder ``config`` describes: ``embedding.model_dir`` or the bundled model under ``cache_root``.

        Raises:
            EmbeddingUnavailable: embeddings are disabled, or the model cannot be found or loaded.
        """
        if not config.enabled:
            raise EmbeddingUnavailable("dense embeddings are disabled (embedding.enabled = false)")
        model_dir = resolve_model_dir(config, cache_root)
        return cls(
            model_dir,
            model_name=config.model_name,
            dim=config.dim,
            max_tokens=config.max_tokens,
            batch_size=config.batch_size,
            threads=config.threads,
            memory_arena=config.memory_arena,
            cache_dir=cache_root / "fastembed",
        )

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    @property
    def model_dir(self) -> Path:
        return self._model_dir

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` for the embedding model's tokenizer: untruncated, special tokens not counted."""
        return len(self._counter.encode(text, add_special_tokens=False).ids)

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        """``count_tokens`` for many texts at once (the tokenizer runs them in parallel)."""
        return [len(e.ids) for e in self._counter.encode_batch(list(texts), add_special_tokens=False)]

    def _run(self, texts: list[str]) -> list[list[float]]:
        try:
            rows: list[Any] = list(self._model.embed(texts, batch_size=len(texts)))
        except Exception as exc:
            raise EmbeddingUnavailable(
                f"dense model {self._name} failed on a batch of {len(texts)}", cause=exc
            ) from exc
        matrix = np.asarray(rows, dtype=np.float32)
        return cast(list[list[float]], matrix.tolist())

    def embed_texts(self, texts: Sequence[str]) -> list[list[float]]:
        """Normalized vectors of ``texts``, in input order."""
        n = len(texts)
        if n == 0:
            return []
        order = sorted(range(n), key=lambda i: len(texts[i])) if self._sort_by_length else list(range(n))
        out: list[list[float]] = [[] for _ in range(n)]
        for start in range(0, n, self._batch_size):
            batch = order[start : start + self._batch_size]
            for i, vector in zip(batch, self._run([texts[i] for i in batch]), strict=True):
                out[i] = vector
        return out

    def embed_documents(self, chunks: Sequence[Chunk]) -> list[list[float]]:
        """Vectors of ``embed_text.document_text(chunk)`` (or ``text_of``), in input order."""
        return self.embed_texts([self._text_of(c) for c in chunks])

    def embed_query(self, text: str) -> list[float]:
        """Vector of a search query (the model has no query prefix)."""
        return self._run([text])[0]
