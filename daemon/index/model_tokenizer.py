"""The dense model's tokenizer, set up from its directory the way fastembed sets it up.

``batch_tokenizer(model_dir, max_tokens)`` reads ``tokenizer.json`` and configures it as fastembed
0.9 does for a custom text model, so the ids fed to the ONNX graph are the ones fastembed fed it for
a text alone (``tests/unit/index/test_embedder.py`` compares the vectors):

* truncation at ``max_tokens`` (special tokens included), in the direction ``tokenizer_config.json``
  (``truncation_side``) or ``tokenizer.json`` names, else right;
* the tokens of ``special_tokens_map.json`` registered as special tokens;
* no padding: the embedder runs each text alone, at its own length.

``counting_tokenizer(model_dir)`` is the same vocabulary untruncated and unpadded (token counts).
Only ``tokenizers`` and the standard library are imported.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

from tokenizers import AddedToken, Tokenizer

__all__ = ["batch_tokenizer", "counting_tokenizer"]


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    return cast("dict[str, Any]", json.loads(path.read_text(encoding="utf-8")))


def _special_tokens(tokens_map: dict[str, Any]) -> Iterator[str | dict[str, Any]]:
    for value in tokens_map.values():
        if isinstance(value, list):
            yield from cast("list[str | dict[str, Any]]", value)
        else:
            yield cast("str | dict[str, Any]", value)


def counting_tokenizer(model_dir: Path) -> Tokenizer:
    """The model's tokenizer without truncation or padding."""
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def batch_tokenizer(model_dir: Path, max_tokens: int) -> Tokenizer:
    """The model's tokenizer for the ONNX runs: truncated at ``max_tokens``, unpadded (see the module doc).

    Raises:
        ValueError: a file is unreadable.
        Exception: whatever ``tokenizers`` raises on a malformed ``tokenizer.json``.
    """
    tokenizer_config = _read_json(model_dir / "tokenizer_config.json")
    tokens_map = _read_json(model_dir / "special_tokens_map.json")
    loaded = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer: Any = loaded  # the stubs leave truncation and its kwargs untyped
    truncation = cast("dict[str, Any]", tokenizer.truncation or {})
    direction = tokenizer_config.get("truncation_side") or truncation.get("direction", "right")
    tokenizer.enable_truncation(max_length=max_tokens, direction=str(direction))
    tokenizer.no_padding()
    for token in _special_tokens(tokens_map):
        tokenizer.add_special_tokens([token if isinstance(token, str) else AddedToken(**token)])
    return loaded
