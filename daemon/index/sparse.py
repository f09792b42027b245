"""Code-aware BM25 sparse vectors: the lexical half of hybrid search.

Tokenizer (``tokenize``), for every run of word characters in the text:

* a compound identifier (``getHTTPResponse``, ``parse_file_v2``, ``MAX_SIZE``) yields itself, whole and
  lowercased and never stemmed, plus its sub-words split at snake_case, camelCase/PascalCase and
  digit-to-letter boundaries (``get``, ``http``, ``response``; ``parse``, ``file``, ``v2``). Digits stay
  on the word they follow (``v2``, ``utf8``, ``sha256``). Sub-words are stemmed like prose (below) so a
  query "parsing files" meets ``parse_file`` (see the measurement below).
* a plain word (``parse``, ``Response``, ``the``) is prose-like: English stop words are dropped, the
  rest is lowercased and stemmed with the Snowball English stemmer of ``py_rust_stemmers`` when that is
  installed (it is a fastembed dependency).
* one-character tokens and sub-words are dropped; punctuation never forms a token.

Stemming sub-words was chosen by the bench's retrieval check (docstring first sentence -> function
without its docstring, 600 functions): MRR@10 0.80 with stemmed sub-words, 0.75 with only prose
stemmed, 0.78 with no stemming at all.

Token ids: a stable 31-bit hash of the token, murmur3 (``mmh3``, seed 0, unsigned, top bit cleared) when
installed, else the first 4 bytes of blake2b. Both are fixed functions of the UTF-8 bytes, so ids are the
same in every process and release. The encoder's ``name`` records the hash and the stemmer, so a store
can tell when vectors were made by a different tokenizer and must be rebuilt.

Weights: document vectors carry the BM25 term-frequency part, ``tf*(k1+1) / (tf + k1*(1 - b + b*dl/avgdl))``
with ``k1=1.2``, ``b=0.75`` and a fixed ``avgdl`` (``AVG_DOC_TOKENS`` = 200: the mean boosted token
count ``dl`` of 600 real Python function chunks of ~1.1 KB, measured by ``bench/embedding.py``; fixed
so a vector never depends on the rest of the corpus and never needs recomputing). The store applies
IDF (Qdrant ``Modifier.IDF``). ``tf`` counts body tokens once and field tokens more: the qualified
name twice, the name once more (so three times in all), the path twice. Query vectors weigh each
unique token 1.0.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from itertools import chain
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from daemon.core.ports import SparseVector

if TYPE_CHECKING:
    from daemon.core.models import Chunk

__all__ = [
    "AVG_DOC_TOKENS",
    "BM25_B",
    "BM25_K1",
    "ENGLISH_STOP_WORDS",
    "CodeBm25Encoder",
    "blake2b_term_id",
    "bm25_vector",
    "mmh3_term_id",
    "split_identifier",
]

logger = logging.getLogger(__name__)

BM25_K1 = 1.2
BM25_B = 0.75
AVG_DOC_TOKENS = 200.0
NAME_BOOST = 1
QUALIFIED_NAME_BOOST = 2
PATH_BOOST = 2
_ID_MASK = 0x7FFFFFFF
_CACHE_LIMIT = 200_000

V = TypeVar("V")

_STOP_WORDS_TEXT = """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most my
    myself no nor not now of off on once only or other our ours ourselves out over own same she should so
    some such than that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would you your yours
    yourself yourselves"""
ENGLISH_STOP_WORDS: frozenset[str] = frozenset(_STOP_WORDS_TEXT.split())

_WORD_RE = re.compile(r"\w+")
_ASCII_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_NON_WORD_TO_SPACE = bytes(c if c in _ASCII_WORD_BYTES else 0x20 for c in range(256))
"""For ASCII text (``str.isascii`` is a flag check), ``encode().translate(_NON_WORD_TO_SPACE).split()``
lists the same words as ``_WORD_RE.findall``, as bytes, in half the time (measured on 5,000 chunks)."""
# Sub-words of an identifier piece without underscores, in order:
# an acronym before a Capitalized word (HTTP in HTTPResponse), a word with an optional leading capital,
# an all-caps run, a digit run; trailing digits stay on the word before them (v2, utf8, HTTP2).
_SUBWORD_RE = re.compile(r"[A-Z]+[0-9]*(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")
_PLAIN_WORD_RE = re.compile(r"[A-Za-z][a-z]*")


class _Stemmer(Protocol):
    def stem_word(self, word: str) -> str: ...


def _load_stemmer() -> _Stemmer | None:
    try:
        module = importlib.import_module("py_rust_stemmers")
    except ImportError:
        logger.info("py_rust_stemmers is not installed: sparse tokens are not stemmed")
        return None
    factory = cast(Callable[[str], _Stemmer], module.SnowballStemmer)
    return factory("english")


def blake2b_term_id(token: str) -> int:
    """31-bit id of a token from blake2b (the fallback when mmh3 is absent)."""
    digest = hashlib.blake2b(token.encode("utf-8", "surrogatepass"), digest_size=4).digest()
    return int.from_bytes(digest, "little") & _ID_MASK


def _load_mmh3() -> Callable[[str], int] | None:
    try:
        import mmh3
    except ImportError:
        return None

    def mmh3_id(token: str) -> int:
        return mmh3.hash(token.encode("utf-8", "surrogatepass"), 0, False) & _ID_MASK

    return mmh3_id


_MMH3 = _load_mmh3()


def mmh3_term_id(token: str) -> int:
    """31-bit id of a token: murmur3 x86-32, seed 0, unsigned, top bit cleared.

    Raises:
        RuntimeError: mmh3 is not installed.
    """
    if _MMH3 is None:
        raise RuntimeError("mmh3 is not installed")
    return _MMH3(token)


def split_identifier(token: str) -> list[str]:
    """Lowercased sub-words of an identifier: ``getHTTPResponse`` -> ``['get', 'http', 'response']``.

    Splits at underscores, lower-to-upper case changes, the end of an acronym before a Capitalized word,
    and digit-to-letter changes; digits stay on the word they follow. Non-ASCII tokens are not split.
    """
    if not token.isascii():
        return [token.lower()]
    parts: list[str] = []
    for piece in token.split("_"):
        if piece:
            parts.extend(m.lower() for m in _SUBWORD_RE.findall(piece))
    return parts


class _TermIdCache(dict[str | bytes, tuple[int, ...]]):
    """Raw token (str, or ASCII bytes) -> term ids.

    A miss analyzes the token (``__missing__``), so a hit stays a C-level lookup.
    """

    def __init__(self, analyze: Callable[[str], tuple[int, ...]]) -> None:
        super().__init__()
        self._analyze = analyze

    def __missing__(self, raw: str | bytes) -> tuple[int, ...]:
        ids = self[raw] = self._analyze(raw.decode("ascii") if isinstance(raw, bytes) else raw)
        return ids


class _Memo(dict[str, V]):
    """Word -> what ``compute`` makes of it, computed on a miss (``__missing__``: a hit stays a C-level
    lookup); emptied when it holds ``_CACHE_LIMIT`` words."""

    def __init__(self, compute: Callable[[str], V]) -> None:
        super().__init__()
        self._compute = compute

    def __missing__(self, word: str) -> V:
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        value = self[word] = self._compute(word)
        return value


class CodeBm25Encoder:
    """BM25 sparse encoder for code and docs chunks (implements ``SparseEncoder``).

    Args:
        stem: stem prose words and identifier sub-words (when ``py_rust_stemmers`` is installed).
        stem_subwords: also stem the sub-words of compound identifiers (the default, see module doc).
    """

    def __init__(self, *, stem: bool = True, stem_subwords: bool = True) -> None:
        self._stemmer = _load_stemmer() if stem else None
        self._stem_subwords = stem_subwords
        self._term_id: Callable[[str], int] = _MMH3 or blake2b_term_id
        hash_name = "mmh3" if _MMH3 is not None else "blake2b"
        stem_name = "snowball-en" if self._stemmer is not None else "nostem"
        if self._stemmer is not None and not stem_subwords:
            stem_name += "-words"
        self._name = f"code-bm25-v1+{stem_name}+{hash_name}"
        # raw token -> terms, and raw token -> term ids; bounded, cleared when full.
        self._terms_cache = _Memo(self._analyze)
        self._ids_cache = _TermIdCache(self._analyze_ids)
        self._stem_cache = _Memo(self._stemmer.stem_word) if self._stemmer is not None else None
        self._path_words: tuple[str, list[str]] = ("", [])

    @property
    def name(self) -> str:
        """Identifies tokenizer, stemmer and hash: vectors from encoders of different names do not mix."""
        return self._name

    def _stem(self, word: str) -> str:
        stems = self._stem_cache
        if stems is None or not word.isalpha():
            return word
        return stems[word]

    def _analyze(self, raw: str) -> tuple[str, ...]:
        """Terms of one run of word characters (see the module doc)."""
        if len(raw) < 2:
            return ()
        if _PLAIN_WORD_RE.fullmatch(raw) is not None:
            low = raw.lower()
            if low in ENGLISH_STOP_WORDS:
                return ()
            return (self._stem(low),)
        parts = [p for p in split_identifier(raw) if len(p) > 1]
        whole = raw.lower()
        if len(parts) == 1 and parts[0] == whole:
            return (whole,)  # one word with digits or all caps: "v2", "sha256", "MAX"
        if self._stem_subwords:
            parts = [self._stem(p) for p in parts]
        return (whole, *parts)

    def _terms(self, raw: str) -> tuple[str, ...]:
        return self._terms_cache[raw]

    def _analyze_ids(self, raw: str) -> tuple[int, ...]:
        return tuple(map(self._term_id, self._analyze(raw)))

    def _ids(self, raw: str) -> tuple[int, ...]:
        cache = self._ids_cache
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        return cache[raw]

    def tokenize(self, text: str) -> list[str]:
        """The terms of ``text``, in order, with repeats (see the module doc)."""
        out: list[str] = []
        terms = self._terms
        for raw in _WORD_RE.findall(text):
            out.extend(terms(raw))
        return out

    def term_id(self, term: str) -> int:
        """The sparse index of one term (as produced by ``tokenize``)."""
        return self._term_id(term)

    def field_counts(self, chunk: Chunk) -> Counter[int]:
        """Boosted term frequencies of a chunk, by term id.

        Runs at C speed except for words never seen before: the chunk's words (fields repeated by
        their boost) are listed by C string methods or the regex, and ``Counter`` counts their
        chained term ids, looked up in a cache that analyzes a word on its first miss. Mapping
        word by word in Python cost about twice as much per chunk.
        """
        text = chunk.text
        words: list[str | bytes]
        if text.isascii():
            words = cast("list[str | bytes]", text.encode("ascii").translate(_NON_WORD_TO_SPACE).split())
        else:
            words = _WORD_RE.findall(text)
        if chunk.signature and chunk.signature not in text:
            words += _WORD_RE.findall(chunk.signature)
        if chunk.docstring and chunk.docstring not in text:
            words += _WORD_RE.findall(chunk.docstring)
        if chunk.qualified_name:
            words += _WORD_RE.findall(chunk.qualified_name) * QUALIFIED_NAME_BOOST
        if chunk.name:
            words += _WORD_RE.findall(chunk.name) * NAME_BOOST
        words += self._boosted_path_words(chunk.path)
        cache = self._ids_cache
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        return Counter(chain.from_iterable(map(cache.__getitem__, words)))

    def _boosted_path_words(self, path: str) -> list[str]:
        """The path's words repeated by PATH_BOOST; remembered for the last path (a file's chunks come together)."""
        last, words = self._path_words
        if path != last:
            words = _WORD_RE.findall(path) * PATH_BOOST
            self._path_words = (path, words)
        return words

    def encode_document(self, chunk: Chunk) -> SparseVector:
        """BM25 term-frequency weights of a chunk (IDF is the store's)."""
        return bm25_vector(self.field_counts(chunk))

    def encode_query(self, text: str) -> SparseVector:
        """Weight 1.0 per unique term of the query."""
        ids = self._ids
        unique = sorted({i for raw in _WORD_RE.findall(text) for i in ids(raw)})
        return SparseVector(indices=unique, values=[1.0] * len(unique))

    def encode_terms(self, weights: Mapping[str, float]) -> SparseVector:
        """A query vector from terms and their weights (terms whose ids collide add up)."""
        by_id: dict[int, float] = {}
        for term, weight in weights.items():
            if weight > 0:
                tid = self._term_id(term)
                by_id[tid] = by_id.get(tid, 0.0) + weight
        indices = sorted(by_id)
        return SparseVector(indices=indices, values=[by_id[i] for i in indices])

    def encode_documents(self, chunks: Iterable[Chunk]) -> list[SparseVector]:
        """``encode_document`` for many chunks."""
        return [self.encode_document(c) for c in chunks]


def bm25_vector(counts: Counter[int], *, avgdl: float = AVG_DOC_TOKENS) -> SparseVector:
    """BM25 term-frequency weights from term counts; ``dl`` is the sum of the counts."""
    if not counts:
        return SparseVector(indices=[], values=[])
    dl = counts.total()
    norm = BM25_K1 * (1.0 - BM25_B + BM25_B * dl / avgdl)
    k1p1 = BM25_K1 + 1.0
    indices = sorted(counts)
    return SparseVector(indices=indices, values=[n * k1p1 / (n + norm) for n in map(counts.__getitem__, indices)])
