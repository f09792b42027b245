"""The ranking every search goes through: lexical and dense candidates into one ordered list.

Candidates come from the store: the lexical ranker's top (BM25 with the store's IDF and the query's
term weights, :mod:`daemon.index.query_analysis`) and, when vectors are complete, the dense ranker's
top (cosine). Each candidate chunk gets a score in four steps:

1. **Evidence.** The lexical score relative to the best lexical score, plus ``dense`` times the
   cosine's share of the best cosine above ``dense_floor``. The dense side adds to what lexical found
   and can lift a chunk lexical missed, but it is bounded, so it never drowns an exact hit.
2. **What the query names.** A chunk whose name is a name the query mentions gets ``name``; one whose
   qualified name ends a dotted name of the query (``QuerySet.bulk_create``) gets ``qualified``; one
   in a file the query names (a path, a traceback frame, a dotted module) gets ``path`` divided by the
   square root of how many files the query names (a long traceback names many framework files; the
   fix is seldom in one of them).
3. **Priors by kind of file.** Tests are candidates but weigh ``test`` (a test that reproduces a bug
   names the code under test, which is what is wanted); when the query reads as code, documentation
   and data/config files weigh ``docs``; changelogs and release notes weigh ``changelog`` (they
   describe old changes, not the code).
4. **File evidence.** Many issues name a module's concept rather than one function: each file's score
   is its best chunk plus ``second`` of its second and ``third`` of its third, and a chunk's final
   score adds ``file`` times its file's score (relative to the best file's). Functions in the best
   files rise together; a lone strong chunk still ranks.

Ties are broken by chunk id, so the same query on the same index gives the same order.

**A headline.** A query of several lines (an issue) is ranked twice, as its whole text and as its first
line alone (:attr:`AnalyzedQuery.headline`, lexical candidates of its own), and
:func:`fuse_headline` orders the chunks by their relative score in the first ranking plus ``headline``
times their relative score in the second. The title names the topic without the noise of pasted
output; the whole text still carries the identifiers and the traceback.

**Confidence** (``matches``, :func:`confidence`), from the first five hits: *cover* is the share of the
query's term weight a hit's path, qualified name, signature and text carry. ``strong`` when a hit
covers at least a third (or, with vectors, the best cosine is 0.45 or more and something is covered);
``none`` when nothing is covered, or when the query names code and no hit holds any of those names
while covering under half; else ``weak``.

The weights were tuned on the SWE-bench-Lite development set (``bench/localization.py``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from daemon.core.models import Chunk, ChunkKind
from daemon.core.models import MatchConfidence as Confidence
from daemon.core.ports import ScoredChunk
from daemon.index.query_analysis import AnalyzedQuery

__all__ = [
    "CONFIDENCE_HEAD",
    "DEFAULT_WEIGHTS",
    "RankingWeights",
    "confidence",
    "fuse_headline",
    "is_changelog_path",
    "is_test_path",
    "rank",
]


@dataclass(frozen=True, kw_only=True)
class RankingWeights:
    """The constants of :func:`rank`, by the step of the module doc that uses them."""

    dense: float = 0.5
    """1. Evidence: weight of the cosine's share above ``dense_floor`` next to the relative lexical score."""
    dense_floor: float = 0.2
    """1. The cosine below which the dense ranker adds nothing."""
    name: float = 0.25
    """2. Added when the chunk's name is a name the query mentions."""
    qualified: float = 0.35
    """2. Added when the chunk's qualified name ends a dotted name of the query."""
    path: float = 0.4
    """2. Added (times 1 or 0.5, see ``_path_matches``) when the chunk's file is a path the query names."""
    test: float = 0.5
    """3. Factor for tests."""
    docs: float = 0.5
    """3. Factor for documentation and data/config files when the query reads as code."""
    changelog: float = 0.25
    """3. Factor for changelogs and release notes."""
    second: float = 0.5
    """4. Share of a file's second-best chunk in the file's score."""
    third: float = 0.25
    """4. Share of its third-best chunk."""
    file: float = 0.25
    """4. Weight of the chunk's file score (relative to the best file's) in its final score."""
    group: tuple[int, ...] = (4, 3, 2, 1)
    """How many chunks the best files put first, in order (``_grouped``); empty: plain score order."""
    headline: float = 0.25
    """Weight of the headline's ranking in :func:`fuse_headline`."""


DEFAULT_WEIGHTS = RankingWeights()
CONFIDENCE_HEAD = 5
"""How many of the first hits :func:`confidence` reads."""

