"""Crash and resume: a real `ided run` is SIGKILLed mid-run, then `ided resume` continues from the checkpoint."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from daemon.config import PipelineConfig, RunsConfig
from daemon.core.run_models import DecisionKind, ExecutionProgress, ProgressKind, RunRecord, RunStatus
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.resilience import ResilienceLayer
from tests.pipeline_support import FAST_RESILIENCE, choose, everyone_succeeds, open_runtime, trail, write_script
from tests.vcs_support import make_repo

FEATURE = "feature_with_iterative_testing"
STEP = 60.0


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IDED_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), PYTHONUNBUFFERED="1")
    return env


async def _ided(*args: str, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "daemon",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )


async def test_a_run_killed_mid_stage_resumes_from_its_last_checkpoint(
    tmp_path: Path, runs_database_url: str | None
) -> None:
    workspace = make_repo(tmp_path / "ws", {"calc.py": "def add(a, b):\n    return a + b\n"})  # code runs need git
    state_dir = tmp_path / "state"
    slow = write_script(
        tmp_path / "slow.yaml",
        [
            {
                "role": "orchestrator",
                "answer": choose(FEATURE, requirements_analysis="SKIP", code_review="SKIP", documentation="SKIP"),
            },
            {"role": "coder", "answer": {"status": "success", "summary": "multiply added"}},
            {"role": "test_writer", "answer": {"status": "success", "summary": "never seen"}, "delay_seconds": 300},
        ],
    )
    fast = write_script(tmp_path / "fast.yaml", [everyone_succeeds()])
    common = ["--set", f"state_dir={state_dir}"]
    if runs_database_url:  # the same run on the shared Postgres store: records and checkpoints there
        common += ["--set", f"runs.database_url={runs_database_url}"]
    runs = RunsConfig(database_url=runs_database_url)
    env = _env(tmp_path / "home")

    proc = await _ided(
        *common,
        "--set",
        f"pipeline.replay_script={slow}",
        "run",
        "--no-daemon",  # the run executes in this process, which the test kills mid-stage
        "Add a multiply function",
        "-w",
        str(workspace),
        "--events",
        env=env,
    )
    assert proc.stdout is not None
    seen: list[ExecutionProgress] = []
    try:
        async with asyncio.timeout(STEP):
            while not any(e.event is ProgressKind.NODE_STARTED and e.node == "test_writing" for e in seen):
                line = await proc.stdout.readline()
                assert line, "ided run ended before the test_writing stage started"
                seen.append(ExecutionProgress.model_validate_json(line))
    finally:
        proc.send_signal(signal.SIGKILL)
        await asyncio.wait_for(proc.wait(), STEP)
    assert proc.returncode == -signal.SIGKILL
    run_id = seen[0].run_id

    models = ModelRegistry.none(ResilienceLayer(FAST_RESILIENCE))
    async with open_runtime(state_dir, PipelineConfig(resilience=FAST_RESILIENCE), models=models, runs=runs) as runtime:
        crashed = await runtime.get(run_id)
        assert crashed.status is RunStatus.INTERRUPTED
        checkpointed = await runtime.state(run_id)
        assert checkpointed is not None and list(checkpointed.stage_results) == ["implementation"]

    resumed = await _ided(
        *common, "--set", f"pipeline.replay_script={fast}", "resume", run_id, "-w", str(workspace), "--json", env=env
    )
    out, err = await asyncio.wait_for(resumed.communicate(), STEP)
    assert resumed.returncode == 0, err.decode()
    record = RunRecord.model_validate(json.loads(out))
    assert record.status is RunStatus.SUCCEEDED and record.resumed == 1

    async with open_runtime(state_dir, PipelineConfig(resilience=FAST_RESILIENCE), models=models, runs=runs) as runtime:
        events = await runtime.events(run_id)
        log = await runtime.decision_log(run_id)
        final = await runtime.state(run_id)
    assert trail(events) == ["implementation", "test_writing", "test_writing", "test_execution", "done"]
    assert [e.event for e in events].count(ProgressKind.RUN_RESUMED) == 1
    assert final is not None and final.attempts == {"implementation": 1, "test_writing": 1, "test_execution": 1}
    assert final.stage_results["implementation"][0].summary == "multiply added"  # from the killed process
    assert any(e.kind is DecisionKind.RESUME for e in log)
    assert (state_dir / "pipeline" / "checkpoints.sqlite3").exists() is (runs_database_url is None)
