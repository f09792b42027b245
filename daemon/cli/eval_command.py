"""``ided eval``: run the golden retrieval set and diff it against the frozen baseline (docs/retrieval.md).

Each fixture workspace is copied to a temporary folder, indexed (lexical + dense) with its own
state, and the retrieval agent runs every task over it (no language servers, no user config: the
run is reproducible). One JSON artifact per task is written to ``--out``. Exit status 1 when the
run regresses against the baseline (the report says what), 0 otherwise.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from daemon.cli.context import CliState
from daemon.config import load_config
from daemon.errors import ConfigError, DaemonError
from daemon.orchestration.llm_providers import HOW_TO_CONFIGURE, ModelRegistry
from daemon.orchestration.resilience import ResilienceLayer
from daemon.orchestration.workflow_schema import RetrievalStrategyConfig
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
from daemon.service.retrieval_sources import build_retrieval_agent
from daemon.service.workspace_index import WorkspaceIndex

__all__ = ["eval_command", "run_golden"]

logger = logging.getLogger(__name__)

ANSWER_ROLE = "answer"
GOLDEN_DEFAULT = Path("tests/golden/retrieval_golden.yaml")
HARNESS_DEFAULT = Path("tests/golden/harness.yaml")


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


class AnswerMode(StrEnum):
    EXTRACTIVE = "extractive"
    MODEL = "model"


async def _run_with_answers(
    golden: Path, harness: HarnessConfig, state: CliState, mode: AnswerMode
) -> list[TaskArtifact]:
    if mode is AnswerMode.EXTRACTIVE:
        return await run_golden(golden, harness, state.overrides)
    workspace = state.config()
    layer = ResilienceLayer(workspace.pipeline.resilience, cache_path=None)
    try:
        models = ModelRegistry.from_config(
            workspace.pipeline, env=os.environ, layer=layer, workspace=workspace.workspace_path
        )
        caller = models.caller(ANSWER_ROLE)
        if caller is None:
            raise ConfigError(f"--answers model: no chat model serves the '{ANSWER_ROLE}' role; {HOW_TO_CONFIGURE}")
        return await run_golden(golden, harness, state.overrides, model_answerer(caller))
    finally:
        layer.close()


def eval_command(
    ctx: typer.Context,
    golden: Annotated[Path, typer.Option("--golden", help="The golden set (YAML).")] = GOLDEN_DEFAULT,
    harness: Annotated[Path, typer.Option("--harness", help="The harness config (YAML).")] = HARNESS_DEFAULT,
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder for the per-task JSON artifacts (default: a temp folder).")
    ] = None,
    update_baseline: Annotated[
        bool,
        typer.Option(
            "--update-baseline",
            help="Write this run as the new baseline; needs a higher baseline_version and a new justification "
            "in the harness config.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON on stdout.")] = False,
    answers: Annotated[
        AnswerMode,
        typer.Option(
            "--answers",
            help="Who writes each task's answer: 'extractive' (no model: a claim per top piece) or 'model' (the "
            "chat model configured for this workspace, role 'answer' -> agents -> default; pipeline.replay_script "
            "scripts it). Every claim is checked against the workspace text either way.",
        ),
    ] = AnswerMode.EXTRACTIVE,
) -> None:
    """Run the golden retrieval set and diff it against the frozen baseline."""
    state = ctx.obj
    assert isinstance(state, CliState)
    try:
        config = load_yaml_model(harness, HarnessConfig)
        baseline_path = harness.parent / config.baseline
        artifacts = asyncio.run(_run_with_answers(golden, config, state, answers))
    except (OSError, ValueError, DaemonError) as exc:
        state.fail(f"ided eval: {exc}")
    folder = out or Path(tempfile.mkdtemp(prefix="ided-eval-artifacts-"))
    folder.mkdir(parents=True, exist_ok=True)
    for art in artifacts:
        (folder / f"{art.task_id}.json").write_text(art.model_dump_json(indent=2) + "\n", encoding="utf-8")
    if update_baseline:
        old = Baseline.model_validate_json(baseline_path.read_text()) if baseline_path.is_file() else None
        if old is not None and (
            config.baseline_version <= old.version or config.baseline_justification == old.justification
        ):
            state.fail(
                f"refusing to change the baseline (version {old.version}): raise baseline_version and write a new "
                f"baseline_justification in {harness} first"
            )
        baseline_path.write_text(make_baseline(artifacts, config).model_dump_json(indent=2) + "\n", encoding="utf-8")
        state.err.print(f"baseline v{config.baseline_version} written to {baseline_path}")
        return
    baseline = Baseline.model_validate_json(baseline_path.read_text())
    report = check(artifacts, baseline, config)
    if as_json:
        print(report.model_dump_json(indent=2))
    else:
        for item in report.checks:
            art = next(a for a in artifacts if a.task_id == item.task_id)
            mark = "ok  " if item.ok else "FAIL"
            state.err.print(
                f"{mark} {item.task_id}: recall@{config.k} {art.recall_at_k:.2f} MRR {art.mrr:.2f} "
                f"coverage {art.citation_coverage:.2f} ungrounded {art.ungrounded_rate:.2f} "
                f"tokens {art.tokens}/{art.token_budget} {art.seconds:.2f}s"
                + "".join(f"\n     - {p}" for p in item.problems)
            )
        for problem in report.problems:
            state.err.print(f"FAIL {problem}")
        state.err.print(
            f"mean recall@{config.k} {report.mean_recall_at_k:.3f}, mean MRR {report.mean_mrr:.3f}; "
            f"artifacts in {folder}; {'PASS' if report.ok else 'FAIL'}"
        )
    if not report.ok:
        raise typer.Exit(1)
