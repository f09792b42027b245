"""A run as ACP session updates: the one mapping from pipeline progress to what an ACP client shows.

``RunPresenter`` turns a run's record and its progress events into ``session/update`` payloads:

- the plan -> a ``plan`` update (one entry per planned stage, skipped stages too), sent whole on
  every change; ACP knows pending / in_progress / completed, so failed and skipped entries are
  ``completed`` with the status in the text and in ``_meta["ided/status"]``;
- the selection, stage decisions and routing -> ``agent_thought_chunk``;
- agents' text -> ``agent_message_chunk``; stage results -> ``agent_thought_chunk``;
- tool calls -> ``tool_call`` / ``tool_call_update`` (kind, status, locations, input, output);
  the orchestrator's adaptive retrieval shows as a ``search`` tool call;
- the run's end -> a closing message with the stop decision.

The same presenter serves a live run and ``session/load`` (a replay from the run store), so a
loaded session shows what the live one showed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    CurrentModeUpdate,
    PlanEntry,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from daemon.core.run_models import ADAPTIVE_NODE, ExecutionPlan, ExecutionProgress, ProgressKind, RunRecord, RunStatus
from daemon.core.run_models import PlanEntry as StagePlanEntry

__all__ = ["RunPresenter", "SessionUpdate", "selection_thoughts"]


SessionUpdate = (
    AgentPlanUpdate
    | AgentThoughtChunk
    | AgentMessageChunk
    | ToolCallStart
    | ToolCallProgress
    | UserMessageChunk
    | AvailableCommandsUpdate
    | CurrentModeUpdate
)

StageStatus = Literal["pending", "in_progress", "completed", "failed", "skipped"]
_MAX_OUTPUT_CHARS = 20_000


@dataclass
class _Stage:
    stage_id: str
    name: str
    status: StageStatus = "pending"
    attempt: int = 0
    reason: str | None = None


def selection_thoughts(record: RunRecord) -> list[SessionUpdate]:
    """The orchestrator's choice of workflow and stages, as thought chunks."""
    selection = record.selection
    if selection is None:
        return []
    how = "named by you" if selection.forced else f"selected by {selection.path.value}"
    lines = [f"Workflow {selection.workflow} ({how}): {selection.rationale}"]
    lines += [
        f"- {d.stage_id}: {'include' if d.include else 'skip'} ({d.source.value}): {d.reason}"
        for d in selection.stage_decisions
    ]
    return [update_agent_thought_text("\n".join(lines) + "\n")]


