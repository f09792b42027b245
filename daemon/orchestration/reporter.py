"""One run's reporter: turns what the graph's nodes do into progress events and decision-log entries.

Every event goes to the in-process bus (live subscribers) and to the run store (fronts in other
processes, ``ided runs show ID --events``). Sequence numbers continue across a resume.
"""

from __future__ import annotations

import logging
from typing import Any

from daemon.orchestration.plan import ExecutionPlan
from daemon.orchestration.progress import ExecutionProgress, ProgressBus, ProgressKind
from daemon.orchestration.routing import ABORT_NODE, ADAPTIVE_NODE, DONE_NODE, RouteDecision, RouteOutcome
from daemon.orchestration.run_store import DecisionKind, RunStore
from daemon.orchestration.state import ExecutionState, StageResult
from daemon.orchestration.stop_decision import StopDecision, utc_now

__all__ = ["RunReporter"]

logger = logging.getLogger(__name__)


class RunReporter:
    def __init__(self, *, run_id: str, plan: ExecutionPlan, bus: ProgressBus, store: RunStore, seq: int = 0) -> None:
        self.run_id = run_id
        self.plan = plan
        self._bus = bus
        self._store = store
        self._seq = seq

    @classmethod
    async def resume(cls, *, run_id: str, plan: ExecutionPlan, bus: ProgressBus, store: RunStore) -> RunReporter:
        return cls(run_id=run_id, plan=plan, bus=bus, store=store, seq=await store.last_event_seq(run_id))

    def _completed(self, state: ExecutionState | None) -> tuple[str, ...]:
        if state is None:
            return ()
        return tuple(sid for sid in self.plan.stage_ids if (r := state.last_result(sid)) is not None and not r.failed)

    def _stage_name(self, node: str | None) -> str | None:
        if node in self.plan.stage_ids:
            return self.plan.stage(node).name
        return {ADAPTIVE_NODE: "Adaptive retrieval", DONE_NODE: "Done", ABORT_NODE: "Abort"}.get(node or "")

    async def emit(
        self,
        event: ProgressKind,
        *,
        status: str,
        state: ExecutionState | None = None,
        node: str | None = None,
        attempt: int | None = None,
        routing: RouteDecision | None = None,
        summary: str | None = None,
        stop: StopDecision | None = None,
        current_stage: str | None = None,
    ) -> ExecutionProgress:
        self._seq += 1
        message = ExecutionProgress(
            run_id=self.run_id,
            seq=self._seq,
            timestamp=utc_now(),
            event=event,
            workflow=self.plan.workflow,
            node=node,
            stage_name=self._stage_name(node),
            attempt=attempt,
            status=status,
            current_stage=current_stage if current_stage is not None else (state.current_stage if state else None),
            completed_stages=self._completed(state),
            planned_stages=self.plan.stage_ids,
            routing=routing,
            summary=summary,
            stop=stop,
        )
        self._bus.publish(message)
        await self._store.save_event(message)
        return message

    async def log(self, kind: DecisionKind, summary: str, data: dict[str, Any] | None = None) -> None:
        await self._store.log(self.run_id, kind, summary, data)

    async def node_started(self, node: str, state: ExecutionState, *, attempt: int | None = None) -> None:
        current = node if node in self.plan.stage_ids else state.current_stage
        await self.emit(
            ProgressKind.NODE_STARTED, status="running", state=state, node=node, attempt=attempt, current_stage=current
        )

    async def stage_finished(self, result: StageResult, state: ExecutionState) -> None:
        status = "failed" if result.failed else "succeeded"
        await self.emit(
            ProgressKind.NODE_FINISHED,
            status=status,
            state=state,
            node=result.stage_id,
            attempt=result.attempt,
            summary=result.summary,
            current_stage=result.stage_id,
        )
        await self.log(
            DecisionKind.STAGE_RESULT,
            f"{result.stage_id} attempt {result.attempt} {status}: {result.summary}",
            result.model_dump(mode="json"),
        )

    async def node_finished(self, node: str, state: ExecutionState, *, summary: str) -> None:
        await self.emit(ProgressKind.NODE_FINISHED, status="succeeded", state=state, node=node, summary=summary)

    async def routed(self, decision: RouteDecision, state: ExecutionState) -> None:
        await self.emit(
            ProgressKind.ROUTING_DECISION,
            status="routed",
            state=state,
            node=decision.source,
            routing=decision,
            summary=f"{decision.source} -> {decision.target}",
        )
        kind = DecisionKind.RETRY if decision.outcome is RouteOutcome.RETRY else DecisionKind.ROUTE
        await self.log(
            kind,
            f"{decision.source} -> {decision.target} ({decision.outcome.value}): {decision.condition}",
            decision.model_dump(mode="json"),
        )
