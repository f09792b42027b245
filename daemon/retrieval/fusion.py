"""Context fusion: dedup, near-duplicate removal, merging, rerank, and the stage's token budget.

1. **Group** the candidates by id (the same chunk found by several queries or sources): the fused
   rank is reciprocal-rank fusion over every appearance, ``sum 1 / (10 + rank)``.
2. **Exact dedup**: equal text (content hash of the whitespace-normalized text) is one piece.
3. **Near duplicates**: two pieces whose stored vectors (the index's; the model's for chunks not
   embedded yet) have cosine > ``near_duplicate_cosine`` (0.95) are one piece; the better-ranked
   one stays.
4. **Merge** overlapping or adjacent pieces of the same file into one (verbatim line slices are
   joined; a piece whose lines lie inside another's is folded into it). A merged piece keeps the
   best fused rank of its parts (a dedup adds them up: the same text found twice is more evidence;
   a method and its class are not).
5. **Rerank**: a cross-encoder when one is configured (half fused rank, half its sigmoid score);
   otherwise the documented fallback, with the embedding model when one is loaded:
   ``0.2 * fused rank + similarity + 0.3 * lexical overlap`` and without one
   ``fused rank + 0.1 * lexical overlap`` (a near tie-break: it moves a piece a rank or two at
   most). *Fused rank* is absolute, not relative to the other pieces: ``min(1, rrf * (10 + 1))``
   (1.0 = first for some query); *similarity* is the piece's best cosine to the queries that found
   it (by the stored-model vectors of the chunks it holds, the best one for a merged piece; by the
   model's vector of its text for facts, web and advisories); *lexical overlap* is the share of a
   query's terms in the piece's text, symbol and path. Both are measured against each query's
   *widest* form: a query whose terms all lie in a longer query of the same retrieval (the
   identifiers the task names, next to the task itself) is a part of that query, and a piece it
   found is measured against the whole of it. Measured against the part alone, any piece that
   uses those identifiers covers all of its terms and scores a high cosine to a two-word query,
   and outranks the piece the task describes (``bench/retrieval_quality.py``, seed 11: agent
   R@1 0.795 -> 0.800 on Python, 0.745 -> 0.765 on JS/TS). Workflow-aware weights are added: code
   workflows favour pieces whose symbol the query names (every word of its name, +0.15),
   functions/classes with a signature (+0.05) and language-server facts (+0.1); document workflows
   favour section paths the query names (+0.15) and decisions (+0.1) and discount code (-0.1).
   Scores are then normalized so the best piece is 1.0 (ties keep the fused order).

   Why this shape: hybrid search is already a rank fusion of BM25 and dense retrieval, so a large
   lexical term on top of it counts lexical evidence twice and lost to plain hybrid
   (``bench/retrieval_quality.py``: MRR@10 0.775 against 0.851 with ``0.55 * rank + 0.45 *
   lexical``); what rank fusion throws away is how *strong* the dense match is, and the cosine
   puts that back. Because the score is led by a similarity, the validator's threshold on the
   normalized score cuts adaptively: one piece when the best stands out, more when several are
   close (on rank-only scores the same ratio is just a fixed top-k). Weights chosen on the
   benchmark's tuning seed (11), reported on another (7).
6. **Budget** (``fit_budget``): pieces in score order while they fit the stage's ``token_budget``
   (counted with a real tokenizer, the citation header included). A piece is given whole, or as
   its outline (signatures and the line range of the rest, :mod:`daemon.retrieval.outline`) when
   the ranker's doubt about it is worth more than the outline saves (``outline_wanted``) or its
   whole text no longer fits; never cut mid-way. Every piece left out is a recorded cut.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from daemon.core.models import Chunk, ChunkKind, SymbolKind, content_hash
from daemon.core.ports import Reranker
from daemon.retrieval.lexical import overlap, terms
from daemon.retrieval.models import Attribution, Candidate, ContextPiece, Rejection, SourceName, WorkflowKind
from daemon.retrieval.outline import outline_text
from daemon.retrieval.ports import ChunkVectors
from daemon.retrieval.tokens import TokenCounter

__all__ = ["FusedPiece", "Fusion", "cosine", "fit_budget", "outline_wanted", "render_piece"]


_RRF_K = 10
_RANK_WEIGHT = 0.2
"""Weight of the fused rank next to the similarity (fallback rerank with a model)."""
_LEXICAL_WEIGHT = 0.3
"""Weight of the query terms' overlap with the piece (fallback rerank with a model)."""
_TIE_BREAK_WEIGHT = 0.1
"""The same without a model: small, so it only reorders pieces whose fused ranks are close."""
_OUTLINE_SAVING_TOKENS = 200
"""At ``outline_threshold``, a piece is still given whole when its outline would save at most this
many tokens (see ``outline_wanted``; chosen on the benchmark's seed 11)."""
_SIGNATURE_KINDS = {SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CLASS, SymbolKind.INTERFACE, SymbolKind.STRUCT}


