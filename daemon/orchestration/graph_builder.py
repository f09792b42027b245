"""Plan -> LangGraph ``StateGraph``: one node per planned stage, ``adaptive_retrieval``, ``done`` and ``abort``.

Each node decides its own route (``routing``) and writes it to the state (``next_node``) together
with its results, so the decision is checkpointed with them and a resumed run never re-decides a
route it already took; the conditional edges only read ``next_node``. Their path maps list every
node the router may choose under the outcome that leads there (``edge_labels``: success, failure,
retry, limit; the description lives in ``graph_routes``, which the editors' plan graph is drawn from
too), so the compiled graph (``draw_mermaid``) shows the real edges, labelled.

Run dependencies (agents, retriever, reporter, cancellation, the commit of a stage attempt in an
editing run, the user's attachments) arrive as the LangGraph runtime context (``RunContext``);
nothing run-specific is captured when the graph is built, so one compiled graph serves a run and
its resumption. In an editing run each stage attempt that changed files becomes one commit
(``RunContext.commit``) before its result is recorded, so the result names its commit.

A review-feedback follow-up runs through a graph too: ``compile_follow_up_graph`` has the stage the
feedback goes to, then the test stages after it on its success path (``follow_up_stages``; each runs only
when the one before succeeded), with the same stage attempt as the full graph's node, run on the run's own
thread (its checkpoint gains the attempts) with the feedback in ``RunContext.feedback`` for the first; it
decides no route of the run's routing table.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from daemon.core.run_models import (
    ABORT_NODE,
    ADAPTIVE_NODE,
    DONE_NODE,
    DecisionKind,
    ExecutionPlan,
)
from daemon.core.workflow_schema import EVALUATOR_NODE, REFLECTOR_NODE, AgentSpec, StageType
from daemon.errors import DaemonError
from daemon.orchestration.consistency import check_attempt, findings_for
from daemon.orchestration.graph_routes import SCORED, edge_labels, graph_node
from daemon.orchestration.reflection import evaluator_node, reflector_node
from daemon.orchestration.retriever import enrich
from daemon.orchestration.routing import node_for, route_after_enrichment, route_after_stage, route_values
from daemon.orchestration.run_context import RunCancelled, RunContext
from daemon.orchestration.stage_agents import AgentTask, run_stage
from daemon.orchestration.state import ExecutionState, StageResult, to_channel_values

__all__ = [
    "PipelineGraph",
    "RunCancelled",
    "RunContext",
    "build_graph",
    "compile_follow_up_graph",
    "compile_graph",
    "edge_labels",
    "follow_up_stages",
    "graph_mermaid",
]


PipelineGraph = CompiledStateGraph[ExecutionState, "RunContext", ExecutionState, ExecutionState]


class _NodeFn(Protocol):
    async def __call__(self, state: ExecutionState, *, runtime: Runtime[RunContext]) -> dict[str, Any]: ...


@dataclass(frozen=True, kw_only=True)
class _Attempt:
    result: StageResult
    attempts: dict[str, int]
    results: dict[str, list[StageResult]]


async def _stage_attempt(
    plan: ExecutionPlan, stage_id: str, state: ExecutionState, ctx: RunContext, *, reflect: bool = False
) -> _Attempt:
    """One attempt of a stage: its agents run (with the stage's context, earlier attempts, what checking them
    found and any feedback), the attempt is checked against the earlier ones and its changes are committed; the
    caller records it. ``reflect``: a successful attempt is left uncommitted for the reflector, and an attempt
    the reflector sent back runs again under its number with the critique."""
    stage = plan.stage(stage_id)
    if await ctx.cancelled():
        raise RunCancelled(stage_id)
    earlier = list(state.stage_results.get(stage_id, ()))
    sent_back = earlier.pop() if reflect and state.reflection_round.get(stage_id, 0) and earlier else None
    attempt = sent_back.attempt if sent_back is not None else state.attempts.get(stage_id, 0) + 1
    await ctx.reporter.node_started(stage_id, state, attempt=attempt)
    context = tuple(state.enriched_context.get(stage_id, ()))
    previous = tuple(earlier)
    findings = findings_for(state, stage_id)
    critique = sent_back.critiques[-1] if sent_back is not None and sent_back.critiques else None

    def make_task(spec: AgentSpec) -> AgentTask:
        return AgentTask(
            run_id=state.run_id,
            stage=stage,
            agent=spec,
            attempt=attempt,
            workflow_type=plan.workflow_type,
            context=context,
            previous=previous,
            request=state.request,
            attachments=ctx.attachments,
            feedback=ctx.feedback,
            findings=findings,
            critique=critique,
        )

    result = await run_stage(stage, ctx.agents, make_task, attempt=attempt, limit_seconds=ctx.stage_timeout_seconds)
    checked = state.model_copy(update={"stage_results": {**state.stage_results, stage_id: list(previous)}})
    result = await _checked(plan, checked, result, ctx)
    if sent_back is not None:
        result = result.model_copy(update={"critiques": sent_back.critiques})
    if ctx.commit is not None and not (reflect and not result.failed):
        result = result.model_copy(update={"commit": await ctx.commit(result)})
    if ctx.feedback is not None:
        result = result.model_copy(update={"feedback": ctx.feedback})
    return _Attempt(
        result=result,
        attempts={**state.attempts, stage_id: attempt},
        results={**state.stage_results, stage_id: [*previous, result]},
    )


async def _checked(plan: ExecutionPlan, state: ExecutionState, result: StageResult, ctx: RunContext) -> StageResult:
    """``result`` with what checking it against the run's earlier attempts found (logged and said)."""
    try:
        pending = await ctx.diffs.pending_hunks() if ctx.diffs is not None and ctx.commit is not None else None
        found = await check_attempt(plan, state, result, diffs=ctx.diffs, pending=pending)
    except DaemonError as exc:
        await ctx.reporter.log(
            DecisionKind.CONSISTENCY, f"{result.stage_id} attempt {result.attempt} not checked: {exc.message}"
        )
        return result
    if not found:
        return result
    for finding in found:
        await ctx.reporter.log(DecisionKind.CONSISTENCY, finding.text, finding.model_dump(mode="json"))
    await ctx.reporter.thought(
        "Checked against earlier attempts: " + " ".join(f.text for f in found), node=result.stage_id
    )
    return result.model_copy(update={"consistency": found})


