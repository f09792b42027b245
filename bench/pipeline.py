"""Benchmark: the pipeline's own overhead, with scripted models that answer instantly.

What a run costs before any model latency: loading and validating the workflow catalog,
deterministic selection, plan assembly, graph compilation, and per-node cost of a full run through
LangGraph with synchronous SQLite checkpoints, run records, decision log and progress events; and
upfront retrieval (context for every planned stage at planning time) for the specification's
4-stage feature workflow over a real repository (default: this checkout), indexed first (lexical
and dense; the index state is kept in ``--state`` so a second run only catches up), in one process,
alternating four ways (``UPFRONT_VARIANTS``): stage after stage with the store decoding every
candidate (the former behaviour), concurrently with the shared budget and the store decoding every
candidate, and concurrently with the store's memo of decoded chunks emptied before the run or as
the previous run left it. A warm-up run comes first in every case (the query vectors are embedded
then), as it did before the memo. Run::

    uv run --frozen python bench/pipeline.py [--runs N] [--part all|overhead|upfront]
        [--workspace PATH] [--state DIR]

Figures are medians (milliseconds) over ``--runs`` repetitions in one process; the upfront figures
come with the machine's load average, since they measure CPU-bound search work.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from langchain_core.messages import HumanMessage

from daemon.config import PipelineConfig, ResilienceConfig, load_config
from daemon.core.ports import VectorStore
from daemon.core.run_models import ExecutionPlan, ProgressKind
from daemon.core.selection_models import DecisionSource, StageDecision
from daemon.index._store_base import PointStoreBase
from daemon.index.workspace_index import WorkspaceIndex
from daemon.orchestration.deterministic_selector import select_deterministically
from daemon.orchestration.graph_builder import compile_graph
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.plan import assemble_plan
from daemon.orchestration.replay_provider import ReplayChatModel, ReplayEntry, ReplayScript
from daemon.orchestration.resilience import ModelEndpoint, ResilienceLayer
from daemon.orchestration.retriever import stage_hints
from daemon.orchestration.runtime import PipelineRuntime
from daemon.orchestration.workflow_loader import WorkflowCatalog, builtin_workflow_dir
from daemon.retrieval.agent import RetrievalAgent
from daemon.retrieval.models import RetrievalMode, RetrievalRequest, WorkflowKind
from daemon.retrieval.shared_search import SharedSearches
from daemon.service.runs.retrieval_sources import build_retrieval_agent

__all__ = ["main"]

REQUEST = "Add a --json flag to the status command"
FAST = ResilienceConfig(cache=False, max_retries=0, backoff_initial_seconds=0.0)


def _median_ms(fn: Callable[[], object], runs: int) -> float:
    samples: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def _script(fail_tests_once: bool) -> list[ReplayEntry]:
    choice = {
        "workflow": "feature_with_iterative_testing",
        "rationale": "bench",
        "stage_decisions": [
            {"stage_id": "requirements_analysis", "decision": "INCLUDE", "reason": "bench"},
            {"stage_id": "code_review", "decision": "INCLUDE", "reason": "bench"},
            {"stage_id": "documentation", "decision": "INCLUDE", "reason": "bench"},
        ],
    }
    entries = [ReplayEntry(role="orchestrator", answer=choice, repeat=True)]
    if fail_tests_once:
        entries.append(
            ReplayEntry(
                role="test_runner", match=r"Attempt: 1\b", answer={"status": "failure", "summary": "red"}, repeat=True
            )
        )
    entries.append(ReplayEntry(role="*", answer={"status": "success", "summary": "ok"}, repeat=True))
    return entries


def _registry(script: ReplayScript) -> ModelRegistry:
    roles = [
        "orchestrator",
        "analyst",
        "coder",
        "test_writer",
        "test_runner",
        "reviewer",
        "security_reviewer",
        "doc_writer",
    ]
    models = {role: ReplayChatModel(script=script, role=role) for role in roles}
    return ModelRegistry.from_models(models, ResilienceLayer(FAST))


async def _runs(runs: int, *, fail_tests_once: bool) -> tuple[float, float, int]:
    """Median run wall time (ms), median per-node time (ms), nodes per run."""
    walls: list[float] = []
    nodes = 0
    with tempfile.TemporaryDirectory() as tmp:
        registry = _registry(ReplayScript(_script(fail_tests_once)))
        catalog = WorkflowCatalog.load([builtin_workflow_dir()])
        async with PipelineRuntime.open(
            catalog=catalog, models=registry, state_dir=Path(tmp), config=PipelineConfig(resilience=FAST)
        ) as runtime:
            for _ in range(runs):
                start = time.perf_counter()
                record = await runtime.run(REQUEST, wait_seconds=120)
                walls.append((time.perf_counter() - start) * 1000)
                events = await runtime.events(record.run_id)
                nodes = sum(e.event is ProgressKind.NODE_STARTED for e in events)
    wall = statistics.median(walls)
    return wall, wall / nodes, nodes


async def _resilience_overhead(runs: int) -> tuple[float, float]:
    script = ReplayScript([ReplayEntry(role="m", answer="ok", repeat=True)])
    model = ReplayChatModel(script=script, role="m")
    layer = ResilienceLayer(FAST)
    chain = [ModelEndpoint(name="m", provider="replay", model="m", chat_model=model)]
    prompt = [HumanMessage(content="hello")]
    direct: list[float] = []
    wrapped: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        await model.ainvoke(prompt)
        direct.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        await layer.call(chain, prompt, role="m")
        wrapped.append((time.perf_counter() - start) * 1000)
    return statistics.median(direct), statistics.median(wrapped)


UPFRONT_WORKFLOW = "spec_feature_with_iterative_testing"
UPFRONT_REQUEST = "Add a --json flag to the cve audit command that prints the findings"


UPFRONT_VARIANTS = ("sequential", "concurrent, no memo", "concurrent, memo cold", "concurrent, memo warm")
"""Stage after stage with nothing shared and the store decoding every candidate (the former behaviour);
concurrent with the store decoding every candidate (as before the memo); concurrent with the store's
memo of decoded chunks emptied before the run; concurrent with the memo as the previous run left it."""


async def _upfront_medians(
    agent: RetrievalAgent, plan: ExecutionPlan, store: VectorStore, runs: int
) -> dict[str, float]:
    """Median wall and CPU (all threads of the process) milliseconds of each variant, alternating."""
    stages = [stage_hints(plan, s.stage_id) for s in plan.stages]
    kind = WorkflowKind.from_workflow_type(plan.workflow_type.value)
    memo = store._memo if isinstance(store, PointStoreBase) else None
    samples: dict[str, list[float]] = {}
    await agent.upfront(plan.request, kind, plan.retrieval_strategy, stages)  # warm-up: model, caches
    for _ in range(runs):
        for name in UPFRONT_VARIANTS:
            if isinstance(store, PointStoreBase):
                store._memo = None if "no memo" in name or name == "sequential" else memo
                store._until_write.clear()
            if memo is not None and name == "concurrent, memo cold":
                memo.clear()
            start, cpu = time.perf_counter(), time.process_time()
            await agent.upfront(plan.request, kind, plan.retrieval_strategy, stages, sequential=name == "sequential")
            samples.setdefault(name, []).append((time.perf_counter() - start) * 1000)
            samples.setdefault(f"{name} cpu", []).append((time.process_time() - cpu) * 1000)
    if isinstance(store, PointStoreBase):
        store._memo = memo
    return {name: statistics.median(values) for name, values in samples.items()}


def _upfront(runs: int, workspace: Path, state: Path) -> None:
    config = load_config(workspace, overrides={"state_dir": str(state)})
    catalog = WorkflowCatalog.load([builtin_workflow_dir()])
    workflow = catalog.get(UPFRONT_WORKFLOW)
    decisions = [
        StageDecision(stage_id=s.stage_id, include=True, reason="bench", source=DecisionSource.RULE)
        for s in workflow.stages
    ]
    plan = assemble_plan(workflow, decisions, UPFRONT_REQUEST)
    with WorkspaceIndex.open(config) as index:
        start = time.perf_counter()
        index.index()
        index.embed()
        index_s = time.perf_counter() - start
        chunks = index.status().chunks
        agent = build_retrieval_agent(config, index=index)
        medians = asyncio.run(_upfront_medians(agent, plan, index._store, runs))
        searches = asyncio.run(_shared_searches(agent, plan))
    load = os.getloadavg()[0]
    print(f"upfront retrieval, {len(plan.stages)} stages of {UPFRONT_WORKFLOW}, {workspace} ({chunks} chunks)")
    print(f"  index catch-up (state in {state})   {index_s:8.1f} s")
    for name in UPFRONT_VARIANTS:
        wall, cpu = medians[name], medians[f"{name} cpu"]
        note = f"; {searches}" if name == "concurrent, memo cold" else ""
        print(f"  {name:<32} {wall:8.1f} ms  (CPU {cpu:.0f} ms{note})")
    print(f"  load average {load:.1f} on {os.cpu_count()} cores; medians over {runs} runs, variants alternating")


async def _shared_searches(agent: RetrievalAgent, plan: ExecutionPlan) -> str:
    if agent.parts.index is None:
        return "no index"
    shared = SharedSearches(agent.parts.index)
    kind = WorkflowKind.from_workflow_type(plan.workflow_type.value)
    for stage in plan.stages:
        request = RetrievalRequest(
            task=plan.request, workflow_kind=kind, stage=stage_hints(plan, stage.stage_id), mode=RetrievalMode.UPFRONT
        )
        await agent.retrieve(request, plan.retrieval_strategy, index=shared)
    return f"{shared.ran} distinct searches of {shared.asked} asked"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--part", choices=["all", "overhead", "upfront"], default="all")
    parser.add_argument("--workspace", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--state", type=Path, default=Path(tempfile.gettempdir()) / "ided-bench-upfront")
    args = parser.parse_args()
    runs: int = args.runs
    if args.part in ("all", "upfront"):
        _upfront(max(3, runs // 4), args.workspace.resolve(), args.state)
    if args.part == "upfront":
        return

    directory = builtin_workflow_dir()
    load_ms = _median_ms(lambda: WorkflowCatalog.load([directory]), runs)
    catalog = WorkflowCatalog.load([directory])
    select_ms = _median_ms(lambda: select_deterministically(REQUEST, catalog, None), runs)
    selection = select_deterministically(REQUEST, catalog, None)
    workflow = catalog.get(selection.workflow)
    plan_ms = _median_ms(lambda: assemble_plan(workflow, selection.stage_decisions, REQUEST), runs * 10)
    plan = assemble_plan(workflow, selection.stage_decisions, REQUEST)
    compile_ms = _median_ms(lambda: compile_graph(plan), runs)

    ok_wall, ok_node, ok_nodes = asyncio.run(_runs(runs, fail_tests_once=False))
    retry_wall, retry_node, retry_nodes = asyncio.run(_runs(runs, fail_tests_once=True))
    direct_ms, wrapped_ms = asyncio.run(_resilience_overhead(runs * 10))

    print(f"pipeline overhead, medians over {runs} runs (scripted models answer instantly)")
    print(f"  load + validate {len(catalog.workflows)} workflows      {load_ms:8.2f} ms")
    print(f"  deterministic selection           {select_ms:8.2f} ms")
    print(f"  plan assembly                     {plan_ms:8.3f} ms")
    print(f"  graph compile ({len(plan.stages)} stages)          {compile_ms:8.2f} ms")
    print(f"  full run, success path            {ok_wall:8.1f} ms  ({ok_nodes} nodes, {ok_node:.1f} ms/node)")
    print(f"  full run, one test retry          {retry_wall:8.1f} ms  ({retry_nodes} nodes, {retry_node:.1f} ms/node)")
    print(f"  model call direct / via resilience {direct_ms:7.3f} / {wrapped_ms:.3f} ms")


if __name__ == "__main__":
    main()