@dataclass(frozen=True, kw_only=True)
class FusedPiece:
    """A candidate group on its way through fusion and validation."""

    head: Candidate
    text: str
    attribution: Attribution
    fused: float
    queries: tuple[str, ...]
    merged_from: tuple[str, ...] = field(default=())
    chunks: tuple[Chunk, ...] = field(default=())
    """The index chunks this piece holds (its own and those folded into it)."""
    score: float = 0.0
    similarity: float | None = None
    """Best cosine of the piece to the queries that found it (None: no embedding model)."""

    @property
    def id(self) -> str:
        return self.head.id

    @property
    def verbatim(self) -> bool:
        """The text is exactly the file's lines ``start_line``..``end_line`` (a plain slice)."""
        a = self.attribution
        if not self.head.grounded_text or a.start_line is None or a.end_line is None:
            return False
        return self.text.count("\n") + 1 == a.end_line - a.start_line + 1

    def to_piece(self, tokens: int, *, outline: str | None = None) -> ContextPiece:
        return ContextPiece(
            id=self.id,
            source=self.head.source,
            text=self.text if outline is None else outline,
            outline=outline is not None,
            attribution=self.attribution,
            score=round(self.score, 4),
            tokens=tokens,
            queries=self.queries,
            merged_from=self.merged_from,
        )


def render_piece(text: str, attribution: Attribution) -> str:
    """How a piece reads in a prompt: a citation line, then the text."""
    return f"# {attribution.cite()}\n{text}"


