"""Token counting for stage budgets: the embedding model's tokenizer (``tokenizer.json``), offline.

The bundled MiniLM tokenizer is a WordPiece vocabulary; its counts are close to (usually a little
above) a chat model's BPE counts for code, so a budget met here is met there. When no tokenizer
file can be read, ``load_token_counter`` answers a character estimate (four characters per token)
and says so in its ``name``.
"""

from __future__ import annotations

import logging
import threading
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from tokenizers import Tokenizer

from daemon.config import EmbeddingConfig
from daemon.core.lru import LruMap
from daemon.errors import EmbeddingUnavailable
from daemon.index.model_files import bundled_sources

__all__ = ["CharEstimate", "TokenCounter", "WordPieceCounter", "load_token_counter"]

logger = logging.getLogger(__name__)


class TokenCounter(Protocol):
    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...

    def cut(self, text: str, tokens: int) -> str:
        """The longest prefix of ``text`` of at most ``tokens`` tokens (ending at a line when it can)."""
        ...


class WordPieceCounter:
    """Counts with a Hugging Face ``tokenizer.json`` (no special tokens, no truncation, no padding),
    remembering the counts of the last ``_REMEMBERED`` texts (the stages of a plan count the same pieces)."""

    _REMEMBERED = 4096

    def __init__(self, tokenizer_file: Path) -> None:
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._lock = threading.Lock()
        self._name = f"tokenizer:{tokenizer_file.parent.name}"
        self._counts: LruMap[str, int] = LruMap(self._REMEMBERED)

    @property
    def name(self) -> str:
        return self._name

    def count(self, text: str) -> int:
        if not text:
            return 0
        with self._lock:
            known = self._counts.get(text)
            if known is None:
                known = len(self._tokenizer.encode(text, add_special_tokens=False).ids)
                self._counts.put(text, known)
            return known

    def cut(self, text: str, tokens: int) -> str:
        if tokens <= 0:
            return ""
        with self._lock:
            encoding = self._tokenizer.encode(text, add_special_tokens=False)
        if len(encoding.ids) <= tokens:
            return text
        end = encoding.offsets[tokens - 1][1]
        newline = text.rfind("\n", 0, end)
        return text[: newline if newline > 0 else end]


class CharEstimate:
    """Four characters per token: used only when no tokenizer file is readable."""

    name = "estimate:4-chars-per-token"

    def count(self, text: str) -> int:
        return (len(text) + 3) // 4

    def cut(self, text: str, tokens: int) -> str:
        end = max(0, tokens * 4)
        newline = text.rfind("\n", 0, end)
        return text[: newline if newline > 0 else end]


@lru_cache(maxsize=4)
def _counter_for(path: str) -> WordPieceCounter:
    return WordPieceCounter(Path(path))


def load_token_counter(config: EmbeddingConfig) -> TokenCounter:
    """The tokenizer of the configured (or bundled) embedding model; a character estimate if there is none."""
    try:
        directory = Path(config.model_dir).expanduser() if config.model_dir else bundled_sources().tokenizer_dir
        tokenizer_file = directory / "tokenizer.json"
        if tokenizer_file.is_file():
            return _counter_for(str(tokenizer_file))
        reason = f"{tokenizer_file} does not exist"
    except (EmbeddingUnavailable, OSError, ValueError) as exc:
        reason = str(exc)
    except Exception as exc:  # tokenizers raises its own Exception type for a malformed file
        reason = f"{type(exc).__name__}: {exc}"
    logger.warning("no tokenizer for token budgets, estimating 4 characters per token: %s", reason)
    return CharEstimate()
