"""The golden harness: run the golden retrieval tasks, write one JSON artifact per task, diff against a baseline.

Files (``tests/golden/``): the golden set (tasks over fixture workspaces with the chunks that must
be retrieved, ``path::qualified name``), the harness config (limits and the justification of the
current baseline), and the frozen, versioned baseline. ``ided eval`` runs it; a run fails when
recall@k, MRR or citation coverage fall below the baseline, the ungrounded-claim rate is above
its limit, the artifact schema differs from the baseline's, a task exceeds its time or token
budget, or the baseline's version/justification does not match the harness config's.

The answer (``daemon.retrieval.answers``) is extractive by default: one claim per top context
piece ("<symbol> (<cite>): <its first line>") citing that piece. ``ided eval --answers model`` has
the configured chat model write it as JSON claims, each citing piece ids and quoting its support;
CI runs that with a scripted model. Either way a claim is grounded when every piece it cites is in
the context and its quote is in a cited file at the cited lines now.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, Field

from daemon.core.frozen_model import FrozenModel
from daemon.core.models import content_hash
from daemon.retrieval.agent import RetrievalAgent
from daemon.retrieval.answers import Answerer, Claim, extractive_answer
from daemon.retrieval.models import (
    CandidateRef,
    ContextPiece,
    FailureContext,
    RetrievalEvent,
    RetrievalMode,
    RetrievalRequest,
    StageHints,
    WorkflowKind,
)
from daemon.retrieval.ports import StrategyLike

__all__ = [
    "ARTIFACT_VERSION",
    "Baseline",
    "BaselineTask",
    "Claim",
    "EvalReport",
    "GoldenSet",
    "GoldenTask",
    "HarnessConfig",
    "TaskArtifact",
    "TaskCheck",
    "artifact_schema_hash",
    "check",
    "extractive_answer",
    "inputs_hash",
    "load_yaml_model",
    "make_baseline",
    "run_task",
]


ARTIFACT_VERSION = 1

M = TypeVar("M", bound=BaseModel)


class GoldenTask(FrozenModel):
    id: str
    workspace: str = Field(description="Fixture workspace folder name (under the golden set's workspaces dir).")
    workflow_type: str = Field(default="code", description="code, document or other.")
    task: str
    stage: StageHints
    failure: FailureContext | None = Field(default=None, description="Set: adaptive mode; unset: upfront.")
    expected: tuple[str, ...] = Field(min_length=1, description="path::qualified name (code) or path::section path.")


class GoldenSet(FrozenModel):
    version: int
    workspaces: str = Field(description="Folder of the fixture workspaces, relative to the golden set file.")
    tasks: tuple[GoldenTask, ...]


class HarnessConfig(FrozenModel):
    baseline: str = Field(description="Baseline file, relative to the harness config.")
    k: int = Field(default=10, ge=1)
    max_ungrounded_rate: float = Field(default=0.0, ge=0, le=1)
    max_seconds_per_task: float = Field(default=30.0, gt=0)
    baseline_version: int = Field(ge=1, description="The version the baseline must have.")
    baseline_justification: str = Field(min_length=20, description="Why the baseline is what it is (required).")


class TaskArtifact(FrozenModel):
    """One task's run: the stable artifact schema (``artifact_schema_hash``)."""

    artifact_version: int = ARTIFACT_VERSION
    run_id: str
    task_id: str
    inputs_hash: str
    candidates: tuple[CandidateRef, ...]
    context: tuple[ContextPiece, ...]
    citations: dict[str, str] = Field(description="Piece id -> citation (path:lines (symbol) or URL).")
    answer: str
    claims: tuple[Claim, ...]
    events: tuple[RetrievalEvent, ...]
    ranked: tuple[str, ...] = Field(description="The context's keys (path::name), best first.")
    recall_at_k: float
    mrr: float
    citation_coverage: float
    ungrounded_rate: float
    tokens: int
    token_budget: int
    seconds: float


class BaselineTask(FrozenModel):
    recall_at_k: float
    mrr: float
    citation_coverage: float


class Baseline(FrozenModel):
    version: int
    justification: str
    schema_hash: str
    k: int
    tasks: dict[str, BaselineTask]


class TaskCheck(FrozenModel):
    task_id: str
    ok: bool
    problems: tuple[str, ...] = ()


class EvalReport(FrozenModel):
    ok: bool
    checks: tuple[TaskCheck, ...]
    problems: tuple[str, ...] = Field(default=(), description="Problems of the run as a whole (schema, baseline).")
    mean_recall_at_k: float
    mean_mrr: float


def artifact_schema_hash() -> str:
    return content_hash(json.dumps(TaskArtifact.model_json_schema(), sort_keys=True))


def load_yaml_model(path: Path, model: type[M]) -> M:
    return model.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


def _keys(piece: ContextPiece) -> list[str]:
    a = piece.attribution
    names = [n for n in ([*(a.symbol or "").split(" + "), a.section_path or ""]) if n]
    return [f"{a.path}::{n}" for n in names] if a.path else []