@dataclass(frozen=True, slots=True)
class _Normed:
    """A vector and its Euclidean norm, computed once for every cosine it takes part in."""

    vector: Sequence[float]
    norm: float

    @classmethod
    def of(cls, vector: Sequence[float]) -> _Normed:
        return cls(vector, math.sqrt(sum(map(operator.mul, vector, vector))))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine of two vectors (0 when either is all zeros)."""
    return _normed_cosine(_Normed.of(a), _Normed.of(b))


def _normed_cosine(a: _Normed, b: _Normed) -> float:
    dot = sum(map(operator.mul, a.vector, b.vector))
    return 0.0 if a.norm == 0 or b.norm == 0 else dot / (a.norm * b.norm)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, x))))


class Fusion:
    """One workflow's fusion settings; ``rank`` is blocking (vectors, cross-encoder): run it in a thread."""

    def __init__(
        self,
        *,
        workflow: WorkflowKind,
        vectors: ChunkVectors | None = None,
        reranker: Reranker | None = None,
        near_duplicate_cosine: float = 0.95,
    ) -> None:
        self._workflow = workflow
        self._vectors = vectors
        self._reranker = reranker
        self._near = near_duplicate_cosine

    @property
    def rerank_method(self) -> str:
        return (
            f"cross-encoder {self._reranker.name}" if self._reranker is not None else "fallback (fused rank + lexical)"
        )

    def rank(self, candidates: Sequence[Candidate]) -> tuple[list[FusedPiece], list[Rejection]]:
        """Steps 1-5 of the module docstring: the pieces best first, and what was folded away."""
        rejected: list[Rejection] = []
        pieces = self._group(candidates)
        pieces = self._exact_dedup(pieces, rejected)
        pieces = self._near_dedup(pieces, rejected)
        pieces = self._merge(pieces, rejected)
        return self._rerank(pieces), rejected

    # -- steps ----------------------------------------------------------------------------------

    def _group(self, candidates: Sequence[Candidate]) -> list[FusedPiece]:
        groups: dict[str, list[Candidate]] = {}
        for cand in candidates:
            groups.setdefault(cand.id, []).append(cand)
        pieces: list[FusedPiece] = []
        for members in groups.values():
            head = min(members, key=lambda c: (c.rank, -c.score))
            fused = sum(1.0 / (_RRF_K + c.rank) for c in members)
            queries = tuple(dict.fromkeys(c.query for c in members if c.query))
            pieces.append(
                FusedPiece(
                    head=head,
                    text=head.text,
                    attribution=head.attribution,
                    fused=fused,
                    queries=queries,
                    chunks=(head.chunk,) if head.chunk is not None else (),
                )
            )
        pieces.sort(key=lambda p: p.fused, reverse=True)
        return pieces

    def _exact_dedup(self, pieces: list[FusedPiece], rejected: list[Rejection]) -> list[FusedPiece]:
        kept: dict[str, FusedPiece] = {}
        for piece in pieces:
            key = content_hash(" ".join(piece.text.split()))
            first = kept.get(key)
            if first is None:
                kept[key] = piece
                continue
            kept[key] = _absorb(first, piece)
            rejected.append(_reject(piece, "dedup", f"same text as {first.attribution.cite()}"))
        return list(kept.values())

    def _near_dedup(self, pieces: list[FusedPiece], rejected: list[Rejection]) -> list[FusedPiece]:
        chunks = [p.head.chunk for p in pieces if p.head.chunk is not None]
        if self._vectors is None or len(chunks) < 2:
            return pieces
        by_hash = self._vectors.vectors(chunks)
        kept: list[tuple[FusedPiece, _Normed | None]] = []
        for piece in pieces:
            stored = by_hash.get(piece.head.chunk.chunk_hash) if piece.head.chunk is not None else None
            vector = _Normed.of(stored) if stored is not None else None
            twin = None
            if vector is not None:
                twin = next(
                    (i for i, (_, v) in enumerate(kept) if v is not None and _normed_cosine(v, vector) > self._near),
                    None,
                )
            if twin is None:
                kept.append((piece, vector))
                continue
            first, first_vector = kept[twin]
            kept[twin] = (_absorb(first, piece), first_vector)
            rejected.append(
                _reject(piece, "near_duplicate", f"cosine > {self._near:g} with {first.attribution.cite()}")
            )
        return [p for p, _ in kept]

    def _merge(self, pieces: list[FusedPiece], rejected: list[Rejection]) -> list[FusedPiece]:
        order = {p.id: i for i, p in enumerate(pieces)}
        located = sorted(
            (p for p in pieces if p.head.grounded_text and p.attribution.path and p.attribution.start_line),
            key=lambda p: (p.attribution.path or "", p.attribution.start_line or 0),
        )
        others = [p for p in pieces if p not in located]
        merged: list[FusedPiece] = []
        for piece in located:
            last = merged[-1] if merged else None
            joined = _join(last, piece) if last is not None else None
            if last is not None and joined is not None:
                merged[-1] = joined
                rejected.append(_reject(piece, "merge", f"merged into {joined.attribution.cite()}"))
            else:
                merged.append(piece)
        result = merged + others
        result.sort(key=lambda p: order.get(p.id, len(order)))
        return result

    def _rerank(self, pieces: list[FusedPiece]) -> list[FusedPiece]:
        if not pieces:
            return []
        similarity = self._similarities(pieces)
        cross: list[float] | None = None
        if self._reranker is not None:
            query = pieces[0].queries[0] if pieces[0].queries else ""
            cross = [_sigmoid(s) for s in self._reranker.score(query, [p.text for p in pieces])]
        raw: list[float] = []
        widest = _widest({q for p in pieces for q in p.queries})
        for i, piece in enumerate(pieces):
            rank_part = min(1.0, piece.fused * (_RRF_K + 1))
            if cross is not None:
                score = 0.5 * rank_part + 0.5 * cross[i]
            else:
                haystack = f"{piece.text}\n{piece.attribution.symbol or ''} {piece.attribution.section_path or ''} "
                haystack += piece.attribution.path or ""
                lexical = max((overlap(terms(widest[q]), haystack) for q in piece.queries), default=0.0)
                if similarity is not None:
                    score = _RANK_WEIGHT * rank_part + similarity[i] + _LEXICAL_WEIGHT * lexical
                else:
                    score = rank_part + _TIE_BREAK_WEIGHT * lexical
                score += self._bonus(piece)
            raw.append(score)
        top = max(raw)
        top = top if top > 0 else 1.0
        scored = [
            replace(p, score=max(0.0, s) / top, similarity=similarity[i] if similarity is not None else None)
            for i, (p, s) in enumerate(zip(pieces, raw, strict=True))
        ]
        scored.sort(key=lambda p: (p.score, p.fused), reverse=True)
        return scored

    def _similarities(self, pieces: Sequence[FusedPiece]) -> list[float] | None:
        """Each piece's best cosine to the queries that found it, each in its widest form (the embedding
        model), or None without one.

        A piece that holds index chunks scores as its best chunk (their stored-model vectors: a merged
        piece is as relevant as the most relevant chunk in it, and its joined text may exceed what
        the model reads); any other piece (facts, web, advisories) by the model's vector of its text.
        """
        if self._vectors is None:
            return None
        widest = _widest({q for p in pieces for q in p.queries})
        queries = sorted(set(widest.values()))
        query_vectors = self._vectors.text_vectors(queries) if queries else None
        if query_vectors is None:
            return None
        by_query = {q: _Normed.of(v) for q, v in zip(queries, query_vectors, strict=True)}
        stored = {h: _Normed.of(v) for h, v in self._vectors.vectors([c for p in pieces for c in p.chunks]).items()}
        vectors: list[list[_Normed]] = [
            [stored[c.chunk_hash] for c in p.chunks if c.chunk_hash in stored] for p in pieces
        ]
        missing = [i for i, v in enumerate(vectors) if not v]
        if missing:
            texts = self._vectors.text_vectors([pieces[i].text for i in missing]) or []
            for i, vector in zip(missing, texts, strict=True):
                vectors[i] = [_Normed.of(vector)]
        return [
            max((_normed_cosine(by_query[widest[q]], v) for q in p.queries for v in vs), default=0.0)
            for p, vs in zip(pieces, vectors, strict=True)
        ]

    def _bonus(self, piece: FusedPiece) -> float:
        chunk = piece.head.chunk
        query_terms: set[str] = set[str]().union(*(terms(q) for q in piece.queries))
        if self._workflow is WorkflowKind.DOCUMENT:
            bonus = 0.0
            section = piece.attribution.section_path
            if section and query_terms & terms(section):
                bonus += 0.15
            if piece.head.source is SourceName.DECISIONS:
                bonus += 0.1
            if chunk is not None and chunk.kind is ChunkKind.CODE:
                bonus -= 0.1
            return bonus
        bonus = 0.0
        if _names_symbol(query_terms, piece.attribution.symbol):
            bonus += 0.15
        if chunk is not None and chunk.symbol_kind in _SIGNATURE_KINDS and chunk.signature:
            bonus += 0.05
        if piece.head.source is SourceName.LSP:
            bonus += 0.1
        return bonus


