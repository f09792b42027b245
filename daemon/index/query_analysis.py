"""What a search query says: weighted lexical terms and the names, dotted names and paths it mentions.

A query is two words typed in a search box or a whole GitHub issue: prose, a traceback, pasted code
and version output. The terms that matter in an issue are the ones it repeats and the code it names,
so the analysis, without a model:

* weighs each lexical term by how often the query uses it, saturated (``1 + ln tf``): a topic word
  written a dozen times counts more than a stray word, but never a dozen times more;
* counts the first line twice when the query has several (an issue's title says what it is about),
  and analyses that *headline* on its own as well: the ranking fuses the headline's order with the
  whole text's (:func:`daemon.index.ranking.fuse_headline`);
* weighs the terms of code tokens (identifiers with ``_`` or inner capitals, dotted names, text in
  backticks, names called with ``(``) by ``CODE_TERM_BOOST``;
* collects the *names* a query mentions (the last part of each identifier and dotted name, called
  functions, traceback frames' functions), the *dotted names* (``django.db.models.QuerySet``,
  ``Session.request``) and the *paths* (``django/db/models/query.py``, a traceback's ``File "..."``;
  a dotted module name gives a path too), which the ranking (:mod:`daemon.index.ranking`) matches
  against each chunk's name, qualified name and path;
* tells whether the query reads as code (it names code, or carries a traceback or a code block):
  the ranking then puts documentation and changelog sections below code.

Long queries are analysed up to ``MAX_QUERY_CHARS`` characters (the rest is dropped and the answer
says so); terms beyond ``MAX_TERMS`` (the lightest) are dropped too.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace

__all__ = ["CODE_TERM_BOOST", "MAX_QUERY_CHARS", "MAX_TERMS", "AnalyzedQuery", "analyze_query"]

MAX_QUERY_CHARS = 32_000
MAX_TERMS = 400
CODE_TERM_BOOST = 1.5
TITLE_REPEAT = 3

_BACKTICK = re.compile(r"`([^`\n]{1,200})`")
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_DOTTED = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\b")
_WORD = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\(")
_FRAME = re.compile(r'File "([^"]+)", line \d+, in ([A-Za-z_<>][\w<>]*)')
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:py|pyi|js|jsx|ts|tsx|go|rs|c|h|cc|cpp|hpp|java|rb))\b")
_ERROR_NAME = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Warning))\b")
_FILE_SUFFIXES = (".py", ".pyi", ".js", ".jsx", ".ts", ".tsx", ".go", ".rs", ".java", ".rb", ".txt", ".rst", ".md")
_NOT_NAMES = frozenset({"self", "cls", "none", "true", "false", "print", "return", "import", "from", "def", "class"})


def _is_code_word(word: str) -> bool:
    """snake_case or camelCase/PascalCase with an inner capital: reads as code, not prose."""
    core = word.strip("_")
    if "_" in core:
        return True
    return any(c.isupper() for c in core[1:]) and any(c.islower() for c in core)


@dataclass(frozen=True, kw_only=True)
class AnalyzedQuery:
    """The analysis of one query (see the module doc)."""

    text: str
    truncated: bool
    terms: dict[str, float]
    names: frozenset[str]
    dotted: tuple[str, ...]
    paths: tuple[str, ...]
    code_like: bool
    frames: tuple[tuple[str, str], ...] = ()
    """A traceback's frames, ``(path, function name)`` in the order printed (innermost last); the path
    with ``/`` separators (a Windows traceback's ``\\`` turned), the name lower-cased."""
    headline: AnalyzedQuery | None = None
    """The first line analysed alone, when the query has several lines and that line has terms."""

    @property
    def empty(self) -> bool:
        return not self.terms


def _module_paths(dotted: str) -> list[str]:
    """``django.db.models.query.QuerySet`` -> path suffixes its module prefixes could be."""
    parts = dotted.split(".")
    out: list[str] = []
    for n in range(len(parts), 1, -1):
        prefix = "/".join(parts[:n])
        out.append(prefix + ".py")
        out.append(prefix + "/__init__.py")
    return out


@dataclass
class _Mentions:
    code_words: set[str]
    names: set[str]
    dotted: dict[str, None]
    paths: dict[str, None]
    frames: dict[tuple[str, str], None]


def _frames_and_paths(text: str, found: _Mentions) -> None:
    text = text.replace("\\", "/")  # a Windows traceback: C:\Python\site-packages\pkg\mod.py
    for m in _FRAME.finditer(text):
        found.paths[m.group(1)] = None
        if not m.group(2).startswith("<"):
            found.names.add(m.group(2).lower())
            found.frames[(m.group(1), m.group(2).lower())] = None
    for m in _PATH.finditer(text):
        found.paths[m.group(1)] = None


def _dotted_names(text: str, found: _Mentions) -> None:
    for m in _DOTTED.finditer(text):
        value = m.group(0)
        if value.lower().endswith(_FILE_SUFFIXES) or value[0].isdigit():
            continue
        parts = value.split(".")
        if all(p.islower() and len(p) <= 3 for p in parts):
            continue  # "e.g", "i.e", "etc.": prose abbreviations
        found.dotted[value] = None
        found.code_words.update(parts)
        if parts[-1].lower() not in _NOT_NAMES:
            found.names.add(parts[-1].lower())
    for value in list(found.dotted):
        for p in _module_paths(value):
            found.paths.setdefault(p, None)


def _code_words(text: str, found: _Mentions) -> None:
    quoted = [m.group(1) for m in _BACKTICK.finditer(text)]
    for chunk in quoted:
        found.code_words.update(_WORD.findall(chunk))
        word = chunk.strip().strip("()")
        if _WORD.fullmatch(word) and word.lower() not in _NOT_NAMES:
            found.names.add(word.lower())
    for m in _CALL.finditer(text):
        word = m.group(1)
        if word.lower() not in _NOT_NAMES and (_is_code_word(word) or word in found.code_words or len(word) > 3):
            found.code_words.add(word)
            found.names.add(word.lower())
    for word in _WORD.findall(text):
        if _is_code_word(word):
            found.code_words.add(word)
            if len(word.strip("_")) > 2:
                found.names.add(word.lower())
    for m in _ERROR_NAME.finditer(text):
        found.names.add(m.group(1).lower())


def _weights(text: str, code_words: set[str], tokenize: Callable[[str], list[str]]) -> dict[str, float]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    tf: Counter[str] = Counter(tokenize(text))
    if len(lines) > 1:
        title_terms = tokenize(lines[0])
        for _ in range(TITLE_REPEAT - 1):
            tf.update(title_terms)
    code_terms: set[str] = set()
    for word in code_words:
        code_terms.update(tokenize(word))
    weights: dict[str, float] = {}
    for term, count in tf.items():
        weight = 1.0 + math.log(count)
        weights[term] = weight * CODE_TERM_BOOST if term in code_terms else weight
    if len(weights) > MAX_TERMS:
        weights = dict(sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_TERMS])
    return weights