def _stage_node(plan: ExecutionPlan, stage_id: str) -> _NodeFn:
    reflect = stage_id in plan.reflected_stages

    async def node(state: ExecutionState, *, runtime: Runtime[RunContext]) -> dict[str, Any]:
        done = await _stage_attempt(plan, stage_id, state, runtime.context, reflect=reflect)
        ctx = runtime.context
        result, attempts, results = done.result, done.attempts, done.results
        iterations = state.iterations + 1
        after = state.model_copy(
            update={"stage_results": results, "attempts": attempts, "current_stage": stage_id, "iterations": iterations}
        )
        await ctx.reporter.stage_finished(result, after)
        values = to_channel_values(
            current_stage=stage_id, stage_results=results, attempts=attempts, iterations=iterations
        )
        if reflect and not result.failed:  # uncommitted, to the reflector
            return {**values, "next_node": REFLECTOR_NODE}
        decision = route_after_stage(
            plan,
            stage_id=stage_id,
            failed=result.failed,
            attempts=attempts,
            enrichments=state.enrichment_attempts,
            iterations=iterations,
            max_iterations=ctx.max_iterations,
        )
        await ctx.reporter.routed(decision, after)
        rounds = {**state.reflection_round, stage_id: 0} if reflect else state.reflection_round
        return {**values, **to_channel_values(reflection_round=rounds, **route_values(state.routes, decision))}

    return node


