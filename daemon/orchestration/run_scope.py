"""What a run searches through: its own retriever and search tools, opened for the run and dropped at its end.

A composition root (``daemon.service.pipeline.run_scope``) may give the runtime a ``RunScopeOpener``: for one
run (its id and, for an editing run, its worktree) it opens a ``RunScope`` whose retriever and
code-intel/search tools see the run's tree (the run's changed files laid over the workspace index)
and leave the run's own decision log out. ``RunScopes`` keeps the open scopes of one runtime: the
engine asks it for a run's retriever (upfront and adaptive retrieval), the agents for a run's tools;
``drop`` closes a run's scope when the run ends or is interrupted. Without an opener every run gets
the runtime's retriever and default tools, as before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from langchain_core.tools import BaseTool

from daemon.core.run_models import RunChanges
from daemon.orchestration.retriever import Retriever

__all__ = ["RunScope", "RunScopeOpener", "RunScopes"]

logger = logging.getLogger(__name__)


class RunScope(Protocol):
    """One run's view of the workspace for search."""

    @property
    def retriever(self) -> Retriever | None: ...

    @property
    def tools(self) -> Sequence[BaseTool]:
        """The code-intel and search tools of the run's agents (replacing the runtime's default tools)."""
        ...

    def as_checked_out(self, value: bool) -> None:
        """``True``: the run's tree is as its branch was checked out (a new run before its first agent), so
        searches need not look for changes in it; ``False``: agents may have written, look again."""
        ...

    async def aclose(self) -> None: ...


RunScopeOpener = Callable[[str, RunChanges | None], Awaitable[RunScope]]
"""Opens the scope of run ``run_id`` (``changes``: its branch and worktree; None for a run that does not edit)."""


class RunScopes:
    """The open scopes of one runtime's runs."""

    def __init__(self, opener: RunScopeOpener | None) -> None:
        self._opener = opener
        self._open: dict[str, RunScope] = {}
        self._lock = asyncio.Lock()

    async def get(self, run_id: str, changes: RunChanges | None) -> RunScope | None:
        """The run's scope, opened on first use; None without an opener."""
        if self._opener is None:
            return None
        async with self._lock:
            scope = self._open.get(run_id)
            if scope is None:
                scope = await self._opener(run_id, changes)
                self._open[run_id] = scope
            return scope

    async def drop(self, run_id: str) -> None:
        """Close the run's scope (nothing when none is open)."""
        scope = self._open.pop(run_id, None)
        if scope is not None:
            try:
                await scope.aclose()
            except Exception:  # closing a run's view never fails the run's end
                logger.warning("closing the search scope of run %s failed", run_id, exc_info=True)

    async def aclose(self) -> None:
        for run_id in list(self._open):
            await self.drop(run_id)
