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

from daemon.core.models import SearchHit, SearchResult
from daemon.retrieval.lexical import overlap, terms

__all__ = ["FOCUS_PRIOR", "focus_view"]

FOCUS_PRIOR = 10
"""The rank constant of a task hit's weight (see the module docstring)."""


def _words(hit: SearchHit) -> str:
    chunk = hit.chunk
    return f"{chunk.path} {chunk.qualified_name or ''} {chunk.text}"


def focus_view(result: SearchResult, focus: str, *, k: int) -> SearchResult:
    """The best ``k`` of ``result``'s hits for ``focus`` (see the module docstring); ``query`` says which view."""
    wanted = terms(focus)
    hits = result.hits
    if wanted:
        weights = [(1 + overlap(wanted, _words(hit))) / (FOCUS_PRIOR + rank) for rank, hit in enumerate(hits, start=1)]
        order = sorted(range(len(hits)), key=lambda i: weights[i], reverse=True)  # stable: ties keep the task's order
        hits = tuple(hits[i] for i in order)
    return result.model_copy(update={"query": f"{focus} | {result.query}", "hits": hits[:k]})