def _adaptive_node(plan: ExecutionPlan) -> _NodeFn:
    async def adaptive_retrieval(state: ExecutionState, *, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx = runtime.context
        if await ctx.cancelled():
            raise RunCancelled(ADAPTIVE_NODE)
        failed_stage = state.current_stage
        failed = state.last_result(failed_stage) if failed_stage else None
        if failed_stage is None or failed is None:
            raise RuntimeError("adaptive_retrieval reached without a failed stage in the state")
        await ctx.reporter.node_started(ADAPTIVE_NODE, state)
        target = plan.routing[failed_stage].retry
        enrichment = await enrich(
            plan,
            failed=failed,
            target=target,
            retriever=ctx.retriever,
            query_writer=ctx.query_writer,
            previous=state.enriched_context.get(target, ()),
        )
        enrichments = {**state.enrichment_attempts, failed_stage: state.enrichment_attempts.get(failed_stage, 0) + 1}
        context = {**state.enriched_context, target: list(enrichment.snippets)}
        decision = route_after_enrichment(
            plan,
            failed_stage=failed_stage,
            attempts=state.attempts,
            iterations=state.iterations,
            max_iterations=ctx.max_iterations,
        )
        after = state.model_copy(update={"enrichment_attempts": enrichments, "enriched_context": context})
        summary = (
            f"enrichment {enrichments[failed_stage]} for {failed_stage}: {len(enrichment.snippets)} snippet(s) for "
            f"{target} from {len(enrichment.queries)} query(ies)" + "".join(f"; {n}" for n in enrichment.notes)
        )
        await ctx.reporter.log(
            DecisionKind.ENRICHMENT,
            summary,
            {
                "failed_stage": failed_stage,
                "target": target,
                "queries": list(enrichment.queries),
                "snippets": [s.model_dump(mode="json", exclude={"text"}) for s in enrichment.snippets],
                "notes": list(enrichment.notes),
            },
        )
        await ctx.reporter.node_finished(ADAPTIVE_NODE, after, summary=summary)
        await ctx.reporter.routed(decision, after)
        return to_channel_values(
            enrichment_attempts=enrichments, enriched_context=context, **route_values(state.routes, decision)
        )

    return adaptive_retrieval


async def done(state: ExecutionState, *, runtime: Runtime[RunContext]) -> dict[str, Any]:
    await runtime.context.reporter.node_started(DONE_NODE, state)
    await runtime.context.reporter.node_finished(DONE_NODE, state, summary="reached DONE")
    return to_channel_values(terminal="done", next_node="")


async def abort(state: ExecutionState, *, runtime: Runtime[RunContext]) -> dict[str, Any]:
    reason = state.abort_reason or "the routing reached ABORT"
    await runtime.context.reporter.node_started(ABORT_NODE, state)
    await runtime.context.reporter.node_finished(ABORT_NODE, state, summary=reason)
    return to_channel_values(terminal="abort", abort_reason=reason, next_node="")


def _router(plan: ExecutionPlan, source: str) -> tuple[Callable[[ExecutionState], str], dict[Hashable, str]]:
    """The conditional edge after ``source``: it reads the node the source decided (``next_node``) and answers
    its label, with the path map from labels to nodes (so ``draw_mermaid`` shows each edge's label). With an
    evaluator, the edges into ``done`` go through it."""
    labels = edge_labels(plan, source)

    def route(state: ExecutionState) -> str:
        return labels[state.next_node]

    path_map: dict[Hashable, str] = {label: graph_node(plan, target) for target, label in labels.items()}
    return route, path_map


def _scored(_state: ExecutionState) -> str:
    """The evaluator's one edge, to ``done`` (a conditional edge, so the graph shows its label)."""
    return SCORED


def build_graph(plan: ExecutionPlan) -> StateGraph[ExecutionState, RunContext, ExecutionState, ExecutionState]:
    """The uncompiled state graph of ``plan``."""
    graph = StateGraph(ExecutionState, context_schema=RunContext)
    for stage_id in plan.stage_ids:
        graph.add_node(stage_id, _stage_node(plan, stage_id))  # pyright: ignore[reportUnknownMemberType]
    graph.add_node(ADAPTIVE_NODE, _adaptive_node(plan))  # pyright: ignore[reportUnknownMemberType]
    sources = [*plan.stage_ids, ADAPTIVE_NODE]
    if plan.reflected_stages:
        graph.add_node(REFLECTOR_NODE, reflector_node(plan))  # pyright: ignore[reportUnknownMemberType]
        sources.append(REFLECTOR_NODE)
    if plan.evaluation.enabled:
        graph.add_node(EVALUATOR_NODE, evaluator_node(plan))  # pyright: ignore[reportUnknownMemberType]
        graph.add_conditional_edges(EVALUATOR_NODE, _scored, {SCORED: DONE_NODE})
    graph.add_node(DONE_NODE, done)  # pyright: ignore[reportUnknownMemberType]
    graph.add_node(ABORT_NODE, abort)  # pyright: ignore[reportUnknownMemberType]
    graph.add_edge(START, node_for(plan.entry))
    for source in sources:
        graph.add_conditional_edges(source, *_router(plan, source))
    graph.add_edge(DONE_NODE, END)
    graph.add_edge(ABORT_NODE, END)
    return graph


TEST_STAGE_TYPES = frozenset({StageType.TEST_EXECUTION, StageType.TESTING})
"""Stages whose agents run the tests (a follow-up runs those after the stage it answers)."""


def follow_up_stages(plan: ExecutionPlan, stage_id: str) -> list[str]:
    """What a feedback follow-up of ``stage_id`` runs: that stage, then each test stage (``test_execution``,
    ``testing``) on its success path, in order (the tests that checked its work check the new attempt)."""
    stages = [stage_id]
    seen = {stage_id}
    node = plan.routing[stage_id].on_success
    while node in plan.routing and node not in seen:
        seen.add(node)
        if plan.stage(node).type in TEST_STAGE_TYPES:
            stages.append(node)
        node = plan.routing[node].on_success
    return stages


def _follow_up_node(plan: ExecutionPlan, stage_id: str, *, answers_feedback: bool) -> _NodeFn:
    async def node(state: ExecutionState, *, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx = runtime.context if answers_feedback else replace(runtime.context, feedback=None)
        done = await _stage_attempt(plan, stage_id, state, ctx)
        after = state.model_copy(
            update={"stage_results": done.results, "attempts": done.attempts, "current_stage": stage_id}
        )
        await ctx.reporter.stage_finished(done.result, after)
        return to_channel_values(current_stage=stage_id, stage_results=done.results, attempts=done.attempts)

    return node


def _follow_up_router(stage_id: str, then: str) -> tuple[Callable[[ExecutionState], str], dict[Hashable, str]]:
    """After a follow-up stage: on to ``then`` when its attempt succeeded, else the follow-up ends."""

    def route(state: ExecutionState) -> str:
        result = state.last_result(stage_id)
        return "failure" if result is None or result.failed else "success"

    path_map: dict[Hashable, str] = {"success": then, "failure": END}
    return route, path_map


def compile_follow_up_graph(
    plan: ExecutionPlan, stage_id: str, checkpointer: BaseCheckpointSaver[str] | None = None
) -> PipelineGraph:
    """The graph of a review-feedback follow-up: one attempt of ``stage_id`` with the feedback, then one attempt
    of each test stage after it (``follow_up_stages``), each only when the one before succeeded."""
    stages = follow_up_stages(plan, stage_id)
    graph = StateGraph(ExecutionState, context_schema=RunContext)
    for i, sid in enumerate(stages):
        node = _follow_up_node(plan, sid, answers_feedback=i == 0)
        graph.add_node(sid, node)  # pyright: ignore[reportUnknownMemberType]
    graph.add_edge(START, stages[0])
    for sid, then in itertools.pairwise(stages):
        graph.add_conditional_edges(sid, *_follow_up_router(sid, then))
    graph.add_edge(stages[-1], END)
    return graph.compile(checkpointer=checkpointer, name=f"ided:{plan.workflow}:follow-up")  # pyright: ignore[reportUnknownMemberType]


def compile_graph(plan: ExecutionPlan, checkpointer: BaseCheckpointSaver[str] | None = None) -> PipelineGraph:
    graph = build_graph(plan)
    return graph.compile(checkpointer=checkpointer, name=f"ided:{plan.workflow}")  # pyright: ignore[reportUnknownMemberType]


def graph_mermaid(plan: ExecutionPlan) -> str:
    """The compiled graph as a Mermaid flowchart."""
    return compile_graph(plan).get_graph().draw_mermaid()
