"""Preparing a run: select a workflow, assemble the plan, record the run ``planned`` and log why.

``prepare_run`` asks the orchestrator (``Orchestrator.select``: the deterministic rules, the model when
one serves the orchestrator role), assembles the ``ExecutionPlan`` and writes the record with the
selection, every stage decision and the plan to the decision log; nothing executes. ``announce`` says
the plan and the orchestrator's reasoning as ``plan`` and ``thought`` events (a dry run, a run's start).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol

from daemon.core.run_models import Attachment, DecisionKind, RunMode, RunRecord, RunStatus, new_run_id, utc_now
from daemon.orchestration.llm_providers import ORCHESTRATOR_ROLE, ModelRegistry
from daemon.orchestration.plan import assemble_plan
from daemon.orchestration.project_profile import ProjectProfile, ProjectProfiler
from daemon.orchestration.reporter import RunReporter
from daemon.orchestration.run_store import RunStore
from daemon.orchestration.runtime_settings import RuntimeSettings
from daemon.orchestration.selection import Orchestrator
from daemon.orchestration.workflow_loader import WorkflowCatalog

__all__ = ["PreparationParts", "announce", "prepare_run"]


class PreparationParts(Protocol):
    """What preparing a run reads (a ``PipelineRuntime``)."""

    store: RunStore
    models: ModelRegistry
    catalog: WorkflowCatalog
    profile: ProjectProfile | ProjectProfiler | None
    settings: RuntimeSettings


async def prepare_run(
    parts: PreparationParts,
    request: str,
    *,
    workflow: str | None = None,
    mode: RunMode = "code",
    include_uncommitted: bool | None = None,
    attachments: Sequence[Attachment] = (),
    run_id: str | None = None,
) -> RunRecord:
    """Select a workflow, assemble the plan and record the run as ``planned`` (nothing executes).

    ``include_uncommitted``: the run's branch starts from HEAD plus the user's uncommitted changes
    (None: ``settings.include_uncommitted``, from ``vcs.include_uncommitted``). ``PipelineRuntime.prepare``
    is this function, with the runtime as ``parts``."""
    store, models, catalog, settings = parts.store, parts.models, parts.catalog, parts.settings
    orchestrator = Orchestrator(models.caller(ORCHESTRATOR_ROLE), retries=settings.selection_retries)
    profile = parts.profile
    if isinstance(profile, ProjectProfiler):
        profile = await asyncio.to_thread(profile.current)
    selection = await orchestrator.select(request, catalog, profile, workflow=workflow)
    plan = assemble_plan(catalog.get(selection.workflow), selection.stage_decisions, request)
    now = utc_now()
    record = await store.create(
        RunRecord(
            run_id=run_id or new_run_id(),
            status=RunStatus.PLANNED,
            request=request,
            workflow=selection.workflow,
            created_at=now,
            updated_at=now,
            selection=selection,
            plan=plan,
            mode=mode,
            include_uncommitted=settings.include_uncommitted if include_uncommitted is None else include_uncommitted,
            attachments=tuple(attachments),
        )
    )
    rid = record.run_id
    await store.log(
        rid,
        DecisionKind.SELECTION,
        f"workflow {selection.workflow} via {selection.path.value}: {selection.rationale}",
        selection.model_dump(mode="json"),
    )
    for d in selection.stage_decisions:
        verdict = "INCLUDE" if d.include else "SKIP"
        await store.log(
            rid,
            DecisionKind.STAGE_DECISION,
            f"{d.stage_id}: {verdict} ({d.source.value}): {d.reason}",
            d.model_dump(),
        )
    await store.log(
        rid,
        DecisionKind.PLAN,
        f"{len(plan.stages)} stage(s) planned, {len(plan.skipped)} skipped; entry {plan.entry}",
        {
            "routing": {k: v.model_dump() for k, v in plan.routing.items()},
            "skipped": [s.stage_id for s in plan.skipped],
        },
    )
    return record


async def announce(record: RunRecord, reporter: RunReporter) -> None:
    """The plan and the orchestrator's reasoning as ``plan`` and ``thought`` events."""
    await reporter.emit_plan()
    selection = record.selection
    if selection is None:
        return
    await reporter.thought(f"Workflow {selection.workflow} ({selection.path.value}): {selection.rationale}")
    for d in selection.stage_decisions:
        await reporter.thought(f"{d.stage_id}: {'include' if d.include else 'skip'} ({d.source.value}): {d.reason}")
