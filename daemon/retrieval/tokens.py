"""Token counting for stage budgets: the embedding model's tokenizer (``tokenizer.json``), offline.

The bundled MiniLM tokenizer is a WordPiece vocabulary; its counts are close to (usually a little
above) a chat model's BPE counts for code, so a budget met here is met there. When no tokenizer
file can be read, ``load_token_counter`` answers a character estimate (four characters per token)
and says so in its ``name``.
"""

from __future__ import annotations

import json
import logging
import threading
from functools import lru_cache
from pathlib import Path
from typing import Protocol, cast

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


_SPLITS_ON_WHITESPACE = frozenset({"BertPreTokenizer", "Whitespace", "WhitespaceSplit"})
"""Pre-tokenizers that never make a token across a line break: a text's count is its lines' counts."""


class WordPieceCounter:
    """Counts with a Hugging Face ``tokenizer.json`` (no special tokens, no truncation, no padding),
    remembering the counts of the last ``_REMEMBERED`` texts (the stages of a plan count the same pieces).

    When the tokenizer splits on whitespace before anything else (``BertPreTokenizer``, the bundled
    MiniLM's), a text of several lines counts as the sum of its lines, each remembered (the last
    ``_REMEMBERED_LINES``): the pieces and outlines of one file share most lines from stage to stage
    and from run to run, so only the lines not seen lately are tokenized (in one batch)."""

    _REMEMBERED = 4096
    _REMEMBERED_LINES = 65536

    def __init__(self, tokenizer_file: Path) -> None:
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._lock = threading.Lock()
        self._name = f"tokenizer:{tokenizer_file.parent.name}"
        self._counts: LruMap[str, int] = LruMap(self._REMEMBERED)
        self._lines: LruMap[str, int] = LruMap(self._REMEMBERED_LINES)
        self.by_lines = _pre_tokenizer(self._tokenizer) in _SPLITS_ON_WHITESPACE
        """Whether multi-line texts are counted line by line (see the class docstring)."""

    @property
    def name(self) -> str:
        return self._name

    def count(self, text: str) -> int:
        if not text:
            return 0
        with self._lock:
            known = self._counts.get(text)
            if known is None:
                known = self._count_lines(text) if self.by_lines and "\n" in text else self._encode_count(text)
                self._counts.put(text, known)
            return known

    def _encode_count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def _count_lines(self, text: str) -> int:
        lines = text.split("\n")
        counts = [self._lines.get(line) if line else 0 for line in lines]
        missing = list(dict.fromkeys(line for line, n in zip(lines, counts, strict=True) if n is None))
        if missing:
            encoded = self._tokenizer.encode_batch(missing, add_special_tokens=False)
            fresh = {line: len(e.ids) for line, e in zip(missing, encoded, strict=True)}
            for line, n in fresh.items():
                self._lines.put(line, n)
            counts = [fresh[line] if n is None else n for line, n in zip(lines, counts, strict=True)]
        return sum(n or 0 for n in counts)

    def cut(self, text: str, tokens: int) -> str:
        if tokens <= 0:
            return ""
        if self.by_lines and "\n" in text:
            kept = self._cut_lines(text, tokens)
            if kept is not None:
                return kept
        with self._lock:
            encoding = self._tokenizer.encode(text, add_special_tokens=False)
        if len(encoding.ids) <= tokens:
            return text
        end = encoding.offsets[tokens - 1][1]
        newline = text.rfind("\n", 0, end)
        return text[: newline if newline > 0 else end]

    def _cut_lines(self, text: str, tokens: int) -> str | None:
        """``cut`` from the remembered line counts, without encoding the text again: the lines before the one
        that holds the ``tokens``-th token (what the encoding's offsets give); None when that is the first line
        (the cut falls inside it)."""
        lines = text.split("\n")
        self.count(text)  # every line's count remembered
        with self._lock:
            counts = [self._lines.get(line) if line else 0 for line in lines]
        if any(n is None for n in counts):
            return None  # forgotten meanwhile (a full memory): encode
        if sum(n or 0 for n in counts) <= tokens:
            return text
        used = 0
        for i, n in enumerate(counts):
            used += n or 0
            if used >= tokens:
                kept = "\n".join(lines[:i])
                return kept or None
        return text


def _pre_tokenizer(tokenizer: Tokenizer) -> str | None:
    """The type of the tokenizer's pre-tokenizer, as its JSON names it (None: none or unreadable)."""
    try:
        described: object = json.loads(tokenizer.to_str()).get("pre_tokenizer")
    except ValueError:
        return None
    kind = cast("dict[str, object]", described).get("type") if isinstance(described, dict) else None
    return kind if isinstance(kind, str) else None


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
