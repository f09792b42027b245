"""A stage's focus hint as a view of the task's hits, not a search of its own.

Each planned stage asks the index for its ``focus_on`` hints, each prefixed to the task
("existing patterns <task>", "secrets <task>"). In an upfront retrieval those are most of the
index searches (20 of 26 for the specification's 4-stage feature workflow), and their answers are
mostly the task's own hits in another order. ``focus_view`` gives the same kind of answer without
the index: the task's hits, searched once and deeper (``retrieval.focus_pool``), re-ranked by the
hint's words. A hit's weight is its place in the task's answer, ``1 / (FOCUS_PRIOR + rank)``,
times ``1 + `` the share of the hint's words in its path, name and text: a hit carrying the whole
hint can pass those up to about ``FOCUS_PRIOR`` places above it; a hint whose words no hit
carries leaves the task's order as it was.
"""

from __future__ import annotations

from collections.abc import Sequence

from daemon.core.models import SearchResult
from daemon.retrieval.lexical import terms

__all__ = ["FOCUS_PRIOR", "focus_view", "hit_terms"]

FOCUS_PRIOR = 10
"""The rank constant of a task hit's weight (see the module docstring)."""


def hit_terms(result: SearchResult) -> tuple[frozenset[str], ...]:
    """The words of each hit's path, name and text (``lexical.terms``), in hit order: made once per answer,
    they serve every hint's view of it."""
    return tuple(terms(f"{h.chunk.path} {h.chunk.qualified_name or ''} {h.chunk.text}") for h in result.hits)


def focus_view(
    result: SearchResult, focus: str, *, k: int, words: Sequence[frozenset[str]] | None = None
) -> SearchResult:
    """The best ``k`` of ``result``'s hits for ``focus`` (see the module docstring); ``words``: ``hit_terms(result)``
    when the caller holds them; the answer's ``query`` says which view it is."""
    wanted = terms(focus)
    hits = result.hits
    if wanted:
        words = hit_terms(result) if words is None else words
        weights = [
            (1 + len(wanted & have) / len(wanted)) / (FOCUS_PRIOR + rank) for rank, have in enumerate(words, start=1)
        ]
        order = sorted(range(len(hits)), key=lambda i: weights[i], reverse=True)  # stable: ties keep the task's order
        hits = tuple(hits[i] for i in order)
    return result.model_copy(update={"query": f"{focus} | {result.query}", "hits": hits[:k]})
