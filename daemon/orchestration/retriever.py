"""The retrieval seam of the pipeline: the ``Retriever`` port and the enrichment ``adaptive_retrieval`` performs.

Enrichment after a failed stage runs the retrieval agent (``daemon.retrieval``) in adaptive mode:

1. the failure report itself (the stage's summary and each failing agent's evidence) always goes
   first into the retry target's context;
2. the agent gets the workflow's retrieval strategy unchanged, the retry target's hints and the
   failure (summary plus every failing agent's output); it writes queries (the ``retrieval``
   role's model when one is configured, else deterministically from the failure), runs its
   sources, fuses, validates and fits the rest of the target's ``token_budget``;
3. the agent comes from an ``AgentRetriever`` (``daemon.service.pipeline.retrieval_sources``) when the
   runtime was given one; any other ``Retriever`` (a plain index search) becomes the agent's
   index source, without grounding (no workspace root is known here) and without LSP facts;
4. snippets kept from earlier enrichments follow, as far as the budget allows.

``upfront_context`` is the planning-time counterpart (context for every planned stage); the
runtime can put its answer into the initial ``enriched_context``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from daemon.config import EmbeddingConfig, RetrievalConfig
from daemon.core.frozen_model import FrozenModel
from daemon.core.languages import language_for_path
from daemon.core.models import Chunk, ChunkKind, SearchFilters, SearchHit, SearchMode, SearchResult, SymbolKind
from daemon.core.run_models import ExecutionPlan
from daemon.core.workflow_schema import RagSource
from daemon.orchestration.resilience import ChatCaller
from daemon.orchestration.state import EnrichedSnippet, StageResult
from daemon.retrieval.agent import AgentParts, RetrievalAgent
from daemon.retrieval.fusion import render_piece
from daemon.retrieval.models import (
    ContextPiece,
    FailureContext,
    RetrievalRequest,
    RetrievalResult,
    StageHints,
    WorkflowKind,
)
from daemon.retrieval.tokens import load_token_counter

__all__ = [
    "AgentRetriever",
    "Enrichment",
    "RetrievalQuery",
    "RetrievedSnippet",
    "Retriever",
    "UpfrontContext",
    "enrich",
    "failure_report",
    "fit_budget",
    "stage_hints",
    "upfront_context",
]


@dataclass(frozen=True, kw_only=True)
class RetrievalQuery:
    text: str
    stage_id: str
    source: RagSource | None = None
    focus_on: tuple[str, ...] = ()
    avoid: tuple[str, ...] = ()
    k: int = 6


class RetrievedSnippet(FrozenModel):
    path: str
    start_line: int
    end_line: int
    text: str
    score: float = 0.0


class Retriever(Protocol):
    """Finds workspace context for a query (a plain index search, or an ``AgentRetriever``)."""

    async def retrieve(self, query: RetrievalQuery) -> Sequence[RetrievedSnippet]: ...


class AgentRetriever:
    """The retrieval agent as a ``Retriever``; ``enrich`` and ``upfront_context`` use the agent itself."""

    def __init__(self, agent: RetrievalAgent) -> None:
        self.agent = agent

    async def retrieve(self, query: RetrievalQuery) -> list[RetrievedSnippet]:
        """One stage's context for ``query.text`` as snippets (code workflow, default strategy)."""
        from daemon.core.workflow_schema import RetrievalStrategyConfig

        stage = StageHints(stage_id=query.stage_id, focus_on=query.focus_on, avoid=query.avoid)
        request = RetrievalRequest(task=query.text, workflow_kind=WorkflowKind.CODE, stage=stage)
        result = await self.agent.retrieve(request, RetrievalStrategyConfig())
        return [
            RetrievedSnippet(
                path=p.attribution.path,
                start_line=p.attribution.start_line or 1,
                end_line=p.attribution.end_line or p.attribution.start_line or 1,
                text=p.text,
                score=p.score,
            )
            for p in result.context
            if p.attribution.path is not None
        ][: query.k]


