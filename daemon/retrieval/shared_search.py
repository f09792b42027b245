"""One index search per distinct question, shared by the stages of an upfront retrieval.

The stages of a plan ask many of the same questions: the task itself, the identifiers it names,
the decision documents about it, each under the same filters. ``SharedSearches`` wraps the index
port for one upfront retrieval: the first caller of a ``(query, k, filters)`` starts the search,
every other caller (another stage, running concurrently) awaits the same answer. A failed search
is shared too (each caller sees the error). It lives for one upfront call, so nothing stale is
ever served.
"""

from __future__ import annotations

import asyncio

from daemon.core.models import SearchFilters, SearchResult
from daemon.retrieval.ports import IndexSearch

__all__ = ["SharedSearches"]


class SharedSearches:
    """``IndexSearch`` over ``index`` that runs each distinct search once (see the module docstring)."""

    def __init__(self, index: IndexSearch) -> None:
        self._index = index
        self._answers: dict[tuple[str, int, str], asyncio.Task[SearchResult]] = {}
        self.asked = 0
        """Searches asked for, shared ones included."""

    @property
    def ran(self) -> int:
        """Distinct searches run."""
        return len(self._answers)

    async def search(self, query: str, *, k: int, filters: SearchFilters | None) -> SearchResult:
        self.asked += 1
        key = (query, k, filters.model_dump_json() if filters is not None else "")
        task = self._answers.get(key)
        if task is None:
            task = asyncio.ensure_future(self._index.search(query, k=k, filters=filters))
            task.add_done_callback(_seen)  # every caller may have gone (the deadline): no "never retrieved"
            self._answers[key] = task
        return await asyncio.shield(task)


def _seen(task: asyncio.Task[SearchResult]) -> None:
    if not task.cancelled():
        task.exception()
