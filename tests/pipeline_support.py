"""Helpers for pipeline tests: replay scripts (the scripted LLM), runtimes over temp state, event trails."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncGenerator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from daemon.config import PipelineConfig, ResilienceConfig, RunsConfig, load_config
from daemon.core.run_models import ExecutionProgress, ProgressKind
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.project_profile import ProjectProfile
from daemon.orchestration.resilience import ResilienceLayer
from daemon.orchestration.retriever import Retriever
from daemon.orchestration.runtime import PipelineRuntime
from daemon.orchestration.workflow_loader import WorkflowCatalog, builtin_workflow_dir
from daemon.service.pipeline.opening import open_pipeline
from daemon.vcs.worktrees import RunWorktrees
from tests.vcs_support import make_repo

WAIT = 60.0
"""Upper bound for any run in a test (they take well under a second)."""

FAST_RESILIENCE = ResilienceConfig(cache=False, max_retries=0, backoff_initial_seconds=0.0, backoff_max_seconds=0.0)


def builtin_catalog() -> WorkflowCatalog:
    return WorkflowCatalog.load([builtin_workflow_dir()])


def choose(workflow: str, rationale: str = "scripted", **decisions: str) -> dict[str, Any]:
    """An orchestrator answer: ``choose("bug_fix", code_review="INCLUDE")``."""
    return {
        "workflow": workflow,
        "rationale": rationale,
        "stage_decisions": [
            {"stage_id": sid, "decision": verdict, "reason": f"scripted {verdict.lower()}"}
            for sid, verdict in decisions.items()
        ],
    }


def reflected_workflow(name: str, base: str = "bug_fix", **switches: Any) -> str:
    """A shipped workflow's YAML renamed ``name`` with ``switches`` set (``reflection={...}``, ``evaluation={...}``),
    as a user writes it in the repository's ``.ided/workflows/``."""
    data = yaml.safe_load((builtin_workflow_dir() / f"{base}.yaml").read_text(encoding="utf-8"))
    data["metadata"]["name"] = name
    data.update(switches)
    return yaml.safe_dump(data, sort_keys=False)


def answer(
    role: str, status: str = "success", summary: str = "done", *, attempt: int | None = None, **extra: Any
) -> dict[str, Any]:
    """A scripted agent answer for ``role`` (optionally only for one attempt)."""
    entry: dict[str, Any] = {"role": role, "answer": {"status": status, "summary": summary, "evidence": [summary]}}
    if attempt is not None:
        entry["match"] = rf"Attempt: {attempt}\b"
    entry.update(extra)
    return entry


def everyone_succeeds() -> dict[str, Any]:
    return {"role": "*", "answer": {"status": "success", "summary": "done"}, "repeat": True}


def write_script(path: Path, entries: Iterable[Mapping[str, Any]], *, record_tools: str | None = None) -> Path:
    """A replay script; ``record_tools``: a file beside it where each role's offered tools are logged."""
    body: dict[str, Any] = {"responses": list(entries)}
    if record_tools is not None:
        body["record_tools"] = record_tools
    path.write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
    return path


def recorded_tools(path: Path, role: str) -> set[str]:
    """Every tool a ``role`` model was offered, from a script's ``record_tools`` log."""
    found: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry["role"] == role:
            found.update(entry["tools"])
    return found


def stage_intel_tools(workflow: str, stage_id: str, agent_id: str) -> set[str]:
    """The code-intel tools the shipped ``workflow`` gives ``agent_id`` in ``stage_id`` (its ``mcp_tools``)."""
    spec = yaml.safe_load((Path(__file__).parents[1] / "workflows" / f"{workflow}.yaml").read_text(encoding="utf-8"))
    stage = next(s for s in spec["stages"] if s["stage_id"] == stage_id)
    agent = next(a for a in stage["parallel_agents"] if a["agent_id"] == agent_id)
    return set(agent["mcp_tools"])


def replay_config(script: Path, **overrides: Any) -> PipelineConfig:
    return PipelineConfig(replay_script=str(script), resilience=FAST_RESILIENCE, **overrides)