class _RetrieverSearch:
    """A plain ``Retriever`` as the agent's index port (chunks rebuilt from its snippets)."""

    def __init__(self, retriever: Retriever, stage_id: str) -> None:
        self._retriever = retriever
        self._stage_id = stage_id

    async def search(self, query: str, *, k: int, filters: SearchFilters | None) -> SearchResult:
        kind = filters.kind if filters is not None else None
        glob = filters.path_glob if filters is not None else None
        source = RagSource(
            name=kind.value if kind else "workspace", kind=kind.value if kind else None, paths=(glob,) if glob else ()
        )
        found = await self._retriever.retrieve(RetrievalQuery(text=query, stage_id=self._stage_id, source=source, k=k))
        hits: list[SearchHit] = []
        for snippet in found:
            language = language_for_path(snippet.path) or "text"
            chunk_kind = kind or (ChunkKind.DOCS if language in ("markdown", "rst", "text") else ChunkKind.CODE)
            chunk = Chunk(
                path=snippet.path,
                kind=chunk_kind,
                symbol_kind=SymbolKind.WINDOW,
                language=language,
                text=snippet.text,
                start_line=snippet.start_line,
                end_line=max(snippet.start_line, snippet.end_line),
            )
            hits.append(SearchHit(id=f"{snippet.path}:{snippet.start_line}", score=snippet.score, chunk=chunk))
        return SearchResult(query=query, hits=tuple(hits), mode=SearchMode.HYBRID, embedded_fraction=0.0)


@dataclass(frozen=True, kw_only=True)
class Enrichment:
    snippets: tuple[EnrichedSnippet, ...]
    queries: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())
    result: RetrievalResult | None = None


def failure_report(result: StageResult) -> EnrichedSnippet:
    lines = [f"{result.stage_id} attempt {result.attempt} failed: {result.summary}"]
    for agent in result.agents:
        if agent.failed:
            lines.append(f"- {agent.agent_id}: {agent.summary}" + (f" ({agent.error})" if agent.error else ""))
            lines.extend(f"  evidence: {e}" for e in agent.evidence[:5])
    return EnrichedSnippet(source="failure", text="\n".join(lines))


def fit_budget(snippets: Sequence[EnrichedSnippet], token_budget: int) -> list[EnrichedSnippet]:
    """Keep snippets in order until ``token_budget`` (approximate tokens) is spent; the last one is cut to fit."""
    kept: list[EnrichedSnippet] = []
    left = token_budget
    for snippet in snippets:
        if left <= 0:
            break
        if snippet.tokens <= left:
            kept.append(snippet)
            left -= snippet.tokens
        else:
            kept.append(
                snippet.model_copy(update={"text": snippet.text[: left * 4] + "\n[... cut to the token budget]"})
            )
            left = 0
    return kept


def _agent_for(retriever: Retriever, query_writer: ChatCaller | None, stage_id: str) -> RetrievalAgent:
    if isinstance(retriever, AgentRetriever):
        return retriever.agent
    parts = AgentParts(
        counter=load_token_counter(EmbeddingConfig()), index=_RetrieverSearch(retriever, stage_id), model=query_writer
    )
    return RetrievalAgent(RetrievalConfig(), parts)


def stage_hints(plan: ExecutionPlan, stage_id: str, budget: int | None = None) -> StageHints:
    """The retrieval agent's hints for one planned stage (focus, avoid, token budget; ``budget`` overrides it)."""
    stage = plan.stage(stage_id)
    hint = stage.retrieval_hint
    return StageHints(
        stage_id=stage_id,
        focus_on=hint.focus_on,
        avoid=hint.avoid,
        token_budget=stage.token_budget if budget is None else budget,
    )


def _snippet(piece: ContextPiece) -> EnrichedSnippet:
    a = piece.attribution
    return EnrichedSnippet(
        source=piece.source.value,
        text=render_piece(piece.text, a),
        path=a.path,
        start_line=a.start_line,
        end_line=a.end_line,
        score=piece.score,
        query=piece.queries[0] if piece.queries else None,
    )


