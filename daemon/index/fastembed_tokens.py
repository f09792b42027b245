"""Truncation length of a loaded fastembed model (embedder and cross-encoder alike).

fastembed truncates at the model's own context (``model_max_length``, 512 for MiniLM) and offers no
argument for it, so after loading, the ``tokenizers.Tokenizer`` it uses is re-configured: truncation
at ``max_tokens`` (special tokens included), keeping the direction fastembed resolved from the
model's config. For a query/passage pair the longer side loses tokens first (``longest_first``,
the tokenizer's default strategy).
"""

from __future__ import annotations

from typing import Any, cast

__all__ = ["limit_tokens"]


def limit_tokens(model: object, max_tokens: int) -> None:
    """Truncate what ``model`` (a fastembed ``TextEmbedding`` or ``TextCrossEncoder``) reads at ``max_tokens``.

    Raises:
        RuntimeError: the model exposes no tokenizer to configure.
    """
    inner: object = getattr(model, "model", None)
    tokenizer: Any = getattr(inner, "tokenizer", None)  # the stubs leave truncation and its kwargs untyped
    if tokenizer is None or not hasattr(tokenizer, "enable_truncation"):
        raise RuntimeError(f"fastembed model {type(inner).__name__} exposes no tokenizer; cannot set max_tokens")
    current = cast("dict[str, object] | None", tokenizer.truncation)
    direction = str((current or {}).get("direction", "right"))
    tokenizer.enable_truncation(max_length=max_tokens, direction=direction)