_TEST_RE = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec)/|(^|/)test_[^/]*$|_tests?\.\w+$|\.(test|spec)\.\w+$|(^|/)conftest\.py$"
)
_CHANGELOG_RE = re.compile(
    r"(^|/)(releases?|changelogs?|changes|news|history|whatsnew|release[-_]notes)(/|\.\w+$|$)"
    r"|(^|/)(CHANGELOG|CHANGES|NEWS|HISTORY|RELEASE[-_]NOTES)[^/]*$",
    re.IGNORECASE,
)
_PROGRAMMING = frozenset(
    {
        "python",
        "javascript",
        "typescript",
        "tsx",
        "go",
        "rust",
        "c",
        "cpp",
        "java",
        "ruby",
        "csharp",
        "kotlin",
        "swift",
        "php",
        "scala",
        "lua",
        "bash",
    }
)


@lru_cache(maxsize=16_384)
def is_test_path(path: str) -> bool:
    return _TEST_RE.search(path) is not None


@lru_cache(maxsize=16_384)
def is_changelog_path(path: str) -> bool:
    return _CHANGELOG_RE.search(path) is not None


def _path_matches(chunk_path: str, mentioned: Sequence[tuple[str, ...]]) -> float:
    """1.0 when a mentioned path and the chunk's path agree on two or more trailing components
    (either may be the longer: a traceback gives absolute paths); 0.5 on the file name alone."""
    parts = tuple(chunk_path.split("/"))
    best = 0.0
    for m in mentioned:
        n = min(len(m), len(parts))
        if n == 0 or m[-n:] != parts[-n:]:
            continue
        best = max(best, 1.0 if n >= 2 or len(parts) == 1 else 0.5)
        if best == 1.0:
            break
    return best


def _prior(chunk: Chunk, query: AnalyzedQuery, w: RankingWeights) -> float:
    prior = 1.0
    if is_changelog_path(chunk.path):
        prior *= w.changelog
    elif query.code_like and (chunk.kind is ChunkKind.DOCS or chunk.language not in _PROGRAMMING):
        prior *= w.docs
    if is_test_path(chunk.path):
        prior *= w.test
    return prior


def _qualified_match(chunk: Chunk, dotted_tails: frozenset[str]) -> bool:
    qual = chunk.qualified_name
    if not qual or "." not in qual:
        return False
    parts = qual.split(".")
    return ".".join(parts[-2:]).lower() in dotted_tails


def rank(
    query: AnalyzedQuery,
    lexical: Sequence[ScoredChunk],
    dense: Sequence[ScoredChunk] = (),
    *,
    weights: RankingWeights | None = None,
    limit: int | None = None,
) -> list[ScoredChunk]:
    """One ordered list from the lexical and dense candidates (see the module doc); its first ``limit``
    (every candidate when None)."""
    w = weights or DEFAULT_WEIGHTS
    by_id: dict[str, ScoredChunk] = {}
    lex_score: dict[str, float] = {}
    dense_score: dict[str, float] = {}
    top_lex = max((s.score for s in lexical), default=0.0)
    for s in lexical:
        by_id[s.id] = s
        lex_score[s.id] = s.score / top_lex if top_lex > 0 else 0.0
    top_dense = max((s.score for s in dense), default=0.0)
    span = top_dense - w.dense_floor
    for s in dense:
        by_id.setdefault(s.id, s)
        dense_score[s.id] = max(0.0, s.score - w.dense_floor) / span if span > 0 else 0.0
    if not by_id:
        return []

    mentioned = [tuple(p.strip("/").split("/")) for p in query.paths]
    path_weight = w.path / math.sqrt(len(mentioned)) if mentioned else 0.0
    dotted_tails = frozenset(".".join(d.split(".")[-2:]).lower() for d in query.dotted)
    names = query.names
    priors: dict[tuple[str, ChunkKind, str], float] = {}
    path_match: dict[str, float] = {}
    chunk_score: dict[str, float] = {}
    path_of: dict[str, str] = {}
    per_file: dict[str, list[float]] = {}
    for pid, s in by_id.items():
        c = s.chunk
        path = c.path
        score = lex_score.get(pid, 0.0) + w.dense * dense_score.get(pid, 0.0)
        if c.name and c.name.lower() in names:
            score += w.name
        if dotted_tails and _qualified_match(c, dotted_tails):
            score += w.qualified
        if mentioned:
            match = path_match.get(path)
            if match is None:
                match = path_match[path] = _path_matches(path, mentioned)
            score += path_weight * match
        key = (path, c.kind, c.language)
        prior = priors.get(key)
        if prior is None:
            prior = priors[key] = _prior(c, query, w)
        score = score * prior
        chunk_score[pid] = score
        path_of[pid] = path
        per_file.setdefault(path, []).append(score)

    file_score: dict[str, float] = {}
    for path, scores in per_file.items():
        scores.sort(reverse=True)
        file_score[path] = sum(s * f for s, f in zip(scores, (1.0, w.second, w.third), strict=False))
    top_file = max(file_score.values())
    final: dict[str, float] = {}
    for pid, score in chunk_score.items():
        rel = file_score[path_of[pid]] / top_file if top_file > 0 else 0.0
        final[pid] = score + w.file * rel
    ordered = sorted(final, key=lambda pid: (-final[pid], pid))
    if w.group:
        ordered = _grouped(ordered, path_of, w.group)
    out: list[ScoredChunk] = []
    for pid in ordered if limit is None else ordered[:limit]:
        s = by_id[pid]
        sources = tuple(n for n, d in (("lexical", lex_score), ("dense", dense_score)) if pid in d)
        out.append(ScoredChunk(id=pid, score=round(final[pid], 6), chunk=s.chunk, sources=sources or s.sources))
    return out