def _widest(queries: set[str]) -> dict[str, str]:
    """Each query's widest form: of the queries holding all of its terms, the one with the most terms.

    A query is its own widest form unless its terms all lie in a longer query (the identifiers a
    task names are part of the task); ties keep the query itself, then the first in sort order.
    """
    words = {q: terms(q) for q in queries}
    ordered = sorted(queries)
    return {
        q: max((o for o in ordered if words[q] <= words[o]), key=lambda o: (len(words[o]), o == q)) for q in ordered
    }


def _names_symbol(query_terms: set[str], symbol: str | None) -> bool:
    """The queries name the symbol: every word of one of its names (``Class.method`` -> ``method``) is in them."""
    if not symbol:
        return False
    for name in symbol.split(" + "):
        words = terms(name.rsplit(".", 1)[-1])
        if words and words <= query_terms:
            return True
    return False


def _absorb(keeper: FusedPiece, other: FusedPiece, *, same_text: bool = True) -> FusedPiece:
    """``keeper`` with ``other`` folded in. The same text found twice (dedup) adds up its evidence;
    pieces of one file joined into one (``same_text=False``) keep the better one's: counting a
    method and the class around it, or two halves of a split body, twice would rank a file with
    two middling chunks over a single good one."""
    return replace(
        keeper,
        fused=keeper.fused + other.fused if same_text else max(keeper.fused, other.fused),
        queries=tuple(dict.fromkeys((*keeper.queries, *other.queries))),
        merged_from=(*keeper.merged_from, other.id, *other.merged_from),
        chunks=(*keeper.chunks, *other.chunks),
    )


