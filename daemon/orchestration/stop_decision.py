"""The explicit stop decision every run ends with. Reaching the graph's end is never "success" by itself.

- ``abort`` reached -> ``aborted``, with the routing condition that led there;
- ``done`` reached -> ``success`` only when every planned stage that ran ended with a successful
  last attempt, every required stage ran, and at least one stage ran; otherwise ``failure`` naming
  the stages at fault;
- cancelled -> ``cancelled``; an error inside the runtime -> ``failure`` with the error;
- with an evaluator, its score is added to the reason of a run that reached ``done``, and a score under
  ``evaluation.pass_score`` turns ``success`` into ``failure``.

Evidence references point into the run: ``run:<id>/stage:<stage>/attempt:<n>`` for a stage result
and ``run:<id>/route:<n>`` for the n-th routing decision (1-based).
"""

from __future__ import annotations

from daemon.core.run_models import ExecutionPlan, StopDecision, StopStatus
from daemon.orchestration.state import ExecutionState

__all__ = ["cancelled_stop", "decide_stop", "error_stop"]


def _stage_ref(run_id: str, stage_id: str, attempt: int) -> str:
    return f"run:{run_id}/stage:{stage_id}/attempt:{attempt}"


def decide_stop(plan: ExecutionPlan, state: ExecutionState) -> StopDecision:
    """Judge a finished graph run; the evaluator's score, when one was given, is said with the verdict, and a score
    under ``evaluation.pass_score`` fails a run that would otherwise succeed."""
    stop = _judge(plan, state)
    evaluation = state.evaluation
    if evaluation is None or stop.status not in (StopStatus.SUCCESS, StopStatus.FAILURE):
        return stop
    if evaluation.score is None:
        return stop.model_copy(update={"reason": f"{stop.reason}; evaluation skipped: {evaluation.note}"})
    said = f"evaluator scored {evaluation.score:g}/10: {evaluation.summary}"
    floor = plan.evaluation.pass_score
    if stop.status is StopStatus.SUCCESS and floor is not None and evaluation.score < floor:
        return stop.model_copy(
            update={
                "status": StopStatus.FAILURE,
                "reason": f"every stage succeeded, but the {said} (under evaluation.pass_score {floor:g})",
            }
        )
    return stop.model_copy(update={"reason": f"{stop.reason}; {said}"})


def _judge(plan: ExecutionPlan, state: ExecutionState) -> StopDecision:
    run = state.run_id
    last = {sid: state.last_result(sid) for sid in plan.stage_ids}
    ran = {sid: r for sid, r in last.items() if r is not None}
    failed = [sid for sid, r in ran.items() if r.failed]
    refs = tuple(_stage_ref(run, sid, r.attempt) for sid, r in ran.items())
    if state.terminal == "abort":
        route_ref = (f"run:{run}/route:{len(state.routes)}",) if state.routes else ()
        failing = tuple(_stage_ref(run, sid, ran[sid].attempt) for sid in failed)
        return StopDecision(
            status=StopStatus.ABORTED,
            reason=f"aborted: {state.abort_reason or 'the routing reached ABORT'}",
            evidence_refs=failing + route_ref,
        )
    if state.terminal != "done":
        return StopDecision(
            status=StopStatus.FAILURE,
            reason="the graph stopped without reaching done or abort",
            evidence_refs=refs,
        )
    if not ran:
        return StopDecision(status=StopStatus.FAILURE, reason="reached done without running any stage")
    if failed:
        details = "; ".join(f"{sid} (attempt {ran[sid].attempt}): {ran[sid].summary}" for sid in failed)
        return StopDecision(
            status=StopStatus.FAILURE,
            reason=f"reached done, but the last attempt of {', '.join(failed)} failed: {details}",
            evidence_refs=tuple(_stage_ref(run, sid, ran[sid].attempt) for sid in failed),
        )
    missing = [s.stage_id for s in plan.stages if s.required and s.stage_id not in ran]
    if missing:
        return StopDecision(
            status=StopStatus.FAILURE,
            reason=f"reached done without running required stage(s) {', '.join(missing)}",
            evidence_refs=refs,
        )
    attempts = ", ".join(f"{sid} ({r.attempt} attempt{'s' if r.attempt > 1 else ''})" for sid, r in ran.items())
    return StopDecision(
        status=StopStatus.SUCCESS,
        reason=f"every stage that ran ended in success: {attempts}",
        evidence_refs=refs,
    )


def cancelled_stop(reason: str = "cancelled on request; no further node was started") -> StopDecision:
    return StopDecision(status=StopStatus.CANCELLED, reason=reason)


def error_stop(message: str) -> StopDecision:
    return StopDecision(status=StopStatus.FAILURE, reason=f"the run failed with an error: {message}")
