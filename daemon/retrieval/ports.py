"""Ports of the retrieval layer: what it needs from the index, the language servers, the run history and a model.

The workflow's retrieval strategy arrives unchanged from the orchestrator (the TART hand-off); this
layer sits below orchestration, so it reads that object through the structural ``StrategyLike``
protocols instead of importing the workflow schema.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from daemon.core.models import SearchFilters, SearchMode, SearchResult

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from daemon.core.models import Chunk

__all__ = [
    "BlockingIndexSearch",
    "ChunkVectors",
    "CodeFact",
    "CodeFacts",
    "DecisionHistory",
    "DecisionNote",
    "FocusedSearch",
    "IndexSearch",
    "KnownPaths",
    "QueryModel",
    "RagSourceLike",
    "RagStrategyLike",
    "StrategyLike",
    "SyncSearchable",
]


class RagSourceLike(Protocol):
    """One rag source of a workflow (``workflow_schema.RagSource``)."""

    @property
    def name(self) -> str: ...

    @property
    def priority(self) -> int: ...

    @property
    def kind(self) -> str | None: ...

    @property
    def paths(self) -> Sequence[str]: ...

    @property
    def trigger_stages(self) -> Sequence[str]: ...


class RagStrategyLike(Protocol):
    @property
    def enabled(self) -> bool: ...

    @property
    def sources(self) -> Sequence[RagSourceLike]: ...


class StrategyLike(Protocol):
    """A workflow's ``retrieval_strategy_config`` (``workflow_schema.RetrievalStrategyConfig``)."""

    @property
    def ast_parsing(self) -> bool: ...

    @property
    def lsp_integration(self) -> bool: ...

    @property
    def rag_strategy(self) -> RagStrategyLike: ...


class IndexSearch(Protocol):
    """Hybrid search over the workspace index, awaitable."""

    async def search(self, query: str, *, k: int, filters: SearchFilters | None) -> SearchResult: ...


class KnownPaths(Protocol):
    """The files the index knows, asked by glob (``indexed_paths.IndexedPaths``): a glob no indexed
    file matches is not searched."""

    def may_match(self, glob: str) -> bool: ...


@runtime_checkable
class FocusedSearch(Protocol):
    """An index port that answers a stage's focus hint itself (upfront's ``SharedSearches``)."""

    async def focused(
        self, query: str, *, refines: str, focus: str, k: int, filters: SearchFilters | None
    ) -> SearchResult: ...


class SyncSearchable(Protocol):
    """A blocking index searched as ``BlockingIndexSearch`` searches it (``WorkspaceIndex`` is one)."""

    def search(self, query: str, *, k: int, filters: SearchFilters | None, mode: SearchMode) -> SearchResult: ...


class BlockingIndexSearch:
    """``IndexSearch`` over a blocking index: at most ``parallel`` queries at a time, each off the event
    loop in a thread (the index's searches only read; the MCP tools search it concurrently too)."""

    def __init__(self, index: SyncSearchable, *, mode: SearchMode = SearchMode.HYBRID, parallel: int = 1) -> None:
        self._index = index
        self._mode = mode
        self._parallel = parallel
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    async def search(self, query: str, *, k: int, filters: SearchFilters | None) -> SearchResult:
        # an asyncio.Semaphore belongs to one event loop: one per loop, so the agent can serve any of them
        slots = self._slots.setdefault(asyncio.get_running_loop(), asyncio.Semaphore(self._parallel))
        async with slots:
            return await asyncio.to_thread(self._index.search, query, k=k, filters=filters, mode=self._mode)


class ChunkVectors(Protocol):
    """Dense vectors of chunks, keyed by ``Chunk.chunk_hash`` (blocking; missing ones are left out)."""

    def vectors(self, chunks: Sequence[Chunk]) -> dict[str, list[float]]: ...

    def text_vectors(self, texts: Sequence[str]) -> list[list[float]] | None:
        """The same model's vectors of free texts (queries, facts), in order; None when no model is loaded."""
        ...


@dataclass(frozen=True, kw_only=True)
class CodeFact:
    """One language-server fact about a symbol."""

    kind: str
    """definition, reference or signature."""
    symbol: str
    path: str | None
    start_line: int | None
    end_line: int | None
    text: str
    verbatim: bool = False
    """True when ``text`` is the file's own text at ``path``:``start_line``-``end_line``."""


class CodeFacts(Protocol):
    """Definitions, references and signatures of a named symbol (the code-intel layer)."""

    async def facts(self, symbol: str, *, max_references: int) -> list[CodeFact]: ...


@dataclass(frozen=True, kw_only=True)
class DecisionNote:
    """One entry of a past run's decision log."""

    run_id: str
    at: str
    kind: str
    summary: str


class DecisionHistory(Protocol):
    """Past runs' decision logs, newest first."""

    async def recent(self, limit: int) -> list[DecisionNote]: ...


class QueryModel(Protocol):
    """A chat model as the pipeline calls it (``resilience.ChatCaller``): messages in, text out."""

    @property
    def label(self) -> str: ...

    async def complete(self, messages: Sequence[BaseMessage]) -> str: ...
