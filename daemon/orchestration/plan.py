"""Plan assembly: workflow + stage decisions -> execution plan. A pure function, nothing else.

The plan holds the planned stages (with their task context and token budget), the skipped stages
(with the reason), a routing table over planned stages only, the workflow's retrieval strategy
config passed through unchanged (the hand-off to the retrieval layer), and the workflow's notes:
fields written in the specification's spelling and what they became, or why they are only recorded.
The workflow's reflector and evaluator switches go into the plan too, the reflector's stages resolved to
the planned stages it critiques (``reflection.stages``, else the planned implementation, test writing
and documentation stages).

Skipped stages are routed around: a route into a skipped stage follows that stage's
``next_stage_on_success`` until it reaches a planned stage, ``DONE`` or ``ABORT`` (a chain of skipped
stages that loops ends at ``DONE``). A retry target that is skipped becomes the failing stage itself.
Required stages are always planned, whatever the decisions say.
"""

from __future__ import annotations

from collections.abc import Sequence

from daemon.core.run_models import ExecutionPlan, PlannedStage, SkippedStage, StageRoute
from daemon.core.selection_models import StageDecision
from daemon.core.workflow_schema import (
    ABORT,
    DONE,
    ReflectionConfig,
    RetrievalHint,
    Stage,
    StageType,
    Workflow,
)

__all__ = ["assemble_plan"]


def _resolve(target: str, workflow: Workflow, planned: set[str]) -> str:
    seen: set[str] = set()
    while target not in (DONE, ABORT) and target not in planned:
        if target in seen:
            return DONE
        seen.add(target)
        target = workflow.stage(target).routing.next_stage_on_success
    return target


def _task_context(stage: Stage, request: str, reason: str, hint: RetrievalHint) -> str:
    lines = [
        f"Request: {request.strip()}",
        f"Stage: {stage.name} ({stage.type.value})" + (f" - {stage.description.strip()}" if stage.description else ""),
        f"Why this stage runs: {reason}",
    ]
    if stage.retrieval_guidance:
        lines.append(f"Context it needs: {stage.retrieval_guidance.strip()}")
    if hint.focus_on:
        lines.append("Focus on: " + "; ".join(hint.focus_on))
    if hint.avoid:
        lines.append("Avoid: " + "; ".join(hint.avoid))
    if stage.failure_criteria:
        lines.append("The stage fails when: " + "; ".join(stage.failure_criteria))
    return "\n".join(lines)


def assemble_plan(workflow: Workflow, decisions: Sequence[StageDecision], request: str) -> ExecutionPlan:
    """The execution plan of ``workflow`` for ``request`` under ``decisions`` (pure, deterministic)."""
    by_id = {d.stage_id: d for d in decisions}
    strategy = workflow.retrieval_strategy_config
    planned_ids: set[str] = set()
    skipped: list[SkippedStage] = []
    for stage in workflow.stages:
        decision = by_id.get(stage.stage_id)
        if stage.required or (decision is not None and decision.include):
            planned_ids.add(stage.stage_id)
        else:
            reason = decision.reason if decision is not None else "no decision was made for this optional stage"
            skipped.append(SkippedStage(stage_id=stage.stage_id, name=stage.name, reason=reason))
    stages: list[PlannedStage] = []
    routing: dict[str, StageRoute] = {}
    for stage in workflow.stages:
        if stage.stage_id not in planned_ids:
            continue
        decision = by_id.get(stage.stage_id)
        reason = decision.reason if decision is not None else "required stage"
        hint = strategy.retrieval_hints.get(stage.stage_id) or RetrievalHint(token_budget=strategy.default_token_budget)
        stages.append(
            PlannedStage(
                stage_id=stage.stage_id,
                name=stage.name,
                type=stage.type,
                required=stage.required,
                agents=stage.parallel_agents,
                failure_aggregation=stage.parallel_config.failure_aggregation,
                max_attempts=stage.max_attempts,
                failure_criteria=stage.failure_criteria,
                task_context=_task_context(stage, request, reason, hint),
                token_budget=hint.token_budget,
                retrieval_hint=hint,
                decision_reason=reason,
            )
        )
        retry = stage.routing.retry_stage or stage.stage_id
        routing[stage.stage_id] = StageRoute(
            on_success=_resolve(stage.routing.next_stage_on_success, workflow, planned_ids),
            on_failure=_resolve(stage.routing.next_stage_on_failure, workflow, planned_ids),
            retry=retry if retry in planned_ids else stage.stage_id,
        )
    return ExecutionPlan(
        workflow=workflow.name,
        workflow_version=workflow.metadata.version,
        workflow_type=workflow.metadata.workflow_type,
        request=request,
        entry=_resolve(workflow.entry_stage, workflow, planned_ids),
        stages=tuple(stages),
        skipped=tuple(skipped),
        routing=routing,
        retrieval_strategy=strategy,
        notes=workflow.notes,
        reflection=_reflection(workflow, [s.stage_id for s in stages]),
        evaluation=workflow.evaluation,
    )


REFLECTED_BY_DEFAULT = frozenset({StageType.IMPLEMENTATION, StageType.TEST_WRITING, StageType.DOCUMENTATION})
"""The stage types the reflector critiques when the workflow's ``reflection.stages`` is empty."""


def _reflection(workflow: Workflow, planned: Sequence[str]) -> ReflectionConfig:
    """The workflow's reflection with its stages resolved: the named (or default) stages that are planned."""
    config = workflow.reflection
    named = set(config.stages) or {s.stage_id for s in workflow.stages if s.type in REFLECTED_BY_DEFAULT}
    return config.model_copy(update={"stages": tuple(sid for sid in planned if sid in named)})