def analyze_query(text: str, tokenize: Callable[[str], list[str]]) -> AnalyzedQuery:
    """Analyse ``text`` with the lexical encoder's ``tokenize`` (so query and index terms agree)."""
    whole = _analyze(text, tokenize)
    lines = [ln for ln in whole.text.splitlines() if ln.strip()]
    if len(lines) < 2:
        return whole
    headline = _analyze(lines[0].strip(), tokenize)
    return replace(whole, headline=headline) if headline.terms else whole


def _analyze(text: str, tokenize: Callable[[str], list[str]]) -> AnalyzedQuery:
    truncated = len(text) > MAX_QUERY_CHARS
    if truncated:
        text = text[:MAX_QUERY_CHARS]
    found = _Mentions(code_words=set(), names=set(), dotted={}, paths={}, frames={})
    _frames_and_paths(text, found)
    _dotted_names(text, found)
    _code_words(text, found)
    return AnalyzedQuery(
        text=text,
        truncated=truncated,
        terms=_weights(text, found.code_words, tokenize),
        names=frozenset(n for n in found.names if len(n) > 1),
        dotted=tuple(found.dotted),
        paths=tuple(found.paths),
        frames=tuple(found.frames),
        code_like=bool(found.code_words) or bool(found.paths) or _FENCE.search(text) is not None,
    )
