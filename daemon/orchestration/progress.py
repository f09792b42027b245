"""Progress events of runs (``langgraph_execution_progress``) and the in-process bus fronts subscribe to.

One event per run start/resume/finish, node start, node finish and routing decision. Every event
carries the run's position: the current stage, the stages completed so far and the planned stages,
so a front can draw progress from any single event. Events are also persisted with the run
(``RunStore.events``) for fronts in other processes.
"""

from __future__ import annotations

import asyncio
import logging
from enum import StrEnum
from types import TracebackType
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field

from daemon.orchestration.routing import RouteDecision
from daemon.orchestration.stop_decision import StopDecision

__all__ = ["PROGRESS_MESSAGE_TYPE", "ExecutionProgress", "ProgressBus", "ProgressKind", "Subscription"]

logger = logging.getLogger(__name__)

PROGRESS_MESSAGE_TYPE = "langgraph_execution_progress"


class ProgressKind(StrEnum):
    RUN_STARTED = "run_started"
    RUN_RESUMED = "run_resumed"
    NODE_STARTED = "node_started"
    NODE_FINISHED = "node_finished"
    ROUTING_DECISION = "routing_decision"
    RUN_FINISHED = "run_finished"


class ExecutionProgress(BaseModel):
    """One progress message."""

    model_config = ConfigDict(frozen=True, extra="forbid")

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
