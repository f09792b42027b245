"""Benchmark: what the agent machinery costs around the model (the model itself is scripted, ~0 s).

A feature run (implementation, test writing, test execution) in a generated git repository of
``--files`` files, with a scripted coder that makes ``--tool-calls`` read_file calls and one
write_file, a test writer that writes one file and a test runner whose ``test`` command is
``python -c pass``. Measured per run, medians over ``--runs``:

- start -> first event, start -> first ``plan`` event (selection is scripted, so this is the
  runtime's own latency: the edit lock, the run record, the worktree);
- events per second during the run (every event is published and persisted in SQLite);
- per tool call: the call's round trip inside the agent (two events, the tool itself);
- per run: worktree creation (from the plan's log entry to the worktree's) and the whole run.

Run::

    uv run --frozen python bench/agents_overhead.py [--files 2000] [--runs 3] [--tool-calls 40]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from daemon.config import AgentsConfig, PipelineConfig, ResilienceConfig
from daemon.core.run_models import DecisionKind, ProgressKind
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.resilience import ResilienceLayer
from daemon.orchestration.runtime import PipelineRuntime
from daemon.orchestration.workflow_loader import WorkflowCatalog, builtin_workflow_dir
from daemon.vcs.worktrees import RunWorktrees

__all__ = ["main"]

GIT = ["git", "-c", "user.name=Bench", "-c", "user.email=bench@example.com", "-c", "init.defaultBranch=main"]


def make_repo(root: Path, files: int) -> None:
    for i in range(files):
        folder = root / "pkg" / f"m{i // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i:05d}.py").write_text(f"def f{i}(x):\n    return x + {i}\n", encoding="utf-8")
    (root / ".gitignore").write_text("__pycache__/\n", encoding="utf-8")
    subprocess.run([*GIT, "init", "-q"], cwd=root, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "init"], cwd=root, check=True)


def script(tool_calls: int, runs: int) -> list[dict[str, Any]]:
    done: dict[str, Any] = {"status": "success", "summary": "done", "evidence": []}
    choose = {
        "workflow": "feature_with_iterative_testing",
        "rationale": "bench",
        "stage_decisions": [
            {"stage_id": s, "decision": "SKIP", "reason": "bench"}
            for s in ("requirements_analysis", "code_review", "documentation")
        ],
    }
    reads = [{"name": "read_file", "args": {"path": f"pkg/m000/f{i % 100:05d}.py"}} for i in range(tool_calls)]
    entries: list[dict[str, Any]] = []
    for n in range(runs):
        entries += [
            {"role": "orchestrator", "answer": choose},
            {"role": "coder", "tool_calls": reads},
            {
                "role": "coder",
                "tool_calls": [{"name": "write_file", "args": {"path": f"pkg/new{n}.py", "content": "X = 1\n"}}],
            },
            {"role": "coder", "answer": done},
            {
                "role": "test_writer",
                "tool_calls": [
                    {"name": "write_file", "args": {"path": f"tests/test_{n}.py", "content": "def test(): pass\n"}}
                ],
            },
            {"role": "test_writer", "answer": done},
            {"role": "test_runner", "answer": done},
        ]
    return entries


async def one_run(runtime: PipelineRuntime) -> dict[str, float]:
    subscription = runtime.subscribe()
    started = time.perf_counter()
    record = await runtime.start("Add a feature")
    first_event = first_plan = None
    times: list[float] = []
    async with asyncio.timeout(300):
        async for event in subscription:
            now = time.perf_counter()
            times.append(now)
            first_event = first_event or now - started
            if first_plan is None and event.event is ProgressKind.PLAN:
                first_plan = now - started
            if event.event is ProgressKind.RUN_FINISHED and event.run_id == record.run_id:
                break
    subscription.close()
    events = await runtime.events(record.run_id)
    calls = {e.tool_call_id: e for e in events if e.event is ProgressKind.TOOL_CALL}
    updates = [e for e in events if e.event is ProgressKind.TOOL_CALL_UPDATE]

    def at(ts: str) -> float:
        return datetime.fromisoformat(ts).timestamp()

    per_call = [at(u.timestamp) - at(calls[u.tool_call_id or ""].timestamp) for u in updates if u.tool_call_id in calls]
    log = await runtime.decision_log(record.run_id)
    worktree = next(e for e in log if e.kind is DecisionKind.WORKTREE)
    prepared = next(e for e in log if e.kind is DecisionKind.PLAN)
    return {
        "first_event_s": first_event or 0.0,
        "first_plan_s": first_plan or 0.0,
        "events": float(len(events)),
        "events_per_s": len(times) / (times[-1] - times[0]) if len(times) > 1 else 0.0,
        "tool_call_ms": statistics.median(per_call) * 1000 if per_call else 0.0,
        "worktree_s": at(worktree.at) - at(prepared.at),
        "run_s": times[-1] - started,
    }


async def bench(files: int, runs: int, tool_calls: int) -> None:
    with tempfile.TemporaryDirectory(prefix="ided-agents-bench-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        t0 = time.perf_counter()
        make_repo(root, files)
        print(f"repository: {files} files, generated in {time.perf_counter() - t0:.1f}s")
        script_path = Path(tmp) / "script.yaml"
        script_path.write_text(yaml.safe_dump({"responses": script(tool_calls, runs)}), encoding="utf-8")
        config = PipelineConfig(
            replay_script=str(script_path),
            resilience=ResilienceConfig(cache=False, max_retries=0, backoff_initial_seconds=0, backoff_max_seconds=0),
        )
        models = ModelRegistry.from_config(config, env={}, layer=ResilienceLayer(config.resilience))
        state = Path(tmp) / "state"
        async with PipelineRuntime.open(
            catalog=WorkflowCatalog.load([builtin_workflow_dir()]),
            models=models,
            state_dir=state,
            config=config,
            worktrees=RunWorktrees(root, state),
            agents_config=AgentsConfig(commands={"test": f"{sys.executable} -c pass"}, max_tool_steps=10),
        ) as runtime:
            samples = [await one_run(runtime) for _ in range(runs)]
        models.close()
    print(f"runs: {runs}, tool calls per coder attempt: {tool_calls}")
    for key in ("first_event_s", "first_plan_s", "worktree_s", "run_s", "events", "events_per_s", "tool_call_ms"):
        values = [s[key] for s in samples]
        print(f"  {key:<14} median {statistics.median(values):9.3f}   min {min(values):9.3f}   max {max(values):9.3f}")
    print("  (per-stage commit and change-set costs on a large repository: bench/vcs_overhead.py)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tool-calls", type=int, default=40)
    args = parser.parse_args()
    asyncio.run(bench(args.files, args.runs, args.tool_calls))


if __name__ == "__main__":
    main()