@asynccontextmanager
async def open_runtime(
    state_dir: Path,
    config: PipelineConfig,
    *,
    catalog: WorkflowCatalog | None = None,
    retriever: Retriever | None = None,
    profile: ProjectProfile | None = None,
    models: ModelRegistry | None = None,
    runs: RunsConfig | None = None,
) -> AsyncGenerator[PipelineRuntime]:
    layer = ResilienceLayer(config.resilience)
    registry = models or ModelRegistry.from_config(config, env={}, layer=layer)
    async with PipelineRuntime.open(
        catalog=catalog or builtin_catalog(),
        models=registry,
        state_dir=state_dir,
        config=config,
        retriever=retriever,
        profile=profile,
        runs=runs,
    ) as runtime:
        yield runtime
    registry.close()


def trail(events: Iterable[ExecutionProgress]) -> list[str]:
    """The nodes in the order they started."""
    return [e.node or "" for e in events if e.event is ProgressKind.NODE_STARTED]


def outcomes(events: Iterable[ExecutionProgress]) -> list[tuple[str, str]]:
    """(node, succeeded|failed) for every finished node."""
    return [(e.node or "", e.status) for e in events if e.event is ProgressKind.NODE_FINISHED]


PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"
"""The test command of a scripted run's repository: the real pytest."""

BASKET_ORIGINAL = "def add(a, b):\n    return a + b\n"
"""``src/basket.py`` before a basket run: the task adds ``basket_product``."""
BASKET_BUGGY = (
    BASKET_ORIGINAL + "\n\ndef basket_product(prices, weights):\n    return round(sum(prices) + sum(weights), 2)\n"
)
BASKET_FIXED = BASKET_BUGGY.replace("sum(prices) + sum(weights)", "sum(p * w for p, w in zip(prices, weights))")
BASKET_TEST = (
    "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parents[1] / 'src'))\n"
    "from basket import basket_product\n\n\n"
    "def test_basket_product_weights_each_price():\n    assert basket_product([2.0, 3.0], [1.0, 3.0]) == 11.0\n"
)
"""The test a basket run's test writer writes (``tests/test_basket.py``): red for BUGGY, green for FIXED."""
BASKET_TASK = "Add basket_product: the weighted product of prices and weights"


@dataclass(frozen=True)
class FinishedRun:
    """What a scripted run left: its record, final state, decision log, events and repository."""

    record: Any
    state: Any
    log: list[Any]
    events: list[ExecutionProgress]
    repo: Path


async def run_basket_task(
    tmp_path: Path, script: Iterable[Mapping[str, Any]], *, files: Mapping[str, str] | None = None
) -> FinishedRun:
    """:data:`BASKET_TASK` run to its end in a real git repository holding ``src/basket.py`` (and ``files``), the
    models answering from ``script``, the tests run by the real pytest."""
    repo = make_repo(
        tmp_path / "repo",
        {
            "src/basket.py": BASKET_ORIGINAL,
            "pytest.ini": "[pytest]\n",
            ".gitignore": "__pycache__/\n.pytest_cache/\n",
            **(files or {}),
        },
    )
    config = load_config(
        repo,
        env={"HOME": str(tmp_path / "home")},
        overrides={
            "state_dir": str(tmp_path / "state"),
            "embedding": {"enabled": False},
            "pipeline": {
                "replay_script": str(write_script(tmp_path / "script.yaml", script)),
                "resilience": FAST_RESILIENCE.model_dump(),
            },
            "agents": {"commands": {"test": PYTEST}, "command_timeout_seconds": 120},
        },
    )
    async with open_pipeline(
        config, models_needed=True, env={}, worktrees=RunWorktrees(repo, tmp_path / "runs")
    ) as runtime:
        started = await runtime.start(BASKET_TASK)
        record = await runtime.wait(started.run_id, wait_seconds=WAIT)
        state = await runtime.state(record.run_id)
        log = await runtime.decision_log(record.run_id)
        events = await runtime.events(record.run_id)
    assert state is not None
    return FinishedRun(record, state, list(log), list(events), repo)
