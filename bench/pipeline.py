"""Benchmark: the pipeline's own overhead, and how soon a run starts working on real checkouts.

``--part overhead``: what a run costs before any model latency: loading and validating the workflow
catalog, deterministic selection, plan assembly, graph compilation, and per-node cost of a full run
through LangGraph with synchronous SQLite checkpoints, run records, decision log and progress
events, with scripted models that answer instantly.

``--part start`` and ``--part upfront`` (``bench/pipeline_start.py`` says what each measures): from
a request to the first agent call on a warm daemon, and the upfront retrieval of the
specification's 4-stage feature workflow, on each ``--checkout NAME=DIR`` (a git repository; its
index state is kept in ``--state-root/NAME``), for this checkout and, with ``--baseline-ref REV``,
beside a worktree of this repository at ``REV``, alternating round by round. ``--lexical NAME``
runs that checkout without the dense model (lexical search, as a large checkout is served while its
vectors fill). Run::

    uv run --frozen python bench/pipeline.py [--runs N] [--part all|overhead|upfront|start]
        [--checkout NAME=DIR]... [--baseline-ref REV] [--rounds N] [--state-root DIR] [--lexical NAME]

For example, a requests checkout and a django checkout beside the commit before a change::

    git clone https://github.com/psf/requests /tmp/requests
    uv run --frozen python bench/pipeline.py --part start --checkout requests=/tmp/requests \
        --checkout django=/tmp/django --lexical django --baseline-ref HEAD~3 --rounds 2 --runs 6

Figures are medians (milliseconds) over the runs of every round, printed with the machine's load
average, since they measure CPU-bound work.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from langchain_core.messages import HumanMessage
from pipeline_start import Version, baseline_worktree, compare

from daemon.config import PipelineConfig, ResilienceConfig
from daemon.core.run_models import ProgressKind
from daemon.orchestration.deterministic_selector import select_deterministically
from daemon.orchestration.graph_builder import compile_graph
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.plan import assemble_plan
from daemon.orchestration.replay_provider import ReplayChatModel, ReplayEntry, ReplayScript
from daemon.orchestration.resilience import ModelEndpoint, ResilienceLayer
from daemon.orchestration.runtime import PipelineRuntime
from daemon.orchestration.workflow_loader import WorkflowCatalog, builtin_workflow_dir

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


def _checkouts(values: list[str]) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for value in values:
        name, sep, folder = value.partition("=")
        if not sep or not name or not folder:
            raise SystemExit(f"--checkout takes NAME=DIR, got {value!r}")
        path = Path(folder).expanduser().resolve()
        if not (path / ".git").exists():
            raise SystemExit(f"--checkout {name}: {path} is not a git repository (runs edit on branches; `git init`)")
        out[name] = path
    return out


def _versions(baseline: str | None, into: Path) -> list[Version]:
    here = Path(__file__).resolve().parents[1]
    versions = [Version(name="this", root=here)]
    if baseline is not None:
        versions.insert(0, Version(name=baseline[:10], root=baseline_worktree(here, baseline, into)))
    return versions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--part", choices=["all", "overhead", "upfront", "start"], default="all")
    parser.add_argument("--checkout", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--baseline-ref", default=None, help="also measure this commit of this repository")
    parser.add_argument("--rounds", type=int, default=2, help="alternations of the versions (start, upfront)")
    parser.add_argument("--settle", type=float, default=20.0, help="idle seconds of a started daemon before its runs")
    parser.add_argument("--lexical", action="append", default=[], metavar="NAME", help="that checkout without vectors")
    parser.add_argument("--state-root", type=Path, default=Path(tempfile.gettempdir()) / "ided-bench-pipeline")
    args = parser.parse_args()
    runs: int = args.runs
    if args.part in ("all", "upfront", "start"):
        checkouts = _checkouts(args.checkout)
        if not checkouts:
            raise SystemExit("--part upfront/start need at least one --checkout NAME=DIR")
        lexical = {name: {"IDED_EMBEDDING__ENABLED": "false"} for name in args.lexical}
        with tempfile.TemporaryDirectory(prefix="ided-baseline-") as tmp:
            versions = _versions(args.baseline_ref, Path(tmp))
            try:
                for part in ("upfront", "start") if args.part == "all" else (args.part,):
                    compare(
                        part,
                        versions,
                        checkouts,
                        state_root=args.state_root,
                        rounds=args.rounds,
                        runs=min(runs, 8) if part == "start" else runs,
                        settle=args.settle,
                        extra_env=lexical,
                    )
            finally:
                for version in versions[:-1]:
                    subprocess.run(["git", "worktree", "remove", "--force", str(version.root)], check=False)
    if args.part in ("upfront", "start"):
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