@dataclass
class RunPresenter:
    """Session updates for one run; feed it the record, then every progress event in order."""

    run_id: str
    root: Path
    """The workspace root: tool-call locations are absolute paths under it."""
    stages: list[_Stage] = field(default_factory=lambda: list[_Stage]())
    _plan_events: bool = False
    _retrievals: int = 0

    @classmethod
    def for_record(cls, record: RunRecord, root: Path) -> RunPresenter:
        presenter = cls(run_id=record.run_id, root=root)
        if record.plan is not None:
            presenter.stages = _stages_of(record.plan)
        return presenter

    # -- the run's opening and closing ------------------------------------------------------------

    def opening(self, record: RunRecord) -> list[SessionUpdate]:
        """Selection thoughts and the plan, all pending: what a client shows before anything runs."""
        updates = selection_thoughts(record)
        if self.stages:
            updates.append(self.plan_update())
        return updates

    def plan_update(self) -> AgentPlanUpdate:
        return update_plan(_acp_entry(s) for s in self.stages)

    def closing(self, record: RunRecord) -> list[SessionUpdate]:
        """The run's outcome as a message (nothing while it has not ended)."""
        if record.status is RunStatus.PLANNED:
            return []
        if not record.status.finished:
            return [update_agent_message_text(f"\nRun {record.run_id} is {record.status.value}.\n")]
        reason = record.stop.reason if record.stop is not None else record.error or ""
        return [update_agent_message_text(f"\nRun {record.run_id} {record.status.value}: {reason}\n")]

    # -- progress events ------------------------------------------------------------------------

    def on_event(self, event: ExecutionProgress) -> list[SessionUpdate]:
        kind = event.event
        if kind is ProgressKind.PLAN:
            return self._on_plan(event.plan)
        if kind is ProgressKind.THOUGHT:
            return [update_agent_thought_text(_line(event.text))] if event.text else []
        if kind is ProgressKind.AGENT_MESSAGE:
            return [update_agent_message_text(_line(event.text))] if event.text else []
        if kind is ProgressKind.TOOL_CALL:
            return [self._tool_call(event)]
        if kind is ProgressKind.TOOL_CALL_UPDATE:
            return [self._tool_call_update(event)]
        if kind is ProgressKind.NODE_STARTED:
            return self._node_started(event)
        if kind is ProgressKind.NODE_FINISHED:
            return self._node_finished(event)
        if kind is ProgressKind.REVIEW and event.summary:
            return [update_agent_message_text(f"Changes for review: {event.summary}\n")]
        if kind is ProgressKind.RUN_RESUMED and event.summary:
            return [update_agent_thought_text(f"Run resumed: {event.summary}\n")]
        if kind is ProgressKind.ROUTING_DECISION and event.routing is not None and not self._plan_events:
            r = event.routing
            return [
                update_agent_thought_text(f"Routing: {r.source} -> {r.target} ({r.outcome.value}): {r.condition}\n")
            ]
        if kind is ProgressKind.RUN_FINISHED and not self._plan_events:
            return self._settle(event.status)
        return []

    def replay(self, record: RunRecord, events: Iterable[ExecutionProgress]) -> list[SessionUpdate]:
        """Everything a client saw of a past run: the request, the opening, every event, the closing."""
        updates: list[SessionUpdate] = [update_user_message_text(record.request)]
        events = list(events)
        if not any(e.event is ProgressKind.PLAN for e in events):  # a run recorded before plan events
            updates += self.opening(record)
        for event in events:
            updates += self.on_event(event)
        updates += self.closing(record)
        return updates

    # -- helpers --------------------------------------------------------------------------------

    def _on_plan(self, entries: Sequence[StagePlanEntry]) -> list[SessionUpdate]:
        self._plan_events = True
        self.stages = [
            _Stage(stage_id=e.stage_id, name=e.name, status=e.status, attempt=e.attempt, reason=e.reason)
            for e in entries
        ]
        return [self.plan_update()]

    def _stage(self, stage_id: str | None) -> _Stage | None:
        return next((s for s in self.stages if s.stage_id == stage_id), None)

    def _node_started(self, event: ExecutionProgress) -> list[SessionUpdate]:
        if event.node == ADAPTIVE_NODE:
            self._retrievals += 1
            return [
                start_tool_call(
                    self._retrieval_id(),
                    "Adaptive retrieval: gathering more context",
                    kind="search",
                    status="in_progress",
                    raw_input={"after": event.current_stage},
                )
            ]
        stage = self._stage(event.node)
        if stage is None or self._plan_events:
            return []
        stage.status = "in_progress"
        stage.attempt = event.attempt or stage.attempt + 1
        return [self.plan_update()]

    def _node_finished(self, event: ExecutionProgress) -> list[SessionUpdate]:
        if event.node == ADAPTIVE_NODE:
            content = [tool_content(text_block(event.summary))] if event.summary else None
            status = "failed" if event.status == "failed" else "completed"
            return [update_tool_call(self._retrieval_id(), status=status, content=content, raw_output=event.summary)]
        stage = self._stage(event.node)
        if stage is None:
            return []
        updates: list[SessionUpdate] = []
        if event.summary:
            verdict = "failed" if event.status == "failed" else "done"
            attempt = f" (attempt {event.attempt})" if event.attempt and event.attempt > 1 else ""
            updates.append(update_agent_thought_text(f"{stage.name}{attempt} {verdict}: {event.summary}\n"))
        if not self._plan_events:
            stage.status = "failed" if event.status == "failed" else "completed"
            updates.append(self.plan_update())
        return updates

    def _settle(self, run_status: str) -> list[SessionUpdate]:
        """At the end of a run without plan events: stages still in progress end with the run."""
        changed = False
        for stage in self.stages:
            if stage.status == "in_progress":
                stage.status = "completed" if run_status == RunStatus.SUCCEEDED.value else "failed"
                changed = True
        return [self.plan_update()] if changed else []

    def _retrieval_id(self) -> str:
        return f"{self.run_id}/retrieval-{self._retrievals}"

    def _tool_call(self, event: ExecutionProgress) -> ToolCallStart:
        return start_tool_call(
            self._tool_id(event),
            event.title or "tool call",
            kind=event.tool_kind,
            status=event.tool_status or "pending",
            locations=_locations(self.root, event),
            raw_input=event.raw_input,
        )

    def _tool_call_update(self, event: ExecutionProgress) -> ToolCallProgress:
        output = event.output[:_MAX_OUTPUT_CHARS] if event.output else None
        return update_tool_call(
            self._tool_id(event),
            title=event.title,
            kind=event.tool_kind,
            status=event.tool_status,
            locations=_locations(self.root, event) or None,
            content=[tool_content(text_block(output))] if output else None,
            raw_output=output,
        )

    def _tool_id(self, event: ExecutionProgress) -> str:
        return f"{self.run_id}/{event.tool_call_id or event.seq}"


def _stages_of(plan: ExecutionPlan) -> list[_Stage]:
    stages = [_Stage(stage_id=s.stage_id, name=s.name) for s in plan.stages]
    stages += [_Stage(stage_id=s.stage_id, name=s.name, status="skipped", reason=s.reason) for s in plan.skipped]
    return stages


def _acp_entry(stage: _Stage) -> PlanEntry:
    text = stage.name
    if stage.status == "skipped":
        text += f" (skipped: {stage.reason})" if stage.reason else " (skipped)"
    elif stage.status == "failed":
        text += " (failed)"
    if stage.attempt > 1:
        text += f" [attempt {stage.attempt}]"
    entry = plan_entry(
        text, priority="low" if stage.status == "skipped" else "medium", status=_acp_status(stage.status)
    )
    meta: dict[str, Any] = {"ided/stage_id": stage.stage_id, "ided/status": stage.status, "ided/attempt": stage.attempt}
    return entry.model_copy(update={"field_meta": meta})


def _acp_status(status: StageStatus) -> Literal["pending", "in_progress", "completed"]:
    if status == "pending":
        return "pending"
    if status == "in_progress":
        return "in_progress"
    return "completed"


def _locations(root: Path, event: ExecutionProgress) -> list[ToolCallLocation]:
    """ACP wants absolute paths; the pipeline reports workspace-relative ones (lines stay 1-based)."""
    return [ToolCallLocation(path=str(root / loc.path), line=loc.line) for loc in event.locations]


def _line(text: str | None) -> str:
    text = text or ""
    return text if text.endswith("\n") else text + "\n"
