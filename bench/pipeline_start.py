"""Benchmark helpers: how soon a run starts working, on real checkouts, beside another version of ided.

Two measurements, each in child processes so that several versions of ided (this checkout and a
``--baseline-ref`` worktree of an older commit, through ``PYTHONPATH``) run the same script on the
same checkouts, alternating round by round:

- ``start``: a warm workspace daemon (started on the checkout, its index caught up, ``--settle``
  seconds idle) answers ``ided run``-style requests from a client (the run service over the socket)
  with a scripted model that answers at once; per run, from the request to the first stage's
  ``node_started`` and to the first agent's answer (its first model call returns at once, so this is
  the first call), the spans the decision log dates (plan, worktree, upfront retrieval, with its wall time and each
  source's, when the version logs them) and the
  daemon's CPU time (every thread) from the request to that answer. The
  first run of a daemon is the cold one; the others are warm. Each run is cancelled once its first
  agent answered and rejected after it ends. Every run asks a different request (``REQUESTS``), so
  no answer remembered for one request serves the next.
- ``upfront``: the retrieval agent's upfront retrieval for the 4 stages of the specification's
  feature workflow, in one process over the checkout's index (opened first, caught up), the agent
  built as a run's is (searching through the index port one search at a time, as the daemon's index
  thread does; no language servers), wall and
  CPU (``time.process_time``: every thread) per retrieval, a new request each time after one
  warm-up retrieval.

Each child prints one JSON object per line; the parent prints medians per version and checkout with
the load average. The checkouts must be git repositories (runs edit on branches); their index state
lives under ``--state-root/<name>`` and is kept between invocations.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = ["REQUESTS", "Version", "compare", "start_child", "upfront_child"]

REQUESTS = (
    "Add a --json flag to the cve audit command that prints the findings",
    "Add a timeout option to the session that retries failed connections",
    "Fix the crash when a header value is empty in the response",
    "Support a custom user agent in the HTTP client configuration",
    "Log a warning when a cookie is set without the secure flag",
    "Cache the parsed URL of a request to avoid parsing it twice",
    "Add type hints to the authentication helpers",
    "Return a clear error when the form data cannot be encoded",
    "Make the redirect limit configurable per request",
    "Validate the content length header before reading the body",
)
"""The requests runs and retrievals ask, one after the other (a new one each time)."""

WORKFLOW = "spec_feature_with_iterative_testing"
_SCRIPT = {
    "responses": [
        {
            "role": "orchestrator",
            "answer": {
                "workflow": WORKFLOW,
                "rationale": "bench",
                "stage_decisions": [
                    {"stage_id": "security_review", "decision": "INCLUDE", "reason": "bench"},
                    {"stage_id": "lint_and_format", "decision": "INCLUDE", "reason": "bench"},
                ],
            },
            "repeat": True,
        },
        {"role": "*", "answer": {"status": "success", "summary": "ok"}, "repeat": True},
    ]
}


@dataclass(frozen=True, kw_only=True)
class Version:
    """One version of ided: a name and the folder its ``daemon`` package is imported from."""

    name: str
    root: Path


# -- children ----------------------------------------------------------------------------------------


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (every thread), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _at(stamp: object) -> float:
    return stamp.timestamp() if isinstance(stamp, datetime) else datetime.fromisoformat(str(stamp)).timestamp()


def _module(*names: str) -> Any:
    """The first of ``names`` this version of ided has (the children run older versions too)."""
    for name in names[:-1]:
        with contextlib.suppress(ImportError):
            return importlib.import_module(name)
    return importlib.import_module(names[-1])


async def _start_runs(workspace: Path, runs: int, settle: float) -> None:
    from daemon.config import load_config
    from daemon.service.wire.api import DaemonStatus, Methods
    from daemon.service.wire.client import DaemonClient

    params = _module("daemon.service.runs.params", "daemon.service.runs.port")  # the typed RunService, or before
    remote = _module("daemon.service.runs.remote")
    attach = remote.attach_runs if hasattr(remote, "attach_runs") else remote.DaemonRunService.attach
    config = load_config(workspace)
    begun = time.time()
    service: Any = await attach(config, client="cli", start=True)
    control = await DaemonClient.attach(config, client="other", start=False)
    try:
        await control.call(Methods.INDEX_REINDEX, None, wait_s=3600)
        pid = (await control.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)).pid
        print(json.dumps({"daemon_ready_s": round(time.time() - begun, 3)}), flush=True)
        await asyncio.sleep(settle)
        for i in range(runs):
            request = REQUESTS[i % len(REQUESTS)]
            sent, cpu = time.time(), _cpu_seconds(pid)
            marks: dict[str, float] = {}
            async with await service.start(params.RunStart(request=request, workflow=WORKFLOW)) as run:
                async for event in run:
                    kind = event.event.value
                    if kind == "node_started" and "first_node" not in marks:
                        marks["first_node"] = _at(event.timestamp) - sent
                    if kind in ("agent_message", "tool_call") and "first_agent" not in marks:
                        marks["first_agent"] = _at(event.timestamp) - sent
                        marks["daemon_cpu"] = _cpu_seconds(pid) - cpu
                        await service.cancel(run.run_id)
            await service.wait(run.run_id, wait_seconds=600)
            for entry in await service.decisions(run.run_id):
                kind = entry.kind.value
                if kind in ("plan", "worktree", "enrichment") and kind not in marks:
                    marks[kind] = _at(entry.at) - sent
                if kind == "enrichment" and "upfront" not in marks and "seconds" in entry.data:
                    marks["upfront"] = float(entry.data["seconds"])
                    for source, seconds in dict(entry.data.get("source_seconds") or {}).items():
                        marks[f"src_{source}"] = float(seconds)
            print(json.dumps({"run": i, **{k: round(v, 4) for k, v in marks.items()}}), flush=True)
            await service.reject(run.run_id)
    finally:
        await service.aclose()
        await control.call(Methods.SHUTDOWN, None)
        await asyncio.wait_for(control.wait_closed(), 120)
        await control.close()


def start_child(workspace: Path, runs: int, settle: float) -> None:
    """The ``start`` measurement in this process (a child the parent started with the version's code)."""
    asyncio.run(_start_runs(workspace, runs, settle))


def upfront_child(workspace: Path, state: Path, runs: int) -> None:
    """The ``upfront`` measurement in this process: open and catch up the index, one warm-up retrieval,
    then ``runs`` retrievals of new requests."""
    from daemon.config import load_config
    from daemon.core.selection_models import DecisionSource, StageDecision
    from daemon.index.workspace_index import WorkspaceIndex
    from daemon.orchestration.plan import assemble_plan
    from daemon.orchestration.retriever import stage_hints
    from daemon.orchestration.workflow_loader import WorkflowCatalog, builtin_workflow_dir
    from daemon.retrieval.models import WorkflowKind
    from daemon.retrieval.ports import BlockingIndexSearch

    config = load_config(workspace, overrides={"state_dir": str(state)})
    workflow = WorkflowCatalog.load([builtin_workflow_dir()]).get(WORKFLOW)
    decisions = [
        StageDecision(stage_id=s.stage_id, include=True, reason="bench", source=DecisionSource.RULE)
        for s in workflow.stages
    ]
    with WorkspaceIndex.open(config) as index:
        index.index()
        status = index.status()
        # as a run's agent is built: the index through the search port, one search at a time (the daemon's
        # index thread), so fusion has no chunk vectors (the agent gets them only with an index in process)
        sources = _module("daemon.service.pipeline.retrieval_sources", "daemon.service.runs.retrieval_sources")
        agent = sources.build_retrieval_agent(config, index=None, search=BlockingIndexSearch(index, parallel=1))

        async def retrieve(request: str) -> tuple[float, float]:
            plan = assemble_plan(workflow, decisions, request)
            stages = [stage_hints(plan, s.stage_id) for s in plan.stages]
            kind = WorkflowKind.from_workflow_type(plan.workflow_type.value)
            wall, cpu = time.perf_counter(), time.process_time()
            await agent.upfront(plan.request, kind, plan.retrieval_strategy, stages)
            return time.perf_counter() - wall, time.process_time() - cpu

        async def measure() -> None:
            await retrieve("Warm up: read the configuration file once")
            for i in range(runs):
                wall, cpu = await retrieve(REQUESTS[i % len(REQUESTS)])
                print(json.dumps({"run": i, "wall": round(wall, 4), "cpu": round(cpu, 4)}), flush=True)

        print(json.dumps({"chunks": status.chunks, "embedded": status.embedded}), flush=True)
        asyncio.run(measure())


# -- the parent ----------------------------------------------------------------------------------------


def baseline_worktree(repo: Path, ref: str, into: Path) -> Path:
    """A detached worktree of ``ref`` of the repository at ``repo`` (this checkout's own history)."""
    target = into / f"ided-{ref.replace('/', '_')}"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", str(target), ref], check=True)
    return target


def _child_env(version: Version, state: Path, home: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV")}
    env.update(
        {
            "PYTHONPATH": str(version.root),
            # bytecode as an installed ided has it, kept apart per version
            "PYTHONPYCACHEPREFIX": str(state.parent / ".pycache" / version.name),
            "IDED_STATE_DIR": str(state),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "HF_HUB_OFFLINE": "1",
            **extra,
        }
    )
    return env


def _run_child(args: Sequence[str], env: dict[str, str], *, timeout: float) -> list[dict[str, Any]]:
    here = Path(__file__).resolve()
    done = subprocess.run(
        [sys.executable, str(here), *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0:
        raise RuntimeError(f"child {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return rows


def compare(
    part: str,
    versions: Sequence[Version],
    checkouts: dict[str, Path],
    *,
    state_root: Path,
    rounds: int,
    runs: int,
    settle: float,
    extra_env: dict[str, dict[str, str]],
) -> None:
    """Run ``part`` (start or upfront) for every version on every checkout, ``rounds`` times alternating,
    and print medians."""
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    loads: list[float] = []
    with tempfile.TemporaryDirectory(prefix="ided-bench-") as tmp:
        home = Path(tmp) / "home"
        script = state_root / "script.json"
        state_root.mkdir(parents=True, exist_ok=True)
        script.write_text(json.dumps(_SCRIPT), encoding="utf-8")
        for round_no in range(rounds):
            for name, workspace in checkouts.items():
                for version in versions if round_no % 2 == 0 else list(reversed(versions)):
                    state = state_root / name
                    env = _child_env(version, state, home, {**extra_env.get(name, {})})
                    env["IDED_PIPELINE__REPLAY_SCRIPT"] = str(script)
                    loads.append(os.getloadavg()[0])
                    if part == "start":
                        args = ["start-child", str(workspace), str(runs), str(settle)]
                    else:
                        args = ["upfront-child", str(workspace), str(state), str(runs)]
                    rows = _run_child(args, env, timeout=3600)
                    results.setdefault((name, version.name), []).extend(rows)
                    print(f"  round {round_no + 1}: {name} {version.name} done", file=sys.stderr, flush=True)
    _report(part, results, versions, checkouts, loads, rounds=rounds, runs=runs)


def _median_ms(rows: Sequence[dict[str, Any]], key: str) -> str:
    values = [r[key] for r in rows if key in r]
    return f"{statistics.median(values) * 1000:7.0f}" if values else "      -"


def _report(
    part: str,
    results: dict[tuple[str, str], list[dict[str, Any]]],
    versions: Sequence[Version],
    checkouts: dict[str, Path],
    loads: list[float],
    *,
    rounds: int,
    runs: int,
) -> None:
    load = f"load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores"
    if part == "start":
        print(f"request -> first agent call on a warm daemon, {WORKFLOW}; {rounds} round(s), {runs} run(s) each")
        print(f"  medians in ms; cold = each daemon's first run; {load}")
        keys = ("plan", "worktree", "upfront", "enrichment", "first_node", "first_agent", "daemon_cpu")
        print(f"  {'checkout':<10} {'version':<10} {'runs':>5} " + " ".join(f"{k:>11}" for k in keys))
        for name in checkouts:
            for version in versions:
                rows = [r for r in results.get((name, version.name), []) if "run" in r]
                cold, warm = [r for r in rows if r["run"] == 0], [r for r in rows if r["run"] > 0]
                for label, subset in (("cold", cold), ("warm", warm)):
                    cells = " ".join(f"{_median_ms(subset, k):>11}" for k in keys)
                    print(f"  {name:<10} {version.name + ' ' + label:<16} {len(subset):>3} {cells}")
                    sources = sorted({k for r in subset for k in r if k.startswith("src_")})
                    if sources:  # the upfront retrieval's sources (the slowest stage's wall time of each)
                        spans = ", ".join(f"{k[4:]} {_median_ms(subset, k).strip()}" for k in sources)
                        print(f"  {'':<10} {'':<16}     upfront sources: {spans}")
    else:
        print(f"upfront retrieval, 4 stages of {WORKFLOW}, a new request each time; {rounds} round(s) x {runs}")
        print(f"  medians in ms (CPU: every thread of the process); {load}")
        for name in checkouts:
            for version in versions:
                rows: list[dict[str, Any]] = results.get((name, version.name)) or []
                sizes = next((r for r in rows if "chunks" in r), rows[0] if rows else {"chunks": "?"})
                runs_rows = [r for r in rows if "run" in r]
                wall, cpu = _median_ms(runs_rows, "wall"), _median_ms(runs_rows, "cpu")
                print(
                    f"  {name:<10} {version.name:<10} wall {wall}  CPU {cpu}"
                    f"  ({sizes.get('chunks', '?')} chunks, {sizes.get('embedded', '?')} with vectors)"
                )


def main(argv: Sequence[str]) -> None:
    """Child entry points (the parent is ``bench/pipeline.py --part start|upfront``)."""
    part, *rest = argv
    if part == "start-child":
        start_child(Path(rest[0]), int(rest[1]), float(rest[2]))
    elif part == "upfront-child":
        upfront_child(Path(rest[0]), Path(rest[1]), int(rest[2]))
    else:
        raise SystemExit(f"unknown child part {part!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
