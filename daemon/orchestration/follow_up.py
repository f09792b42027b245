"""Claiming a run for review feedback: which runs take it, which stage answers it.

``claim_follow_up`` checks that the feedback says something and that the run has ended, edited (a
worktree) and is still open for review (neither accepted, rejected nor rolled back), picks the editing
stage the feedback goes to (the last one that committed changes, else the last one that ran), takes the
workspace's edit lock and records the run ``running`` again (``follow_ups`` + 1). Every refusal is a
``PipelineError`` and leaves the run as it was. The attempt itself runs through the follow-up graph
(``RunEngine.follow_up``).
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass

from daemon.core.run_models import ExecutionPlan, RunRecord, RunStatus
from daemon.errors import PipelineError
from daemon.orchestration.agents import EDITING_STAGE_TYPES
from daemon.orchestration.agents.run_workspace import RunWorkspace
from daemon.orchestration.run_store import RunStore, host_name
from daemon.orchestration.state import ExecutionState

__all__ = ["ClaimedFollowUp", "claim_follow_up", "last_editing_stage"]


@dataclass(frozen=True, kw_only=True)
class ClaimedFollowUp:
    record: RunRecord
    """The run, recorded ``running`` again."""
    plan: ExecutionPlan
    stage_id: str
    """The editing stage the feedback goes to."""


async def claim_follow_up(
    record: RunRecord,
    feedback: str,
    *,
    state: ExecutionState | None,
    in_flight: bool,
    store: RunStore,
    workspace: RunWorkspace,
) -> ClaimedFollowUp:
    """``record`` claimed for ``feedback`` (``state``: its last checkpointed state; ``in_flight``: a task of
    this process still executes it); the edit lock is held on return."""
    run_id = record.run_id
    if not feedback.strip():
        raise PipelineError("feedback is empty: say what to change")
    if not record.status.finished or in_flight:
        raise PipelineError(f"run {run_id} is {record.status.value}; feedback is answered once it has ended")
    plan = record.plan
    if record.changes is None or plan is None or not workspace.can_edit:
        raise PipelineError(f"run {run_id} made no edits (a read-only run); there is nothing to follow up")
    stage_id = last_editing_stage(plan, state)
    if stage_id is None:
        raise PipelineError(f"run {run_id} has no editing stage that ran; there is nothing to follow up")
    await workspace.acquire(run_id)
    try:
        branch = await asyncio.to_thread(workspace.review_state, run_id)
        if branch != "open":
            raise PipelineError(f"run {run_id} was already {branch.replace('_', ' ')}; start a new run instead")
        await store.clear_cancel(run_id)
        updated = await store.update(
            run_id,
            status=RunStatus.RUNNING,
            pid=os.getpid(),
            host=host_name(),
            follow_ups=record.follow_ups + 1,
            stop=None,
        )
    except BaseException:
        await workspace.release(run_id)
        raise
    return ClaimedFollowUp(record=updated, plan=plan, stage_id=stage_id)


def last_editing_stage(plan: ExecutionPlan, state: ExecutionState | None) -> str | None:
    """The editing stage feedback goes to: the last one that committed changes, else the last one that ran."""
    if state is None:
        return None
    ran = [
        (any(r.commit for r in results), results[-1].finished_at, stage.stage_id)
        for stage in plan.stages
        if stage.type in EDITING_STAGE_TYPES and (results := state.stage_results.get(stage.stage_id))
    ]
    return max(ran)[2] if ran else None
