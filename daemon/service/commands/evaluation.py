"""The work behind ``ided eval``: index each fixture workspace of a golden set, run its tasks, check them.

The command (``daemon.cli.eval_command``) imports this only when it runs, so that every other
``ided`` command starts without the retrieval and chat-model stacks; it reads the harness's models
(``Baseline``, ``HarnessConfig``, ...) from here too.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from daemon.config import Config, load_config
from daemon.core.workflow_schema import RetrievalStrategyConfig
from daemon.errors import ConfigError
from daemon.index.workspace_index import WorkspaceIndex
from daemon.retrieval.answers import Answerer, extractive_answer, model_answerer
from daemon.retrieval.harness import (
    Baseline,
    GoldenSet,
    HarnessConfig,
    TaskArtifact,
    check,
    inputs_hash,
    load_yaml_model,
    make_baseline,
    run_task,
)
from daemon.service.pipeline.retrieval_sources import build_retrieval_agent

__all__ = [
    "ANSWER_ROLE",
    "Baseline",
    "HarnessConfig",
    "check",
    "load_yaml_model",
    "make_baseline",
    "run_golden",
    "run_with_answers",
]

ANSWER_ROLE = "answer"


async def _run_workspace(
    golden: GoldenSet,
    name: str,
    source: Path,
    scratch: Path,
    k: int,
    overrides: dict[str, Any],
    answerer: Answerer,
) -> list[TaskArtifact]:
    root = scratch / name
    shutil.copytree(source, root)
    config = load_config(
        root,
        env={"HOME": str(scratch / "home")},
        overrides={"state_dir": str(scratch / f"{name}.state"), **overrides},
        user_file=scratch / "no-user-config.toml",
    )
    artifacts: list[TaskArtifact] = []
    index = await asyncio.to_thread(WorkspaceIndex.open, config)
    try:
        await asyncio.to_thread(index.index)
        await asyncio.to_thread(index.embed)
        agent = build_retrieval_agent(config, index=index)
        settings = config.retrieval.model_dump(mode="json")
        for task in (t for t in golden.tasks if t.workspace == name):
            inputs = await asyncio.to_thread(inputs_hash, task, source, settings)
            artifacts.append(
                await run_task(task, agent, RetrievalStrategyConfig(), root=root, k=k, inputs=inputs, answerer=answerer)
            )
    finally:
        await asyncio.to_thread(index.close)
    return artifacts


async def run_golden(
    golden_path: Path,
    harness: HarnessConfig,
    overrides: dict[str, Any],
    answerer: Answerer = extractive_answer,
) -> list[TaskArtifact]:
    """Run every task of the golden set at ``golden_path`` (workspaces indexed in a scratch folder)."""
    golden = load_yaml_model(golden_path, GoldenSet)
    workspaces = (golden_path.parent / golden.workspaces).resolve()
    artifacts: list[TaskArtifact] = []
    with tempfile.TemporaryDirectory(prefix="ided-eval-") as tmp:
        for name in dict.fromkeys(t.workspace for t in golden.tasks):
            artifacts.extend(
                await _run_workspace(golden, name, workspaces / name, Path(tmp), harness.k, overrides, answerer)
            )
    order = {t.id: i for i, t in enumerate(golden.tasks)}
    return sorted(artifacts, key=lambda a: order[a.task_id])


async def run_with_answers(
    golden: Path,
    harness: HarnessConfig,
    overrides: dict[str, Any],
    *,
    model_answers: bool,
    workspace_config: Callable[[], Config],
) -> list[TaskArtifact]:
    """``run_golden`` with extractive answers, or with the chat model of ``workspace_config()`` writing them."""
    if not model_answers:
        return await run_golden(golden, harness, overrides)
    # the chat-model stack (LangChain) is imported only for model answers: every ided command would pay it
    from daemon.core.run_models import HOW_TO_CONFIGURE
    from daemon.orchestration.llm_providers import ModelRegistry
    from daemon.orchestration.resilience import ResilienceLayer

    workspace = workspace_config()
    layer = ResilienceLayer(workspace.pipeline.resilience, cache_path=None)
    try:
        models = ModelRegistry.from_config(
            workspace.pipeline, env=os.environ, layer=layer, workspace=workspace.workspace_path
        )
        caller = models.caller(ANSWER_ROLE)
        if caller is None:
            raise ConfigError(f"--answers model: no chat model serves the '{ANSWER_ROLE}' role; {HOW_TO_CONFIGURE}")
        return await run_golden(golden, harness, overrides, model_answerer(caller))
    finally:
        layer.close()
