"""The retrieval port of the pipeline, and the enrichment the ``adaptive_retrieval`` node performs.

The runtime receives a ``Retriever`` by injection (the CLI passes an adapter over the workspace
index's hybrid search; issue #8's retrieval agent replaces it). Enrichment after a failed stage:

1. the failure report itself (the stage's summary and each failing agent's evidence) always goes
   into the retry target's context;
2. queries: written by the ``retrieval`` role's model when one is configured (up to three, as JSON),
   else one query from the stage's ``focus_on`` hints and the failure summary;
3. each query runs against every rag source of the workflow (by priority) when ``rag_strategy`` is
   enabled and a retriever is present; hits are de-duplicated by location;
4. snippets are kept, newest first, until the retry target's ``token_budget`` is spent (about four
   characters per token; the last snippet is cut to fit).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field

from daemon.errors import PipelineError
from daemon.orchestration.plan import ExecutionPlan
from daemon.orchestration.resilience import ChatCaller
from daemon.orchestration.state import EnrichedSnippet, StageResult
from daemon.orchestration.structured_output import AnswerInvalid, json_instructions, parse_answer
from daemon.orchestration.workflow_schema import RagSource

__all__ = ["Enrichment", "RetrievalQuery", "RetrievedSnippet", "Retriever", "enrich", "fit_budget"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class RetrievalQuery:
    text: str
    stage_id: str
    source: RagSource | None = None
    focus_on: tuple[str, ...] = ()
    avoid: tuple[str, ...] = ()
    k: int = 6


class RetrievedSnippet(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    start_line: int
    end_line: int
    text: str
    score: float = 0.0


class Retriever(Protocol):
    """Finds workspace context for a query (the workspace index today, the retrieval agent later)."""

    async def retrieve(self, query: RetrievalQuery) -> Sequence[RetrievedSnippet]: ...


class _Queries(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    queries: list[str] = Field(min_length=1, max_length=3, description="Search queries over the workspace.")


@dataclass(frozen=True, kw_only=True)
class Enrichment:
    snippets: tuple[EnrichedSnippet, ...]
    queries: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())


def failure_report(result: StageResult) -> EnrichedSnippet:
    lines = [f"{result.stage_id} attempt {result.attempt} failed: {result.summary}"]
    for agent in result.agents:
        if agent.failed:
            lines.append(f"- {agent.agent_id}: {agent.summary}" + (f" ({agent.error})" if agent.error else ""))
            lines.extend(f"  evidence: {e}" for e in agent.evidence[:5])
    return EnrichedSnippet(source="failure", text="\n".join(lines))


def fit_budget(snippets: Sequence[EnrichedSnippet], token_budget: int) -> list[EnrichedSnippet]:
    """Keep snippets in order until ``token_budget`` (approximate tokens) is spent."""
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


def _default_query(plan: ExecutionPlan, failed: StageResult, target: str) -> str:
    hint = plan.stage(target).retrieval_hint
    words = " ".join([*hint.focus_on[:2], failed.summary])
    return words[:400]


async def _write_queries(model: ChatCaller, plan: ExecutionPlan, failed: StageResult, target: str) -> list[str]:
    stage = plan.stage(target)
    messages = [
        SystemMessage(content="You write search queries over a code/document workspace index. Be specific."),
        HumanMessage(
            content=f"Request: {plan.request}\nThe stage '{failed.stage_id}' failed:\n{failure_report(failed).text}\n"
            f"The stage '{target}' will be retried. {stage.task_context}\n"
            f"Write up to three search queries that find what it needs.\n{json_instructions(_Queries)}"
        ),
    ]
    text = await model.complete(messages)
    return [q.strip() for q in parse_answer(text, _Queries).queries if q.strip()]


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
    notes: list[str] = []
    queries: list[str] = []
    if query_writer is not None:
        try:
            queries = await _write_queries(query_writer, plan, failed, target)
        except (PipelineError, AnswerInvalid) as exc:
            notes.append(f"query writer failed, default query used: {exc}")
    if not queries:
        queries = [_default_query(plan, failed, target)]
    strategy = plan.retrieval_strategy
    retrieved: list[EnrichedSnippet] = []
    if retriever is None:
        notes.append("no retriever: only the failure report is added")
    elif not strategy.rag_strategy.enabled:
        notes.append("rag_strategy disabled: only the failure report is added")
    else:
        hint = plan.stage(target).retrieval_hint
        ordered = sorted(strategy.rag_strategy.sources, key=lambda s: s.priority)
        sources: list[RagSource | None] = [*ordered] if ordered else [None]
        seen: set[tuple[str, int]] = set()
        for text in queries:
            for source in sources:
                query = RetrievalQuery(
                    text=text, stage_id=target, source=source, focus_on=hint.focus_on, avoid=hint.avoid
                )
                for hit in await retriever.retrieve(query):
                    if (hit.path, hit.start_line) in seen:
                        continue
                    seen.add((hit.path, hit.start_line))
                    retrieved.append(
                        EnrichedSnippet(
                            source=source.name if source is not None else "workspace",
                            text=hit.text,
                            path=hit.path,
                            start_line=hit.start_line,
                            end_line=hit.end_line,
                            score=hit.score,
                            query=text,
                        )
                    )
    budget = plan.stage(target).token_budget
    snippets = fit_budget([failure_report(failed), *retrieved, *previous], budget)
    return Enrichment(snippets=tuple(snippets), queries=tuple(queries), notes=tuple(notes))
