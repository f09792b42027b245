"""Validation: only grounded, consistent, relevant context reaches a stage (and its retry).

- **Grounding**: every piece that quotes a workspace file is checked against the file's current
  text at its cited lines (re-read, never trusted from the index): each non-blank line of the
  piece must appear, in order, in those lines. A stale piece is re-fetched (the file re-chunked,
  the same symbol or section taken at its new lines) or, when that symbol is gone, dropped.
- **Consistency**: never two versions of the same code: of two pieces that cite overlapping lines
  of one file, or the same symbol of one file, only the better one stays. A document sentence
  that contradicts a sentence of a recorded decision (same subject, opposite polarity: one says
  not/never/no longer/deprecated/instead) is flagged (kept, with the flag in the result).
- **Relevance**, two tests. An absolute floor: a searched piece (code, docs, decisions, web) whose
  cosine to every query that found it is under ``retrieval.min_similarity`` (0.2) is unrelated,
  however the others score (exact look-ups, language-server facts and advisories, are exempt;
  without an embedding model there is no similarity and no floor). Then the workflow's threshold on
  the normalized score (the fused score over the best piece's, see ``fusion``; advisories, facts
  about the workspace's dependencies or an id the task names, are exempt from it too):
  ``retrieval.code_threshold`` 0.7 for code workflows, ``retrieval.docs_threshold`` 0.6 for
  document workflows, the lower of the two otherwise. Because the fused score is led by the
  similarity, that ratio is an adaptive cut: one piece when the best stands out, several when
  they are close.

Every drop is a ``Rejection`` with its reason; the agent puts them in the decision log.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from daemon.core.languages import language_for_path
from daemon.intel.chunking import chunk_source
from daemon.retrieval.file_snapshot import FileSnapshot
from daemon.retrieval.fusion import FusedPiece
from daemon.retrieval.lexical import terms
from daemon.retrieval.models import Rejection, SourceName, WorkflowKind

__all__ = ["ValidationOutcome", "Validator", "grounded"]


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_NEGATION = re.compile(r"\b(not|never|no longer|deprecated|instead of|rejected|superseded|don't|do not|avoid)\b", re.I)
_PART_HEADER = re.compile(r"\(part \d+/\d+\)\s*$")
_LOOKUPS = frozenset({SourceName.LSP, SourceName.ADVISORIES})
"""Exact look-ups (a named symbol, an advisory id): no similarity floor applies to them."""
_FACTS = frozenset({SourceName.ADVISORIES})
"""Advisories (of an id the task names, or affecting the workspace's own locked dependencies) are facts
about the workspace, not search hits: the score threshold does not cut them."""


def grounded(text: str, file_lines: Sequence[str]) -> bool:
    """Every non-blank line of ``text`` appears, in order, among ``file_lines`` (whitespace-trimmed)."""
    wanted = [line.strip() for line in text.splitlines() if line.strip() and not _PART_HEADER.search(line)]
    have = iter(line.strip() for line in file_lines)
    return all(any(line == got for got in have) for line in wanted)


def _first(lines: Sequence[str]) -> str | None:
    return lines[0].strip() if lines else None


def _matches(piece: FusedPiece, window: Sequence[str]) -> bool:
    """A verbatim piece equals the window line for line; any other starts on its first line and is in it."""
    if piece.verbatim:
        return [line.rstrip() for line in piece.text.splitlines()] == [line.rstrip() for line in window]
    return _first(piece.text.splitlines()) == _first(window) and grounded(piece.text, window)


@dataclass(frozen=True, kw_only=True)
class ValidationOutcome:
    passed: list[FusedPiece]
    rejected: list[Rejection]
    flags: list[str]
    refetched: list[str]


class Validator:
    """Validates pieces against the workspace under ``root`` (blocking file reads: run it in a thread)."""

    def __init__(
        self,
        root: Path | None,
        *,
        workflow: WorkflowKind,
        code_threshold: float,
        docs_threshold: float,
        min_similarity: float | None = None,
        files: FileSnapshot | None = None,
    ) -> None:
        """``files``: the retrieval's snapshot of the workspace files (a new one over ``root`` when None)."""
        self._files = files if files is not None else FileSnapshot(root) if root is not None else None
        self._floor = min_similarity
        self._threshold = {
            WorkflowKind.CODE: code_threshold,
            WorkflowKind.DOCUMENT: docs_threshold,
        }.get(workflow, min(code_threshold, docs_threshold))

    @property
    def threshold(self) -> float:
        return self._threshold

    def validate(self, pieces: Sequence[FusedPiece]) -> ValidationOutcome:
        rejected: list[Rejection] = []
        refetched: list[str] = []
        grounded_pieces: list[FusedPiece] = []
        for piece in pieces:
            checked, reason = self._ground(piece)
            if checked is None:
                rejected.append(_reject(piece, "grounding", reason or "not grounded"))
                continue
            if checked is not piece:
                refetched.append(f"{piece.attribution.cite()} -> {checked.attribution.cite()}")
            grounded_pieces.append(checked)
        consistent = self._one_version(grounded_pieces, rejected)
        flags = _contradictions(consistent)
        passed: list[FusedPiece] = []
        for piece in consistent:
            floor = self._floor
            if (
                floor is not None
                and piece.similarity is not None
                and piece.head.source not in _LOOKUPS
                and piece.similarity < floor
            ):
                rejected.append(
                    _reject(
                        piece,
                        "relevance",
                        f"similarity {piece.similarity:.2f} to the queries is under the similarity floor {floor:g}",
                    )
                )
            elif piece.head.source not in _FACTS and piece.score + 1e-9 < self._threshold:
                rejected.append(
                    _reject(piece, "relevance", f"score {piece.score:.2f} is under the threshold {self._threshold:g}")
                )
            else:
                passed.append(piece)
        return ValidationOutcome(passed=passed, rejected=rejected, flags=flags, refetched=refetched)

    # -- grounding ------------------------------------------------------------------------------

    def _ground(self, piece: FusedPiece) -> tuple[FusedPiece | None, str | None]:
        a = piece.attribution
        if not piece.head.grounded_text or a.path is None or a.start_line is None or a.end_line is None:
            return piece, None
        if self._files is None:
            return piece, None
        taken = self._files.get(a.path)
        if taken.real is None:
            return None, f"{a.path} is outside the workspace"
        if taken.secret is not None:
            return None, f"{a.path} holds credentials"
        if taken.data is None:
            exc = taken.error
            return None, f"{a.path} cannot be read now: {(exc.strerror or exc) if exc is not None else 'no data'}"
        lines = taken.data.decode("utf-8", errors="replace").splitlines()
        if _matches(piece, lines[a.start_line - 1 : a.end_line]):
            return piece, None
        fresh = self._refetch(piece, "\n".join(lines))
        if fresh is None:
            return None, f"{a.path}:{a.start_line}-{a.end_line} changed since indexing and the symbol is gone"
        return fresh, None

    def _refetch(self, piece: FusedPiece, current: str) -> FusedPiece | None:
        """The piece's symbols (or section) at their current lines, or None when one is gone."""
        a = piece.attribution
        want = a.symbol or a.section_path
        language = language_for_path(a.path or "")
        if want is None or language is None:
            return None
        names = want.split(" + ")
        path = a.path or ""
        if self._files is not None:  # the file's chunks, made once per file (and kept while it is unchanged)
            chunks = self._files.derived(
                path, f"chunks {language}", lambda _: chunk_source(path, current.encode(), language)
            )
        else:
            chunks = chunk_source(path, current.encode("utf-8"), language)
        spans = {
            c.qualified_name: (c.start_line, c.end_line, c.text)
            for c in chunks
            if c.qualified_name in names and c.part == 1
        }
        if len(spans) != len(names):
            return None
        if len(names) == 1:
            start, end, text = spans[names[0]]
        else:
            start = min(s for s, _, _ in spans.values())
            end = max(e for _, e, _ in spans.values())
            text = "\n".join(current.splitlines()[start - 1 : end])
        return replace(piece, text=text, attribution=a.model_copy(update={"start_line": start, "end_line": end}))

    # -- consistency ----------------------------------------------------------------------------

    def _one_version(self, pieces: Sequence[FusedPiece], rejected: list[Rejection]) -> list[FusedPiece]:
        kept: list[FusedPiece] = []
        for piece in sorted(pieces, key=lambda p: p.score, reverse=True):
            clash = next((k for k in kept if _same_code(k, piece)), None)
            if clash is None:
                kept.append(piece)
            else:
                rejected.append(_reject(piece, "consistency", f"another version of {clash.attribution.cite()}"))
        return kept


def _same_code(a: FusedPiece, b: FusedPiece) -> bool:
    pa, pb = a.attribution, b.attribution
    if pa.path is None or pa.path != pb.path or not (a.head.grounded_text or b.head.grounded_text):
        return False
    if pa.symbol and pa.symbol == pb.symbol and a.text != b.text and a.head.grounded_text and b.head.grounded_text:
        return True
    if None in (pa.start_line, pa.end_line, pb.start_line, pb.end_line):
        return False
    if not (a.head.grounded_text and b.head.grounded_text):
        return False
    return (pa.start_line or 0) <= (pb.end_line or 0) and (pb.start_line or 0) <= (pa.end_line or 0)


def _sentences(text: str) -> list[str]:
    return [s.strip(" #*-") for s in _SENTENCE.split(text) if len(s.split()) >= 4]


def _contradictions(pieces: Sequence[FusedPiece]) -> list[str]:
    decisions = [p for p in pieces if p.head.source is SourceName.DECISIONS]
    if not decisions:
        return []
    documents = [
        (doc, [(s, terms(s), bool(_NEGATION.search(s))) for s in _sentences(doc.text)])
        for doc in pieces
        if doc.head.source is SourceName.DOCS
    ]
    flags: list[str] = []
    for decision in decisions:
        for d_sentence in _sentences(decision.text):
            d_terms = terms(d_sentence)
            d_negated = bool(_NEGATION.search(d_sentence))
            for doc, sentences in documents:
                for s, s_terms, s_negated in sentences:
                    shared = len(d_terms & s_terms) / max(1, min(len(d_terms), len(s_terms)))
                    if shared >= 0.6 and s_negated != d_negated:
                        flags.append(
                            f"{doc.attribution.cite()} says '{s[:120]}' but the decision "
                            f"{decision.attribution.cite()} says '{d_sentence[:120]}'"
                        )
    return flags


def _reject(piece: FusedPiece, step: str, reason: str) -> Rejection:
    return Rejection(id=piece.id, cite=piece.attribution.cite(), step=step, reason=reason)
