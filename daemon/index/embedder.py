"""Dense embeddings straight on onnxruntime: ``OnnxEmbedder`` implements ``DenseEmbedder``.

The model directory (by default the bundled all-MiniLM-L6-v2 re-quantized for onnxruntime's integer
kernels, see ``model_files`` and ``model_quantize``) holds an ONNX graph that outputs one vector per
token; a text's vector is the mean of its tokens' vectors divided by its L2 norm (summed in float64,
cast back to float32). Tokens come from ``model_tokenizer.batch_tokenizer``, set up as fastembed sets
it up; fastembed itself is never imported: its import alone costs ~0.4 s, which a one-shot
``ided search`` would pay on every call.

**One text per run, unpadded.** The bundled graph quantizes its activations per run (one scale
for the whole input tensor), so texts run together would change each other's vectors (cosine
0.986 at worst against the same text run alone). Each text therefore runs alone, at its own length:
a document's vector never depends on what was embedded beside it, and a query's vector is the vector
the same text gets as a document. It is also faster and leaner than padded batches (requests'
sources: 1.2-1.4x the chunks/s, 153 against 178 MiB peak; even an fp32 graph ran 1.3x faster
unpadded), because no run computes padding. ``batch_size`` texts are tokenized at once.

Two onnxruntime sessions of the same graph with the same graph optimizations (all but constant
folding, which would keep a float32 copy of a graph's int8 weights), each created on first use:

* the **documents** session (``embed_documents``, ``embed_texts``): the configured threads, the
  memory arena as configured;
* the **query** session (``embed_query`` while no documents session exists): one thread, no arena.
  It loads in ~0.06 s; a one-line query takes ~3 ms. A command that only searches, and a daemon
  whose documents are embedded by a worker process (``embed_process``), never load the documents
  session. Its vectors are the documents session's, bit for bit (threads do not change them).

Once a documents session exists it answers queries too, and the query session is dropped.
Truncation is at ``max_tokens`` (special tokens included). ``count_tokens`` counts with the same
vocabulary, untruncated, without special tokens.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, cast

from daemon.errors import EmbeddingUnavailable
from daemon.index.model_files import MODEL_FILE, resolve_model_dir

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from daemon.core.models import Chunk

# numpy, onnxruntime and tokenizers are imported where a session or tokenizer is made, not with this
# module: `ided status` and the fronts import it without ever embedding. Nor does it import pydantic
# (the chunk models, the configuration): the embedding worker process runs without them (~23 MB).

__all__ = ["DEFAULT_MODEL_NAME", "EmbeddingSettings", "OnnxEmbedder", "SessionKind"]

logger = logging.getLogger(__name__)

DEFAULT_MODEL_NAME = "ided/all-MiniLM-L6-v2-qint8"

SessionKind = Literal["query", "documents"]


class EmbeddingSettings(Protocol):
    """What ``OnnxEmbedder.from_config`` reads: ``config.EmbeddingConfig``, or the worker's own copy of it."""

    @property
    def enabled(self) -> bool: ...
    @property
    def model_dir(self) -> str | None: ...
    @property
    def model_name(self) -> str: ...
    @property
    def dim(self) -> int: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def batch_size(self) -> int: ...
    @property
    def threads(self) -> int | None: ...
    @property
    def memory_arena(self) -> bool: ...


