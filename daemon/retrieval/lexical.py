"""Lexical helpers shared by fusion, validation and the decision source: terms of code and prose.

``terms`` remembers the last texts it was asked about: the stages of an upfront retrieval measure the
same chunks against the same queries, and fusion measures one piece against each of its queries.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["ENGLISH_STOP_WORDS", "overlap", "terms"]


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# English function words: never worth searching for (the query writer adds its own task words).
ENGLISH_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "not",
        "of",
        "on",
        "or",
        "that",
        "the",
        "then",
        "this",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "while",
        "why",
        "with",
        "without",
        "should",
        "would",
        "could",
        "must",
        "can",
        "will",
    ]
)
_STOP = ENGLISH_STOP_WORDS | frozenset(
    [
        "self",
        "none",
        "true",
        "false",
        "return",
        "def",
        "function",
        "class",
    ]
)


@lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    for suffix in ("ing", "ies", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


@lru_cache(maxsize=8_192)
def terms(text: str) -> frozenset[str]:
    """Lower-cased, crudely stemmed words of ``text``; identifiers are split (snake_case, CamelCase)."""
    out: set[str] = set()
    for word in _WORD.findall(text):
        for part in _CAMEL.findall(word) or [word]:
            lower = part.lower()
            if len(lower) > 1 and lower not in _STOP:
                out.add(_stem(lower))
    return frozenset(out)


def overlap(query_terms: Iterable[str], text: str) -> float:
    """Share of ``query_terms`` present in ``text`` (0 when the query has none)."""
    wanted = set(query_terms)
    if not wanted:
        return 0.0
    return len(wanted & terms(text)) / len(wanted)
