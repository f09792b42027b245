"""Progress events of runs (``langgraph_execution_progress``) and the in-process bus fronts subscribe to.

One event per run start/resume/finish, node start, node finish and routing decision. Every event
carries the run's position: the current stage, the stages completed so far and the planned stages,
so a front can draw progress from any single event. Events are also persisted with the run
(``RunStore.events``) for fronts in other processes.

Kinds that fronts map 1:1 onto their protocol (ACP session updates, LSP ``ided/run/progress``):

- ``plan``: every stage of the plan (``plan`` entries, planned and skipped) with its status
  pending / in_progress / completed / failed / skipped; emitted at run start and on every change;
- ``thought``: the orchestrator's reasoning (workflow selection, stage decisions, routing) in ``text``;
- ``agent_message``: an agent's own text (``agent_id``, ``text``);
- ``tool_call`` / ``tool_call_update``: a tool an agent calls (``tool_call_id``, ``title``,
  ``tool_kind``, ``tool_status``, ``locations``, ``raw_input``, ``output``); locations are
  workspace-relative paths with 1-based lines;
- ``review``: the run ended with changes awaiting review (``changes``: branch, commits, file stats;
  the diff itself comes from the version-control layer's change set).
"""

from __future__ import annotations

import asyncio
from enum import StrEnum
from types import TracebackType
from typing import Any, Literal, Self

from pydantic import Field

from daemon.core.frozen_model import FrozenModel
from daemon.orchestration.routing import RouteDecision
from daemon.orchestration.stop_decision import StopDecision

__all__ = [
    "PROGRESS_MESSAGE_TYPE",
    "ChangedFile",
    "ExecutionProgress",
    "PlanEntry",
    "PlanEntryStatus",
    "ProgressBus",
    "ProgressKind",
    "RunChanges",
    "Subscription",
    "ToolCallStatus",
    "ToolKind",
    "ToolLocation",
]


PROGRESS_MESSAGE_TYPE = "langgraph_execution_progress"


class ProgressKind(StrEnum):
    RUN_STARTED = "run_started"
    RUN_RESUMED = "run_resumed"
    NODE_STARTED = "node_started"
    NODE_FINISHED = "node_finished"
    ROUTING_DECISION = "routing_decision"
    RUN_FINISHED = "run_finished"
    PLAN = "plan"
    THOUGHT = "thought"
    AGENT_MESSAGE = "agent_message"
    TOOL_CALL = "tool_call"
    TOOL_CALL_UPDATE = "tool_call_update"
    REVIEW = "review"


PlanEntryStatus = Literal["pending", "in_progress", "completed", "failed", "skipped"]
ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
ToolCallStatus = Literal["pending", "in_progress", "completed", "failed"]


class PlanEntry(FrozenModel):
    """One stage of the plan as a front shows it."""

    stage_id: str
    name: str
    status: PlanEntryStatus
    attempt: int = Field(default=0, description="Attempts started so far (0 while pending or skipped).")
    reason: str | None = Field(default=None, description="Why a skipped stage was skipped.")


class ToolLocation(FrozenModel):
    """A place a tool call touched: a workspace-relative path and a 1-based line when known."""

    path: str
    line: int | None = None


class ChangedFile(FrozenModel):
    """One file of a run's change set, as statistics (the diff comes from the change set itself)."""

    path: str
    status: str = Field(description="added, modified, deleted or renamed.")
    added: int = 0
    removed: int = 0


class RunChanges(FrozenModel):
    """What an editing run changed: its branch and worktree, the commits and the files."""

    branch: str
    worktree: str
    base_commit: str
    head_commit: str | None = None
    commits: tuple[str, ...] = ()
    files: tuple[ChangedFile, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.files


class ExecutionProgress(FrozenModel):
    """One progress message."""

    type: Literal["langgraph_execution_progress"] = PROGRESS_MESSAGE_TYPE
    run_id: str
    seq: int = Field(description="1-based, increasing within a run (also across a resume).")
    timestamp: str
    event: ProgressKind
    workflow: str
    node: str | None = Field(default=None, description="Stage id, adaptive_retrieval, done or abort.")
    stage_name: str | None = None
    attempt: int | None = None
    status: str = Field(description="running, succeeded, failed, or the run status on run events.")
    current_stage: str | None = None
    completed_stages: tuple[str, ...] = ()
    planned_stages: tuple[str, ...] = ()
    routing: RouteDecision | None = None
    summary: str | None = None
    stop: StopDecision | None = None
    plan: tuple[PlanEntry, ...] = Field(default=(), description="plan events: every stage with its status.")
    text: str | None = Field(default=None, description="thought and agent_message events: the text.")
    agent_id: str | None = Field(default=None, description="The agent behind agent_message and tool events.")
    tool_call_id: str | None = Field(default=None, description="Unique within the run; the same for a call's updates.")
    title: str | None = Field(default=None, description="tool_call: what the call does, for a person.")
    tool_kind: ToolKind | None = None
    tool_status: ToolCallStatus | None = None
    locations: tuple[ToolLocation, ...] = ()
    raw_input: dict[str, Any] | None = Field(default=None, description="tool_call: the arguments as called.")
    output: str | None = Field(default=None, description="tool_call_update: the result text (capped).")
    changes: RunChanges | None = Field(default=None, description="review events: the run's change set statistics.")


class Subscription:
    """An async iterator of events; registered at creation, so no event after ``subscribe()`` is missed."""

    def __init__(self, bus: ProgressBus, run_id: str | None, maxsize: int) -> None:
        self._bus = bus
        self.run_id = run_id
        self._queue: asyncio.Queue[ExecutionProgress | None] = asyncio.Queue(maxsize)
        self.dropped = 0
        self._closed = False

    def offer(self, event: ExecutionProgress) -> None:
        if self.run_id is not None and event.run_id != self.run_id:
            return
        if self._queue.full():
            self._queue.get_nowait()
            self.dropped += 1
        self._queue.put_nowait(event)
        if self.run_id is not None and event.event is ProgressKind.RUN_FINISHED:
            self._finish()

    def _finish(self) -> None:
        if self._queue.full():
            self._queue.get_nowait()
        self._queue.put_nowait(None)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> ExecutionProgress:
        if self._closed:
            raise StopAsyncIteration
        event = await self._queue.get()
        if event is None:
            self.close()
            raise StopAsyncIteration
        return event

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._bus.unsubscribe(self)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class ProgressBus:
    """Fan-out of progress events to any number of subscribers (one event loop)."""

    def __init__(self) -> None:
        self._subscribers: list[Subscription] = []

    def subscribe(self, run_id: str | None = None, *, maxsize: int = 10_000) -> Subscription:
        """Events of ``run_id`` (the iteration ends after its ``run_finished``) or of every run."""
        subscription = Subscription(self, run_id, maxsize)
        self._subscribers.append(subscription)
        return subscription

    def publish(self, event: ExecutionProgress) -> None:
        for subscription in list(self._subscribers):
            subscription.offer(event)

    def unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self._subscribers:
            self._subscribers.remove(subscription)