class OnnxEmbedder:
    """Dense embedder over a local ONNX model directory (implements ``DenseEmbedder``).

    Args:
        model_dir: directory with ``model.onnx``, ``tokenizer.json``, ``tokenizer_config.json`` (and
            ``config.json``, ``special_tokens_map.json``).
        model_name: name recorded for the vectors (``DenseEmbedder.name``).
        dim: expected vector size; checked against the model's output when a session loads.
        max_tokens: truncation length per text, special tokens included.
        batch_size: texts tokenized at once (each still runs alone: see the module docstring).
        threads: the documents session's intra-op threads; None lets onnxruntime use every core.
        memory_arena: keep onnxruntime's CPU memory arena in the documents session: it grows to the
            largest run (one text of ``max_tokens``) and is never given back; without it the freed
            blocks stay in glibc's heap anyway, and runs are slower.
        fold_weights: let both sessions fold constants when they load (off: a graph whose weights
            are dequantized by its own nodes would keep float32 copies of them).
        text_of: what text of a chunk to embed (default ``embed_text.document_text``).
        load: the session to load now (errors surface here, not in the first search): ``"query"``
            (the default: cheap) or ``"documents"``.

    Raises:
        EmbeddingUnavailable: the model or its tokenizer cannot be loaded (the cause is attached), or
            its output size is not ``dim``.
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
        memory_arena: bool = True,
        fold_weights: bool = False,
        text_of: Callable[[Chunk], str] | None = None,
        load: SessionKind = "query",
    ) -> None:
        if max_tokens < 2:
            raise ValueError(f"max_tokens must be at least 2 (got {max_tokens})")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1 (got {batch_size})")
        self.name: Final = model_name
        self.dim: Final = dim
        self.max_tokens: Final = max_tokens
        self._batch_size = batch_size
        self._threads = threads
        self._memory_arena = memory_arena
        self._fold_weights = fold_weights
        self._text_of = text_of
        self.model_dir: Final = model_dir
        self._lock = threading.Lock()
        self._sessions: dict[SessionKind, Any] = {}
        self._counter: Tokenizer | None = None
        from daemon.index.model_tokenizer import batch_tokenizer

        try:
            self._tokenizer = batch_tokenizer(model_dir, max_tokens)
        except Exception as exc:
            raise EmbeddingUnavailable(f"cannot read the tokenizer of {model_name} in {model_dir}", cause=exc) from exc
        self._session(load)

    @classmethod
    def from_config(cls, config: EmbeddingSettings, cache_root: Path, *, load: SessionKind = "query") -> OnnxEmbedder:
        """The embedder ``config`` describes: ``embedding.model_dir`` or the bundled model under ``cache_root``.

        Raises:
            EmbeddingUnavailable: embeddings are disabled, or the model cannot be found or loaded.
        """
        if not config.enabled:
            raise EmbeddingUnavailable("dense embeddings are disabled (embedding.enabled = false)")
        return cls(
            resolve_model_dir(config.model_dir, cache_root),
            model_name=config.model_name,
            dim=config.dim,
            max_tokens=config.max_tokens,
            batch_size=config.batch_size,
            threads=config.threads,
            memory_arena=config.memory_arena,
            load=load,
        )

    @property
    def sessions(self) -> tuple[SessionKind, ...]:
        """The sessions loaded now (``"query"``, ``"documents"``)."""
        return tuple(self._sessions)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` for the embedding model's tokenizer: untruncated, special tokens not counted."""
        return self.count_tokens_batch([text])[0]

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        """``count_tokens`` for many texts at once (the tokenizer runs them in parallel)."""
        if self._counter is None:
            from daemon.index.model_tokenizer import counting_tokenizer

            self._counter = counting_tokenizer(self.model_dir)
        return [len(e.ids) for e in self._counter.encode_batch(list(texts), add_special_tokens=False)]

    def embed_texts(self, texts: Sequence[str]) -> list[list[float]]:
        """Normalized vectors of ``texts``, in input order (the documents session)."""
        n = len(texts)
        if n == 0:
            return []
        session = self._session("documents")
        out: list[list[float]] = []
        for start in range(0, n, self._batch_size):
            out += self._run(session, list(texts[start : start + self._batch_size]))
        return out

    def embed_documents(self, chunks: Sequence[Chunk]) -> list[list[float]]:
        """Vectors of ``embed_text.document_text(chunk)`` (or ``text_of``), in input order."""
        text_of = self._text_of
        if text_of is None:
            from daemon.index.embed_text import document_text

            text_of = document_text
        return self.embed_texts([text_of(c) for c in chunks])

    def embed_query(self, text: str) -> list[float]:
        """Vector of a search query (the model has no query prefix)."""
        session = self._sessions.get("documents") or self._session("query")
        return self._run(session, [text])[0]

    # -- ONNX ---------------------------------------------------------------------------------

    def _session(self, kind: SessionKind) -> Any:
        with self._lock:
            session = self._sessions.get(kind)
            if session is None:
                session = self._sessions[kind] = self._load(kind)
                if kind == "documents":
                    self._sessions.pop("query", None)
            return session

    def _load(self, kind: SessionKind) -> Any:
        import onnxruntime

        ort: Any = onnxruntime  # its stubs leave the session options and graph levels untyped
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if kind == "documents":
            options.enable_cpu_mem_arena = self._memory_arena
            if self._threads is not None:
                options.intra_op_num_threads = options.inter_op_num_threads = self._threads
        else:
            options.enable_cpu_mem_arena = False
            options.intra_op_num_threads = options.inter_op_num_threads = 1
        options.enable_mem_pattern = False  # every text has its own length: no plan to reuse
        unfolded = {} if self._fold_weights else {"disabled_optimizers": ["ConstantFolding"]}
        path = self.model_dir / MODEL_FILE
        try:
            session = ort.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"], **unfolded
            )
        except Exception as exc:
            message = f"cannot load dense model {self.name} from {self.model_dir}"
            raise EmbeddingUnavailable(message, cause=exc) from exc
        outputs: Any = session.get_outputs()
        shape = cast("list[object]", outputs[0].shape)
        size = shape[-1] if shape else None
        if not isinstance(size, int):  # a symbolic size: ask the model
            size = len(self._run(session, ["def probe(): return 1"])[0])
        if size != self.dim:
            raise EmbeddingUnavailable(
                f"dense model {self.name} in {self.model_dir} outputs {size} dimensions, "
                f"but embedding.dim is {self.dim}; set embedding.dim to {size}"
            )
        logger.info(
            "loaded the %s session of dense model %s from %s (dim %d, max_tokens %d, batch %d, threads %s)",
            kind,
            self.name,
            self.model_dir,
            self.dim,
            self.max_tokens,
            self._batch_size,
            (self._threads or "all") if kind == "documents" else 1,
        )
        return session

    def _run(self, session: Any, texts: list[str]) -> list[list[float]]:
        """Each text's vector, each text run alone at its own length (see the module docstring)."""
        import numpy as np

        names = {i.name for i in session.get_inputs()}
        vectors: list[list[float]] = []
        try:
            for encoding in self._tokenizer.encode_batch(texts):
                ids = np.array([encoding.ids], dtype=np.int64)
                feed = {"input_ids": ids}
                if "attention_mask" in names:
                    feed["attention_mask"] = np.ones_like(ids)
                if "token_type_ids" in names:
                    feed["token_type_ids"] = np.zeros_like(ids)
                tokens = session.run(None, feed)[0][0]
                pooled = np.mean(tokens, axis=0, dtype=np.float64)
                vector = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
                vectors.append(cast("list[float]", vector.astype(tokens.dtype).tolist()))
        except Exception as exc:
            raise EmbeddingUnavailable(f"dense model {self.name} failed on a batch of {len(texts)}", cause=exc) from exc
        return vectors