def _notes(result: RetrievalResult) -> list[str]:
    notes = [f"{s.source.value} {s.state.value}: {s.reason}" for s in result.sources if s.state.value == "unavailable"]
    notes.extend(f"rejected {r.cite} at {r.step}: {r.reason}" for r in result.rejections if r.step != "merge")
    notes.extend(f"flag: {f}" for f in result.flags)
    return notes


async def enrich(
    plan: ExecutionPlan,
    *,
    failed: StageResult,
    target: str,
    retriever: Retriever | None,
    query_writer: ChatCaller | None,
    previous: Sequence[EnrichedSnippet] = (),
) -> Enrichment:
    """New context for ``target`` after ``failed``; ``previous`` snippets are kept behind the new ones."""
    report = failure_report(failed)
    budget = plan.stage(target).token_budget
    if retriever is None:
        snippets = fit_budget([report, *previous], budget)
        return Enrichment(
            snippets=tuple(snippets), queries=(), notes=("no retriever: only the failure report is added",)
        )
    agent = _agent_for(retriever, query_writer, target)
    counter = agent.parts.counter
    output = "\n".join(
        line for a in failed.agents if a.failed for line in (a.summary, a.error or "", *a.evidence) if line
    )
    failure = FailureContext(stage_id=failed.stage_id, summary=failed.summary, output=output)
    left = max(0, budget - counter.count(report.text))
    result = await agent.adaptive(
        plan.request,
        WorkflowKind.from_workflow_type(plan.workflow_type.value),
        plan.retrieval_strategy,
        stage_hints(plan, target, left),
        failure,
    )
    snippets = [report, *(_snippet(p) for p in result.context)]
    left -= result.tokens
    notes: list[str] = []
    if not isinstance(retriever, AgentRetriever):
        notes.append("plain retriever: the agent ran without grounding (no workspace root) and without LSP facts")
    kept_paths = {(s.path, s.start_line) for s in snippets}
    for old in previous:
        if old.path is not None and (old.path, old.start_line) in kept_paths:
            continue
        tokens = counter.count(old.text)
        if tokens <= left:
            snippets.append(old)
            left -= tokens
    notes.extend(_notes(result))
    return Enrichment(
        snippets=tuple(snippets), queries=tuple(q.text for q in result.queries), notes=tuple(notes), result=result
    )


@dataclass(frozen=True, kw_only=True)
class UpfrontContext:
    """What ``upfront_context`` found: each stage's snippets, and where its time went."""

    snippets: dict[str, list[EnrichedSnippet]]
    seconds: float = 0.0
    """Wall time of the whole upfront retrieval (the stages run concurrently)."""
    sources: dict[str, float] = field(default_factory=dict[str, float])
    """Per source, its longest wall time in any stage (the stages' sources run concurrently)."""


async def upfront_context(plan: ExecutionPlan, retriever: Retriever | None) -> UpfrontContext:
    """Planning-time context for every planned stage (upfront mode); empty without an ``AgentRetriever``."""
    if not isinstance(retriever, AgentRetriever):
        return UpfrontContext(snippets={})
    stages = [stage_hints(plan, s.stage_id) for s in plan.stages]
    started = time.perf_counter()
    results = await retriever.agent.upfront(
        plan.request, WorkflowKind.from_workflow_type(plan.workflow_type.value), plan.retrieval_strategy, stages
    )
    sources: dict[str, float] = {}
    for result in results.values():
        for status in result.sources:
            if status.seconds:
                sources[status.source.value] = max(sources.get(status.source.value, 0.0), status.seconds)
    return UpfrontContext(
        snippets={stage_id: [_snippet(p) for p in result.context] for stage_id, result in results.items()},
        seconds=round(time.perf_counter() - started, 4),
        sources=sources,
    )
