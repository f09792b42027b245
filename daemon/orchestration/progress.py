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
from types import TracebackType
from typing import Self

from daemon.core.run_models import ExecutionProgress, ProgressKind

__all__ = ["ProgressBus", "Subscription"]


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