def fuse_headline(
    whole: Sequence[ScoredChunk],
    headline: Sequence[ScoredChunk],
    *,
    weights: RankingWeights | None = None,
    limit: int | None = None,
) -> list[ScoredChunk]:
    """The whole query's ranking and its headline's as one (see the module doc): each chunk's score
    relative to the best of the whole ranking, plus ``headline`` times its relative score in the
    headline's; ties by chunk id."""
    w = weights or DEFAULT_WEIGHTS
    top_whole = max((s.score for s in whole), default=0.0)
    top_head = max((s.score for s in headline), default=0.0)
    fused: dict[str, float] = {}
    by_id: dict[str, ScoredChunk] = {}
    for s in whole:
        by_id[s.id] = s
        fused[s.id] = s.score / top_whole if top_whole > 0 else 0.0
    for s in headline:
        by_id.setdefault(s.id, s)
        fused[s.id] = fused.get(s.id, 0.0) + (w.headline * s.score / top_head if top_head > 0 else 0.0)
    ordered = sorted(fused, key=lambda pid: (-fused[pid], pid))
    return [
        ScoredChunk(id=pid, score=round(fused[pid], 6), chunk=by_id[pid].chunk, sources=by_id[pid].sources)
        for pid in (ordered if limit is None else ordered[:limit])
    ]


def _grouped(ordered: list[str], path_of: dict[str, str], quotas: tuple[int, ...]) -> list[str]:
    """The best files' chunks first: the first file's best ``quotas[0]``, the second's ``quotas[1]``, ...;
    then everything else in score order. Files keep the order of their best chunk."""
    files: dict[str, list[str]] = {}
    for pid in ordered:
        files.setdefault(path_of[pid], []).append(pid)
    head: list[str] = []
    for quota, pids in zip(quotas, files.values(), strict=False):
        head.extend(pids[:quota])
    taken = set(head)
    return head + [pid for pid in ordered if pid not in taken]


@lru_cache(maxsize=4_096)
def _token_set(tokenize: Callable[[str], list[str]], text: str) -> frozenset[str]:
    """The tokens of a hit's text: the same hits head many searches (the stages of an upfront retrieval)."""
    return frozenset(tokenize(text))


def confidence(
    query: AnalyzedQuery,
    ranked: Sequence[ScoredChunk],
    tokenize: Callable[[str], list[str]],
    *,
    dense_top: float | None = None,
) -> Confidence:
    """How relevant the best of ``ranked`` is likely to be (see the module doc)."""
    if not ranked or not query.terms:
        return Confidence.NONE
    head = ranked[:CONFIDENCE_HEAD]
    total = sum(query.terms.values())
    best_cover = 0.0
    names_seen = False
    for s in head:
        c = s.chunk
        text = "\n".join(x for x in (c.path, c.qualified_name or "", c.signature or "", c.text) if x)
        have = _token_set(tokenize, text)
        cover = sum(wt for t, wt in query.terms.items() if t in have) / total
        best_cover = max(best_cover, cover)
        low = text.lower()
        if any(n in low for n in query.names):
            names_seen = True
    if dense_top is not None and dense_top >= 0.45 and best_cover > 0:
        return Confidence.STRONG
    if query.names and not names_seen and best_cover < 0.5:
        return Confidence.NONE
    if best_cover == 0.0:
        return Confidence.NONE
    return Confidence.WEAK if best_cover < 1 / 3 else Confidence.STRONG
