"""``RunFollow``: a launched (or followed) run and its progress events up to its end, for every front.

Every launch answers a ``RunFollow``: the launched run's record and its progress events, from before the
run started (nothing is missed) up to and including its ``run_finished``. A front iterates it and maps
each event onto its protocol; it never subscribes, filters or waits by itself. ``caught_up`` joins a
run's stored events with its live ones for a follower that comes late.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from types import TracebackType

from daemon.core.run_models import ExecutionProgress, ProgressKind, RunRecord

__all__ = ["RunFollow", "caught_up"]


class RunFollow(AbstractAsyncContextManager["RunFollow"]):
    """A launched run (``record``, as it was when launched) and its progress events up to its end.

    Iterate it for the run's events (it ends after ``run_finished``); ``close`` (or leaving ``async with``)
    stops listening. Built by a ``RunService`` from the events it listened to before the launch.
    """

    def __init__(self, record: RunRecord, events: AsyncIterator[ExecutionProgress], close: Callable[[], None]) -> None:
        self.record = record
        self._events = events
        self._close = close

    @property
    def run_id(self) -> str:
        return self.record.run_id

    async def __aiter__(self) -> AsyncIterator[ExecutionProgress]:
        async for event in self._events:
            if event.run_id != self.record.run_id:
                continue
            yield event
            if event.event is ProgressKind.RUN_FINISHED:
                return

    def close(self) -> None:
        self._close()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


async def caught_up(
    stored: list[ExecutionProgress], live: AsyncIterator[ExecutionProgress], *, ended: bool
) -> AsyncIterator[ExecutionProgress]:
    """A run's events for a follower that joins late: the ``stored`` ones, then the ``live`` ones after them.

    ``live`` must have been listened to before ``stored`` was read, so nothing falls between the two; an
    event in both is yielded once (by its ``seq``). ``ended``: the run had ended when ``stored`` was read
    (nothing more comes, even when no ``run_finished`` was stored, as for a run a crash interrupted).
    """
    last: dict[str, int] = {}
    for event in stored:
        last[event.run_id] = max(last.get(event.run_id, 0), event.seq)
        yield event
    if ended or any(e.event is ProgressKind.RUN_FINISHED for e in stored):
        return
    async for event in live:
        if event.seq <= last.get(event.run_id, 0):
            continue
        yield event
