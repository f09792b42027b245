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
   fix is seldom in one of them). A chunk that is a traceback frame's function (its name and its file
   both match one frame) gets ``frame`` more: the frame says where the failure ran, the name alone
   does not.
3. **Priors by kind of file.** Tests are candidates but weigh ``test`` (a test that reproduces a bug
   names the code under test, which is what is wanted); when the query reads as code, documentation
   and data/config files weigh ``docs``; changelogs and release notes weigh ``changelog`` (they
   describe old changes, not the code).
4. **File evidence.** Many issues name a module's concept rather than one function: each file's score
   is its best chunk plus ``second`` of its second and ``third`` of its third, and a chunk's final
   score adds ``file`` times its file's score (relative to the best file's). Functions in the best
   files rise together; a lone strong chunk still ranks. The same holds one level down: a method's
   final score adds ``klass`` times the best score among its class's chunks (the class's outline and
   its methods; a function or a docs section is its own class), relative to the best file's score, so
   the method of the class an issue is about outranks a stronger-worded method elsewhere in the file.

The list is in score order, the score each hit shows: a file's weaker chunk never sits above a stronger
chunk of another file (grouping by file is the answer's option, ``SearchResult.grouped_by_file``, and
the file's evidence is inside each score). Ties are broken by chunk id, so the same query on the same
index gives the same order.

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

**Features for a learned ranker.** :func:`rank_features` gives every candidate of the same ranking
(the same steps, computed once by ``_evidence``) with one row of :data:`FEATURES`: the evidence of
steps 1-4 one by one, the formula's own score, the headline's share, the chunk's kind and the query's
shape. :func:`rank_learned` orders those candidates by a :class:`Scorer`'s score of their rows
(:mod:`daemon.index.learned_ranker`, ``search.ranker``); there is no second ranking to keep in step.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Protocol

from daemon.core.models import Chunk, ChunkKind, SymbolKind
from daemon.core.models import MatchConfidence as Confidence
from daemon.core.ports import ScoredChunk
from daemon.index.query_analysis import AnalyzedQuery

__all__ = [
    "CONFIDENCE_HEAD",
    "DEFAULT_WEIGHTS",
    "FEATURES",
    "RankingWeights",
    "Scorer",
    "confidence",
    "fuse_headline",
    "is_changelog_path",
    "is_test_path",
    "rank",
    "rank_features",
    "rank_learned",
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
    frame: float = 0.3
    """2. Added when the chunk is a traceback frame's function: its name and its file both match the frame."""
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
    klass: float = 0.5
    """4. Weight of the chunk's class score (its class's best chunk, relative to the best file's score)."""
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


def _path_parts(path: str) -> tuple[str, ...]:
    """A path the query mentions as components, for :func:`_path_matches`."""
    return tuple(path.strip("/").split("/"))


def _is_frame(path: str, name: str, frames: Sequence[tuple[tuple[str, ...], str]]) -> bool:
    return any(n == name and _path_matches(path, (parts,)) == 1.0 for parts, n in frames)


def _outer_name(chunk: Chunk, pid: str) -> str:
    """The class a method belongs to (``Class`` of ``Class.method``); any other chunk stands alone."""
    qual = chunk.qualified_name
    if not qual or chunk.kind is not ChunkKind.CODE:
        return pid
    return qual.split(".", 1)[0]


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


class _Named:
    """What the query names, worked out once per ranking; :meth:`parts` is step 2 for one chunk."""

    def __init__(self, query: AnalyzedQuery, w: RankingWeights) -> None:
        self._w = w
        self._names = query.names
        self._paths = [_path_parts(p) for p in query.paths]
        self._path_weight = w.path / math.sqrt(len(self._paths)) if self._paths else 0.0
        self._dotted_tails = frozenset(".".join(d.split(".")[-2:]).lower() for d in query.dotted)
        self._frames = [(_path_parts(p), name) for p, name in query.frames]
        self._path_match: dict[str, float] = {}

    def parts(self, c: Chunk) -> tuple[bool, bool, float, bool]:
        """Whether its name is named, its qualified name ends a dotted name, how well its path matches
        (0, 0.5 or 1: ``_path_matches``), and whether it is a traceback frame's function."""
        name = frame = False
        if c.name and c.name.lower() in self._names:
            name = True
            frame = bool(self._frames) and _is_frame(c.path, c.name.lower(), self._frames)
        qualified = bool(self._dotted_tails) and _qualified_match(c, self._dotted_tails)
        match = 0.0
        if self._paths:
            cached = self._path_match.get(c.path)
            if cached is None:
                cached = self._path_match[c.path] = _path_matches(c.path, self._paths)
            match = cached
        return name, qualified, match, frame

    def lift(self, parts: tuple[bool, bool, float, bool]) -> float:
        name, qualified, match, frame = parts
        w = self._w
        return (
            (w.name if name else 0.0)
            + (w.frame if frame else 0.0)
            + (w.qualified if qualified else 0.0)
            + self._path_weight * match
        )


@dataclass(frozen=True, slots=True)
class _FileAndClass:
    """Step 4's scores: each chunk's file and class score (raw), the best file's, and each file's rank."""

    file_score: dict[str, float]
    class_score: dict[tuple[str, str], float]
    class_of: dict[str, tuple[str, str]]
    top_file: float

    def final(self, pid: str, path: str, score: float, w: RankingWeights) -> float:
        if self.top_file <= 0:
            return score
        return score + (w.file * self.file_score[path] + w.klass * self.class_score[self.class_of[pid]]) / self.top_file


def _file_and_class(
    chunk_score: dict[str, float], by_id: dict[str, ScoredChunk], path_of: dict[str, str], w: RankingWeights
) -> _FileAndClass:
    """Step 4: a file's score is its best chunk plus ``second`` of its second and ``third`` of its
    third; a class's, its best chunk."""
    per_file: dict[str, list[float]] = {}
    class_score: dict[tuple[str, str], float] = {}
    class_of: dict[str, tuple[str, str]] = {}
    for pid, score in chunk_score.items():
        per_file.setdefault(path_of[pid], []).append(score)
        key = class_of[pid] = (path_of[pid], _outer_name(by_id[pid].chunk, pid))
        class_score[key] = max(class_score.get(key, 0.0), score)
    file_score: dict[str, float] = {}
    for path, scores in per_file.items():
        scores.sort(reverse=True)
        file_score[path] = sum(s * f for s, f in zip(scores, (1.0, w.second, w.third), strict=False))
    return _FileAndClass(file_score, class_score, class_of, max(file_score.values()))


@dataclass(slots=True)
class _Evidence:
    """Steps 1-4 for every candidate of one ranking: what :func:`rank` orders by, and what
    :func:`rank_features` exposes to a learned ranker."""

    by_id: dict[str, ScoredChunk]
    lex_score: dict[str, float]
    dense_score: dict[str, float]
    named: dict[str, tuple[bool, bool, float, bool]]
    prior: dict[str, float]
    chunk_score: dict[str, float]
    steps: _FileAndClass
    final: dict[str, float]
    path_of: dict[str, str]


def _evidence(
    query: AnalyzedQuery,
    lexical: Sequence[ScoredChunk],
    dense: Sequence[ScoredChunk],
    w: RankingWeights,
    extra: Sequence[ScoredChunk] = (),
) -> _Evidence | None:
    """Steps 1-4 (see the module doc) for the lexical and dense candidates, and for ``extra`` chunks
    that neither ranker gave (no evidence of their own: what the query names and their file's)."""
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
    for s in extra:
        by_id.setdefault(s.id, s)
    if not by_id:
        return None

    named = _Named(query, w)
    priors: dict[tuple[str, ChunkKind, str], float] = {}
    parts: dict[str, tuple[bool, bool, float, bool]] = {}
    prior_of: dict[str, float] = {}
    chunk_score: dict[str, float] = {}
    for pid, s in by_id.items():
        c = s.chunk
        found = parts[pid] = named.parts(c)
        score = lex_score.get(pid, 0.0) + w.dense * dense_score.get(pid, 0.0) + named.lift(found)
        key = (c.path, c.kind, c.language)
        prior = priors.get(key)
        if prior is None:
            prior = priors[key] = _prior(c, query, w)
        prior_of[pid] = prior
        chunk_score[pid] = score * prior

    path_of = {pid: s.chunk.path for pid, s in by_id.items()}
    steps = _file_and_class(chunk_score, by_id, path_of, w)
    final = {pid: steps.final(pid, path_of[pid], score, w) for pid, score in chunk_score.items()}
    return _Evidence(by_id, lex_score, dense_score, parts, prior_of, chunk_score, steps, final, path_of)


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
    ev = _evidence(query, lexical, dense, w)
    if ev is None:
        return []
    final = ev.final
    ordered = sorted(final, key=lambda pid: (-final[pid], pid))
    out: list[ScoredChunk] = []
    for pid in ordered if limit is None else ordered[:limit]:
        s = ev.by_id[pid]
        sources = tuple(n for n, d in (("lexical", ev.lex_score), ("dense", ev.dense_score)) if pid in d)
        out.append(ScoredChunk(id=pid, score=round(final[pid], 6), chunk=s.chunk, sources=sources or s.sources))
    return out


FEATURES: tuple[str, ...] = (
    "lexical",
    "lexical_rank",
    "dense",
    "in_dense",
    "name",
    "qualified",
    "path",
    "path_weighted",
    "frame",
    "name_cover",
    "path_cover",
    "test",
    "docs",
    "changelog",
    "prior",
    "chunk",
    "file",
    "klass",
    "file_rank",
    "file_candidates",
    "class_candidates",
    "formula",
    "headline",
    "fused",
    "code",
    "method",
    "function",
    "class",
    "module",
    "lines",
    "part",
    "q_terms",
    "q_chars",
    "q_names",
    "q_paths",
    "q_code",
    "q_headline",
    "q_dense",
)
"""The evidence :func:`rank_features` gives for each candidate, in the order of each row (see docs/search.md)."""

_ABSENT_RANK = math.log1p(1000)
LEARNED_TOP = 300
"""How many of the formula's first candidates the learned ranker orders (it was trained on the first 150
and a sample of the rest); the others follow in the formula's order."""
_CLASS_KINDS = frozenset({SymbolKind.CLASS, SymbolKind.STRUCT, SymbolKind.INTERFACE, SymbolKind.ENUM})


class Scorer(Protocol):
    """A learned ranker: one score per feature row (:data:`FEATURES`), higher is better."""

    def score(self, rows: Sequence[Sequence[float]]) -> list[float]: ...


def _cover(tokenize: Callable[[str], list[str]] | None, text: str, terms: dict[str, float]) -> float:
    """The share of ``text``'s distinct tokens that are query terms."""
    if tokenize is None or not text:
        return 0.0
    have = _token_set(tokenize, text)
    return sum(1 for t in have if t in terms) / len(have) if have else 0.0


def rank_features(
    query: AnalyzedQuery,
    lexical: Sequence[ScoredChunk],
    dense: Sequence[ScoredChunk] = (),
    *,
    headline: Sequence[ScoredChunk] | None = None,
    weights: RankingWeights | None = None,
    tokenize: Callable[[str], list[str]] | None = None,
    top: int | None = None,
) -> tuple[list[ScoredChunk], list[list[float]]]:
    """Every candidate with its evidence (:data:`FEATURES`), in the formula's order: :func:`rank`, and
    with ``headline`` (the first line's own ranking) :func:`fuse_headline`'s. The same steps compute
    both the formula's score and the features, so a learned ranker reads what the formula reads.
    With ``top``, rows for the first ``top`` candidates only (every candidate is still returned)."""
    w = weights or DEFAULT_WEIGHTS
    head = list(headline or ())
    ev = _evidence(query, lexical, dense, w, extra=head)
    if ev is None:
        return [], []
    top_head = max((s.score for s in head), default=0.0)
    head_share = {s.id: s.score / top_head for s in head} if top_head > 0 else {}
    top_final = max(ev.final.values())
    formula = {pid: v / top_final if top_final > 0 else 0.0 for pid, v in ev.final.items()}
    fused = {pid: v + w.headline * head_share.get(pid, 0.0) for pid, v in formula.items()}
    top_fused = max(fused.values())
    ordered = sorted(fused, key=lambda pid: (-fused[pid], pid))
    lex_pos = {s.id: i for i, s in enumerate(sorted(lexical, key=lambda s: (-s.score, s.id)))}
    top_chunk = max(ev.chunk_score.values())
    steps = ev.steps
    file_rank = {p: i for i, p in enumerate(sorted(steps.file_score, key=lambda p: (-steps.file_score[p], p)))}
    file_count: dict[str, int] = {}
    class_count: dict[tuple[str, str], int] = {}
    for pid, path in ev.path_of.items():
        file_count[path] = file_count.get(path, 0) + 1
        key = steps.class_of[pid]
        class_count[key] = class_count.get(key, 0) + 1
    n_paths = len(query.paths)
    q_row = [
        math.log1p(len(query.terms)),
        math.log1p(len(query.text)),
        math.log1p(len(query.names)),
        math.log1p(n_paths),
        float(query.code_like),
        float(query.headline is not None),
        float(bool(dense)),
    ]
    out: list[ScoredChunk] = []
    rows: list[list[float]] = []
    path_cover: dict[str, float] = {}
    top_file = steps.top_file if steps.top_file > 0 else 1.0
    for position, pid in enumerate(ordered):
        s = ev.by_id[pid]
        c = s.chunk
        sources = tuple(n for n, d in (("lexical", ev.lex_score), ("dense", ev.dense_score)) if pid in d)
        out.append(ScoredChunk(id=pid, score=round(fused[pid], 6), chunk=c, sources=sources or s.sources))
        if top is not None and position >= top:
            continue
        name, qualified, match, frame = ev.named[pid]
        path = ev.path_of[pid]
        pos = lex_pos.get(pid)
        kind = c.symbol_kind
        covered = path_cover.get(path)
        if covered is None:
            covered = path_cover[path] = _cover(tokenize, path, query.terms)
        rows.append(
            [
                ev.lex_score.get(pid, 0.0),
                _ABSENT_RANK if pos is None else math.log1p(pos),
                ev.dense_score.get(pid, 0.0),
                float(pid in ev.dense_score),
                float(name),
                float(qualified),
                match,
                match / math.sqrt(n_paths) if n_paths else 0.0,
                float(frame),
                _cover(tokenize, c.qualified_name or c.name or "", query.terms),
                covered,
                float(is_test_path(path)),
                float(c.kind is ChunkKind.DOCS or c.language not in _PROGRAMMING),
                float(is_changelog_path(path)),
                ev.prior[pid],
                ev.chunk_score[pid] / top_chunk if top_chunk > 0 else 0.0,
                steps.file_score[path] / top_file,
                steps.class_score[steps.class_of[pid]] / top_file,
                math.log1p(file_rank[path]),
                math.log1p(file_count[path]),
                math.log1p(class_count[steps.class_of[pid]]),
                formula[pid],
                head_share.get(pid, 0.0),
                fused[pid] / top_fused if top_fused > 0 else 0.0,
                float(c.kind is ChunkKind.CODE),
                float(kind is SymbolKind.METHOD),
                float(kind is SymbolKind.FUNCTION),
                float(kind in _CLASS_KINDS),
                float(kind is SymbolKind.MODULE),
                math.log1p(c.end_line - c.start_line + 1),
                float(c.part > 1),
                *q_row,
            ]
        )
    return out, rows


def rank_learned(
    scorer: Scorer,
    query: AnalyzedQuery,
    lexical: Sequence[ScoredChunk],
    dense: Sequence[ScoredChunk] = (),
    *,
    headline: Sequence[ScoredChunk] | None = None,
    weights: RankingWeights | None = None,
    tokenize: Callable[[str], list[str]] | None = None,
    limit: int | None = None,
) -> list[ScoredChunk]:
    """The formula's first :data:`LEARNED_TOP` candidates (:func:`rank_features`) ordered by ``scorer``'s
    score of their features (shown as each hit's score; ties by chunk id), then the rest in the
    formula's order, below them."""
    candidates, rows = rank_features(
        query, lexical, dense, headline=headline, weights=weights, tokenize=tokenize, top=LEARNED_TOP
    )
    if not candidates:
        return []
    scores = scorer.score(rows)
    order = sorted(range(len(rows)), key=lambda i: (-scores[i], candidates[i].id))
    floor = min(scores) if scores else 0.0
    ranked = [
        ScoredChunk(
            id=candidates[i].id, score=round(scores[i], 6), chunk=candidates[i].chunk, sources=candidates[i].sources
        )
        for i in order
    ]
    rest = candidates[len(rows) :] if limit is None else candidates[len(rows) : max(len(rows), limit)]
    ranked += [replace(c, score=round(floor, 6)) for c in rest]
    return ranked if limit is None else ranked[:limit]


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
