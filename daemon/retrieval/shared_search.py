"""One index search per distinct question, shared by the stages of an upfront retrieval.

The stages of a plan ask many of the same questions: the task itself, the identifiers it names,
the decision documents about it, each under the same filters. ``SharedSearches`` wraps the index
port for one upfront retrieval: the first caller of a ``(query, filters)`` starts the search,
every other caller (another stage, running concurrently) awaits the same answer, cut to the ``k``
it asked. A failed search is shared too (each caller sees the error). It lives for one upfront
call, so nothing stale is ever served.

With a ``pool`` (``retrieval.focus_pool``), every search asks the index for at least ``pool``
hits (the index ranks the same candidates for any ``k`` up to its first-pass depth, so a deeper
answer costs the same and its head is the shallow answer), and a stage's focus hint is answered
from the hits of the query it refines (``focused``: ``focus.focus_view``), with no search of its
own. Without one, ``focused`` searches the hint's own query text, as any other query.
"""

from __future__ import annotations

import asyncio

from daemon.core.models import SearchFilters, SearchResult
from daemon.retrieval.focus import focus_view, hit_terms
from daemon.retrieval.ports import IndexSearch

__all__ = ["SharedSearches"]


class SharedSearches:
    """``IndexSearch`` over ``index`` that runs each distinct search once (see the module docstring)."""

    def __init__(self, index: IndexSearch, *, pool: int = 0) -> None:
        self._index = index
        self._pool = pool
        self._answers: dict[tuple[str, str], tuple[int, asyncio.Task[SearchResult]]] = {}
        self._words: dict[tuple[str, int, str], tuple[frozenset[str], ...]] = {}
        """Each deep answer's ``focus.hit_terms``, made once for all the hints that view it."""
        self.asked = 0
        """Searches asked for, shared ones and focus views included."""
        self.ran = 0
        """Index searches run."""
        self.views = 0
        """Focus hints answered from another query's hits (no search)."""

    async def search(self, query: str, *, k: int, filters: SearchFilters | None) -> SearchResult:
        self.asked += 1
        return await self._search(query, k=k, filters=filters)

    async def focused(
        self, query: str, *, refines: str, focus: str, k: int, filters: SearchFilters | None
    ) -> SearchResult:
        """``query``'s answer: with a pool, ``refines``'s hits re-ranked by ``focus``; without, a search."""
        self.asked += 1
        if self._pool <= 0:
            return await self._search(query, k=k, filters=filters)
        self.views += 1
        depth = max(k, self._pool)
        wide = await self._search(refines, k=depth, filters=filters)
        key = (refines, depth, filters.model_dump_json() if filters is not None else "")
        words = self._words.get(key)
        if words is None or len(words) != len(wide.hits):
            words = self._words[key] = hit_terms(wide)
        return focus_view(wide, focus, k=k, words=words)

    async def _search(self, query: str, *, k: int, filters: SearchFilters | None) -> SearchResult:
        key = (query, filters.model_dump_json() if filters is not None else "")
        held = self._answers.get(key)
        if held is None or held[0] < k:
            depth = max(k, self._pool)
            task = asyncio.ensure_future(self._index.search(query, k=depth, filters=filters))
            task.add_done_callback(_seen)  # every caller may have gone (the deadline): no "never retrieved"
            held = (depth, task)
            self._answers[key] = held
            self.ran += 1
        result = await asyncio.shield(held[1])
        return result if len(result.hits) <= k else result.model_copy(update={"hits": result.hits[:k]})


def _seen(task: asyncio.Task[SearchResult]) -> None:
    if not task.cancelled():
        task.exception()
