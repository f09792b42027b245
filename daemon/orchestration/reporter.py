"""One run's reporter: turns what the graph's nodes and agents do into progress events and decision-log entries.

Every event goes to the in-process bus (live subscribers) and to the run store (fronts in other
processes, ``ided runs show ID --events``). Sequence numbers continue across a resume, and so do
the plan's stage statuses (rebuilt from the run's last ``plan`` event). The reporter is also the
agents' event sink (``AgentEvents``): their text and tool calls become ``agent_message``,
``tool_call`` and ``tool_call_update`` events of the stage attempt they belong to.
"""

from __future__ import annotations

import asyncio
from typing import Any

from daemon.core.run_models import (
    DecisionKind,
    ExecutionPlan,
    ExecutionProgress,
    PlanEntry,
    PlanEntryStatus,
    ProgressKind,
    RouteDecision,
    RouteOutcome,
    RunChanges,
    StopDecision,
    ToolLocation,
    utc_now,
)
from daemon.orchestration.agents.events import AgentRef, ToolCallEvent
from daemon.orchestration.graph_routes import NODE_NAMES
from daemon.orchestration.progress import ProgressBus
from daemon.orchestration.run_store import RunStore
from daemon.orchestration.state import ExecutionState, StageResult

__all__ = ["RunReporter"]


class RunReporter:
    def __init__(self, *, run_id: str, plan: ExecutionPlan, bus: ProgressBus, store: RunStore, seq: int = 0) -> None:
        self.run_id = run_id
        self.plan = plan
        self._bus = bus
        self._store = store
        self._seq = seq
        self._emitting = asyncio.Lock()  # numbering, saving and publishing one event at a time: in seq order
        self._state: ExecutionState | None = None
        self._entries: dict[str, PlanEntry] = {
            s.stage_id: PlanEntry(stage_id=s.stage_id, name=s.name, status="pending") for s in plan.stages
        }
        self._entries.update(
            {
                s.stage_id: PlanEntry(stage_id=s.stage_id, name=s.name, status="skipped", reason=s.reason)
                for s in plan.skipped
            }
        )

    @classmethod
    async def resume(cls, *, run_id: str, plan: ExecutionPlan, bus: ProgressBus, store: RunStore) -> RunReporter:
        reporter = cls(run_id=run_id, plan=plan, bus=bus, store=store, seq=await store.last_event_seq(run_id))
        last_plan = next((e for e in reversed(await store.events(run_id)) if e.event is ProgressKind.PLAN), None)
        if last_plan is not None:
            reporter._entries.update({entry.stage_id: entry for entry in last_plan.plan})
        return reporter

    @property
    def plan_entries(self) -> tuple[PlanEntry, ...]:
        """Every stage in workflow order of the plan (planned stages first, then the skipped ones)."""
        return tuple(self._entries.values())

    def _completed(self, state: ExecutionState | None) -> tuple[str, ...]:
        if state is None:
            return ()
        return tuple(sid for sid in self.plan.stage_ids if (r := state.last_result(sid)) is not None and not r.failed)

    def _stage_name(self, node: str | None) -> str | None:
        if node in self.plan.stage_ids:
            return self.plan.stage(node).name
        return NODE_NAMES.get(node or "")

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
        **extra: Any,
    ) -> ExecutionProgress:
        async with self._emitting:  # agents' tool events come from concurrent tasks
            self._seq += 1
            if state is not None:
                self._state = state
            state = state or self._state
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
                **extra,
            )
            # durable before anyone sees it: a front that shows the event (and a user who kills the process
            # because of it) never gets ahead of the store a resume reads
            await self._store.save_event(message)
            self._bus.publish(message)
            return message

    async def log(self, kind: DecisionKind, summary: str, data: dict[str, Any] | None = None) -> None:
        await self._store.log(self.run_id, kind, summary, data)

    async def node_started(self, node: str, state: ExecutionState, *, attempt: int | None = None) -> None:
        current = node if node in self.plan.stage_ids else state.current_stage
        await self.emit(
            ProgressKind.NODE_STARTED, status="running", state=state, node=node, attempt=attempt, current_stage=current
        )
        if node in self._entries and attempt is not None:
            await self.set_stage(node, "in_progress", attempt=attempt)

    async def set_stage(self, stage_id: str, status: PlanEntryStatus, *, attempt: int | None = None) -> None:
        """Change one stage's plan status and emit the whole plan."""
        entry = self._entries[stage_id]
        self._entries[stage_id] = entry.model_copy(
            update={"status": status, "attempt": attempt if attempt is not None else entry.attempt}
        )
        await self.emit_plan()

    async def emit_plan(self) -> None:
        await self.emit(ProgressKind.PLAN, status="plan", plan=self.plan_entries)

    async def thought(self, text: str, *, node: str | None = None) -> None:
        """The orchestrator's reasoning (selection, stage decisions, routing) as a ``thought`` event."""
        await self.emit(ProgressKind.THOUGHT, status="thought", node=node, text=text)

    async def review(self, changes: RunChanges) -> None:
        files = len(changes.files)
        added = sum(f.added for f in changes.files)
        removed = sum(f.removed for f in changes.files)
        await self.emit(
            ProgressKind.REVIEW,
            status="review",
            changes=changes,
            summary=f"{files} file(s) changed (+{added} -{removed}) in {len(changes.commits)} commit(s) on "
            f"{changes.branch}; review: accept, reject or answer with feedback",
        )

    # -- AgentEvents ----------------------------------------------------------------------------

    async def agent_message(self, agent: AgentRef, text: str) -> None:
        await self.emit(
            ProgressKind.AGENT_MESSAGE,
            status="message",
            node=agent.stage_id,
            attempt=agent.attempt,
            current_stage=agent.stage_id,
            agent_id=agent.agent_id,
            text=text,
        )

    async def _tool_event(self, kind: ProgressKind, agent: AgentRef, call: ToolCallEvent) -> None:
        await self.emit(
            kind,
            status=call.status,
            node=agent.stage_id,
            attempt=agent.attempt,
            current_stage=agent.stage_id,
            agent_id=agent.agent_id,
            tool_call_id=call.tool_call_id,
            title=call.title,
            tool_kind=call.kind,
            tool_status=call.status,
            locations=tuple(ToolLocation(path=loc.path, line=loc.line) for loc in call.locations),
            raw_input=call.raw_input,
            output=call.output,
        )

    async def tool_call(self, agent: AgentRef, call: ToolCallEvent) -> None:
        await self._tool_event(ProgressKind.TOOL_CALL, agent, call)

    async def tool_call_update(self, agent: AgentRef, call: ToolCallEvent) -> None:
        await self._tool_event(ProgressKind.TOOL_CALL_UPDATE, agent, call)

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
        if result.stage_id in self._entries:
            await self.set_stage(
                result.stage_id, status="failed" if result.failed else "completed", attempt=result.attempt
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
        await self.thought(f"{decision.source} -> {decision.target}: {decision.condition}", node=decision.source)
        kind = DecisionKind.RETRY if decision.outcome is RouteOutcome.RETRY else DecisionKind.ROUTE
        await self.log(
            kind,
            f"{decision.source} -> {decision.target} ({decision.outcome.value}): {decision.condition}",
            decision.model_dump(mode="json"),
        )
