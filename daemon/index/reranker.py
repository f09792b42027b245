"""Optional cross-encoder rerank of the top hybrid candidates (fastembed ``TextCrossEncoder``).

Off unless ``rerank.model_dir`` names a local directory holding an ONNX cross-encoder
(``model.onnx`` whose first output is one relevance logit per pair, e.g. an export of
ms-marco-MiniLM-L-6-v2) and its tokenizer files. No PyPI package is known to ship one, so ided bundles
none. ``load_reranker`` never raises: it answers a reranker or the reason there is none, and the
daemon reports that reason in its status.
"""

from __future__ import annotations

import hashlib
import logging
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from daemon.config import RerankConfig
from daemon.core.ports import Reranker
from daemon.index.fastembed_tokens import limit_tokens

if TYPE_CHECKING:
    pass

__all__ = ["REQUIRED_RERANK_FILES", "FastembedReranker", "load_reranker"]

logger = logging.getLogger(__name__)

REQUIRED_RERANK_FILES: tuple[str, ...] = ("model.onnx", "tokenizer.json", "tokenizer_config.json")
_REGISTRY_LOCK = threading.Lock()
_PROBE = ("what does this function return", ("def answer():\n    return 42", "import os"))


def _register(model_dir: Path) -> str:
    """Register the directory with fastembed once per process, under a name unique to its path."""
    from fastembed.common.model_description import ModelSource  # fastembed: imported only when a model loads
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    digest = hashlib.blake2b(str(model_dir.resolve()).encode(), digest_size=6).hexdigest()
    key = f"ided-rerank/{model_dir.name}-{digest}"
    with _REGISTRY_LOCK:
        known = {str(m["model"]).lower() for m in TextCrossEncoder.list_supported_models()}
        if key.lower() not in known:
            TextCrossEncoder.add_custom_model(
                model=key, sources=ModelSource(hf=key), model_file="model.onnx", description=str(model_dir)
            )
    return key


class FastembedReranker:
    """A cross-encoder over a local ONNX directory (implements ``Reranker``).

    Raises:
        Exception: whatever fastembed/onnxruntime raise when the model cannot be loaded
            (``load_reranker`` turns that into a reason).
    """

    def __init__(
        self, model_dir: Path, *, threads: int | None = None, batch_size: int = 32, max_tokens: int = 512
    ) -> None:
        self._model_dir = model_dir
        self._batch_size = batch_size
        self._name = f"cross-encoder:{model_dir.name}"
        from fastembed.rerank.cross_encoder import TextCrossEncoder

        self._model = TextCrossEncoder(
            model_name=_register(model_dir),
            threads=threads,
            specific_model_path=str(model_dir),
            local_files_only=True,
        )
        limit_tokens(self._model, max_tokens)  # the passage, the longer side, loses tokens first

    @property
    def name(self) -> str:
        return self._name

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One relevance score per passage, in order; higher is more relevant."""
        if not passages:
            return []
        return [float(s) for s in self._model.rerank(query, list(passages), batch_size=self._batch_size)]


def _missing_files(model_dir: Path) -> list[str]:
    return [name for name in REQUIRED_RERANK_FILES if not (model_dir / name).is_file()]


def load_reranker(config: RerankConfig, *, threads: int | None = None) -> tuple[Reranker | None, str | None]:
    """``(reranker, None)``, or ``(None, reason)`` when rerank is off or the model cannot be used.

    The loaded model is probed with one query and two passages: a model whose output is not one
    finite score per pair (an embedding model, say) is refused with a reason.
    """
    if config.model_dir is None:
        return None, "rerank.model_dir not set"
    model_dir = Path(config.model_dir).expanduser()
    if not model_dir.is_dir():
        return None, f"rerank.model_dir {model_dir} is not a directory"
    missing = _missing_files(model_dir)
    if missing:
        return None, (
            f"rerank.model_dir {model_dir} lacks {', '.join(missing)} "
            f"(an ONNX cross-encoder needs {', '.join(REQUIRED_RERANK_FILES)})"
        )
    try:
        reranker = FastembedReranker(model_dir, threads=threads, max_tokens=config.max_tokens)
    except Exception as exc:
        logger.warning("cannot load cross-encoder from %s: %s", model_dir, exc)
        return None, f"cannot load cross-encoder from {model_dir}: {type(exc).__name__}: {exc}"
    query, passages = _PROBE
    try:
        scores = reranker.score(query, passages)
    except Exception as exc:
        logger.warning("model in %s is not a usable cross-encoder: %s", model_dir, exc)
        return None, (
            f"model in {model_dir} is not a cross-encoder (it must output one score per query/passage pair): "
            f"{type(exc).__name__}: {exc}"
        )
    if len(scores) != len(passages) or not all(math.isfinite(s) for s in scores):
        return None, f"model in {model_dir} is not a cross-encoder: probe scores {scores!r}"
    logger.info("loaded cross-encoder %s", model_dir)
    return reranker, None