async def run_task(
    task: GoldenTask,
    agent: RetrievalAgent,
    strategy: StrategyLike,
    *,
    root: Path,
    k: int,
    inputs: str,
    answerer: Answerer = extractive_answer,
) -> TaskArtifact:
    """Run one golden task with ``agent`` over the workspace at ``root``; ``answerer`` writes the answer."""
    started = time.perf_counter()
    mode = RetrievalMode.ADAPTIVE if task.failure is not None else RetrievalMode.UPFRONT
    request = RetrievalRequest(
        task=task.task,
        workflow_kind=WorkflowKind.from_workflow_type(task.workflow_type),
        stage=task.stage,
        mode=mode,
        failure=task.failure,
    )
    result = await agent.retrieve(request, strategy)
    ranked: list[str] = []
    for piece in result.context:
        ranked.extend(key for key in _keys(piece) if key not in ranked)
    top = ranked[:k]
    expected = set(task.expected)
    recall = len(expected & set(top)) / len(expected)
    mrr = next((1.0 / (i + 1) for i, key in enumerate(top) if key in expected), 0.0)
    answer, claims = await answerer(task.task, root, result.context)
    ids = {p.id for p in result.context}
    covered = sum(1 for c in claims if c.citations and set(c.citations) <= ids)
    return TaskArtifact(
        run_id=uuid.uuid4().hex[:12],
        task_id=task.id,
        inputs_hash=inputs,
        candidates=result.candidates,
        context=result.context,
        citations={p.id: p.attribution.cite() for p in result.context},
        answer=answer,
        claims=tuple(claims),
        events=result.events,
        ranked=tuple(ranked),
        recall_at_k=round(recall, 4),
        mrr=round(mrr, 4),
        citation_coverage=round(covered / len(claims), 4) if claims else 0.0,
        ungrounded_rate=round(sum(not c.grounded for c in claims) / len(claims), 4) if claims else 0.0,
        tokens=result.tokens,
        token_budget=result.token_budget,
        seconds=round(time.perf_counter() - started, 3),
    )


def inputs_hash(task: GoldenTask, root: Path, settings: dict[str, Any]) -> str:
    """Hash of the task, the workspace's files and the retrieval settings: equal inputs, equal hash."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)
    digest = [content_hash(f"{p.relative_to(root).as_posix()}\x00") + content_hash(p.read_bytes()) for p in files]
    payload = json.dumps({"task": task.model_dump(mode="json"), "files": digest, "settings": settings}, sort_keys=True)
    return content_hash(payload)


def check(artifacts: Sequence[TaskArtifact], baseline: Baseline, config: HarnessConfig) -> EvalReport:
    """Diff the run against the baseline and the harness limits."""
    problems: list[str] = []
    if baseline.version != config.baseline_version:
        problems.append(
            f"baseline version {baseline.version} != harness baseline_version {config.baseline_version}: "
            "a baseline change needs its version and a written justification in the harness config"
        )
    if baseline.justification != config.baseline_justification:
        problems.append("the baseline's justification differs from the harness config's baseline_justification")
    if baseline.schema_hash != artifact_schema_hash():
        problems.append("the artifact schema changed (schema hash differs from the baseline's)")
    if baseline.k != config.k:
        problems.append(f"the baseline was measured at k={baseline.k}, the harness asks k={config.k}")
    checks: list[TaskCheck] = []
    for art in artifacts:
        found: list[str] = []
        base = baseline.tasks.get(art.task_id)
        if base is None:
            found.append("task not in the baseline")
        else:
            for name, now, then in (
                ("recall@k", art.recall_at_k, base.recall_at_k),
                ("MRR", art.mrr, base.mrr),
                ("citation coverage", art.citation_coverage, base.citation_coverage),
            ):
                if now + 1e-9 < then:
                    found.append(f"{name} fell from {then:.3f} to {now:.3f}")
        if art.ungrounded_rate > config.max_ungrounded_rate:
            found.append(f"ungrounded-claim rate {art.ungrounded_rate:.2f} > {config.max_ungrounded_rate:.2f}")
        if art.tokens > art.token_budget:
            found.append(f"{art.tokens} tokens exceed the budget of {art.token_budget}")
        if art.seconds > config.max_seconds_per_task:
            found.append(f"took {art.seconds:.1f} s > {config.max_seconds_per_task:g} s")
        checks.append(TaskCheck(task_id=art.task_id, ok=not found, problems=tuple(found)))
    missing = set(baseline.tasks) - {a.task_id for a in artifacts}
    problems.extend(f"baseline task {t} was not run" for t in sorted(missing))
    n = max(1, len(artifacts))
    return EvalReport(
        ok=not problems and all(c.ok for c in checks),
        checks=tuple(checks),
        problems=tuple(problems),
        mean_recall_at_k=round(sum(a.recall_at_k for a in artifacts) / n, 4),
        mean_mrr=round(sum(a.mrr for a in artifacts) / n, 4),
    )


def make_baseline(artifacts: Sequence[TaskArtifact], config: HarnessConfig) -> Baseline:
    """A new baseline from this run, stamped with the harness config's version and justification."""
    return Baseline(
        version=config.baseline_version,
        justification=config.baseline_justification,
        schema_hash=artifact_schema_hash(),
        k=config.k,
        tasks={
            a.task_id: BaselineTask(recall_at_k=a.recall_at_k, mrr=a.mrr, citation_coverage=a.citation_coverage)
            for a in artifacts
        },
    )