def _join(a: FusedPiece, b: FusedPiece) -> FusedPiece | None:
    """``a`` and ``b`` as one piece when they overlap or touch in the same file, else None."""
    pa, pb = a.attribution, b.attribution
    if pa.path != pb.path or None in (pa.start_line, pa.end_line, pb.start_line, pb.end_line):
        return None
    a_start, a_end, b_start, b_end = pa.start_line or 0, pa.end_line or 0, pb.start_line or 0, pb.end_line or 0
    if b_start > a_end + 1:
        return None
    if b_end <= a_end:  # b lies inside a
        text, end = a.text, a_end
    elif a_start >= b_start and a_end <= b_end:  # a lies inside b
        return replace(_absorb(b, a, same_text=False), attribution=pb)
    elif a.verbatim and b.verbatim:
        skip = a_end - b_start + 1
        rest = b.text.split("\n")[skip:]
        text = "\n".join([a.text, *rest])
        end = b_end
    else:
        return None
    symbols = [s for s in (pa.symbol, pb.symbol) if s]
    attribution = pa.model_copy(
        update={
            "end_line": end,
            "symbol": " + ".join(dict.fromkeys(symbols)) or None,
            "ast_type": pa.ast_type if pa.ast_type == pb.ast_type else "merged",
        }
    )
    joined = _absorb(a, b, same_text=False)
    return replace(joined, text=text, attribution=attribution)


def _reject(piece: FusedPiece, step: str, reason: str) -> Rejection:
    return Rejection(id=piece.id, cite=piece.attribution.cite(), step=step, reason=reason)


def outline_wanted(score: float, whole_tokens: int, outline_tokens: int, outline_below: float) -> bool:
    """Whether a piece that fits whole is better given as its outline: when the ranker's doubt about
    it (``1 - score``, the score normalized to the best piece's) times the tokens its outline saves
    exceeds what a piece scored ``outline_below`` may cost, ``(1 - outline_below) * 200`` tokens.

    So the best piece is always whole, and the less sure the ranker is, the shorter a piece must be
    to be given whole: at 0.8 (the default), a piece whose outline saves at most 200 tokens; at
    0.9, 400; at 0.6, 100. Against a fixed score cut, short pieces the ranker is unsure of come
    whole (their outline saves little) and long ones it is fairly sure of come as outlines
    (``bench/retrieval_quality.py``, seed 11: whole-text recall 0.940 / 0.850 against 0.935 / 0.850
    at 445 / 490 tokens against 473 / 575, Python / JS). ``outline_below`` 0: never for doubt
    (only what no longer fits is outlined); 1: every piece but the best.
    """
    if outline_below <= 0:
        return False
    doubt = max(0.0, 1.0 - score)
    return doubt * (whole_tokens - outline_tokens) > (1.0 - outline_below) * _OUTLINE_SAVING_TOKENS + 1e-9


def fit_budget(
    pieces: Sequence[FusedPiece], budget: int, counter: TokenCounter, *, outline_below: float = 0.0
) -> tuple[list[ContextPiece], list[Rejection], int]:
    """Pieces best first while they fit ``budget`` tokens; the cuts; the tokens used.

    A piece is given whole, or as its outline (:mod:`daemon.retrieval.outline`) when
    ``outline_wanted`` says so for ``outline_below`` or its whole text no longer fits; a piece is
    never cut mid-way. What fits in neither form is a recorded cut.
    """
    kept: list[ContextPiece] = []
    cuts: list[Rejection] = []
    used = 0
    for piece in pieces:
        whole = counter.count(render_piece(piece.text, piece.attribution))
        outline = outline_text(piece.text, piece.attribution, piece.chunks)
        tokens = counter.count(render_piece(outline, piece.attribution)) if outline is not None else None
        sure = tokens is None or not outline_wanted(piece.score, whole, tokens, outline_below)
        if sure and used + whole <= budget:
            kept.append(piece.to_piece(whole))
            used += whole
            continue
        if outline is not None and tokens is not None and used + tokens <= budget:
            kept.append(piece.to_piece(tokens, outline=outline))
            used += tokens
            continue
        smallest = tokens if tokens is not None else whole
        cuts.append(_reject(piece, "budget", f"{smallest} tokens do not fit the {budget - used} left of {budget}"))
    return kept, cuts, used
