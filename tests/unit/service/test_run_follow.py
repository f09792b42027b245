"""What every front follows of a run: ``RunFollow`` (one run's events up to its end) and ``caught_up`` (the
stored events, then the live ones, for a follower that joins late)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from daemon.core.run_models import ExecutionProgress, ProgressKind, RunRecord, RunStatus
from daemon.service.runs.follow import RunFollow, caught_up

STAMP = "2025-01-01T00:00:00+00:00"


def _event(run_id: str, seq: int, kind: ProgressKind = ProgressKind.NODE_STARTED) -> ExecutionProgress:
    return ExecutionProgress(run_id=run_id, seq=seq, timestamp=STAMP, event=kind, workflow="wf", status="running")


async def _stream(*events: ExecutionProgress) -> AsyncIterator[ExecutionProgress]:
    for event in events:
        yield event


def _seen(events: list[ExecutionProgress]) -> list[tuple[str, int]]:
    return [(e.run_id, e.seq) for e in events]


async def test_a_late_follower_gets_each_event_once_in_order() -> None:
    """The live stream was listened to before the store was read, so it repeats what the store already had."""
    stored = [_event("a", 1), _event("a", 2)]
    live = _stream(_event("a", 2), _event("a", 3), _event("a", 4, ProgressKind.RUN_FINISHED))
    got = [e async for e in caught_up(stored, live, ended=False)]
    assert _seen(got) == [("a", 1), ("a", 2), ("a", 3), ("a", 4)]


async def test_a_run_that_had_ended_yields_its_stored_events_only() -> None:
    """Ended (a crash left no ``run_finished``) or finished in the store: nothing live is waited for."""
    never_read = _stream(_event("a", 9))
    got = [e async for e in caught_up([_event("a", 1)], never_read, ended=True)]
    assert _seen(got) == [("a", 1)]
    finished = [_event("a", 1), _event("a", 2, ProgressKind.RUN_FINISHED)]
    got = [e async for e in caught_up(finished, _stream(_event("a", 3)), ended=False)]
    assert _seen(got) == [("a", 1), ("a", 2)]


async def test_a_follow_yields_its_own_run_up_to_run_finished_and_closes_on_exit() -> None:
    record = RunRecord(run_id="a", status=RunStatus.RUNNING, request="r", created_at=STAMP, updated_at=STAMP)
    closed: list[bool] = []
    events = _stream(
        _event("a", 1),
        _event("b", 1),  # another run's event on the same listener
        _event("a", 2, ProgressKind.RUN_FINISHED),
        _event("a", 3),  # nothing after the end is yielded
    )
    async with RunFollow(record, events, lambda: closed.append(True)) as follow:
        assert follow.run_id == "a"
        got = [e async for e in follow]
    assert _seen(got) == [("a", 1), ("a", 2)]
    assert closed == [True]
