"""One suite for every run-store adapter: SQLite (a file) and Postgres (a real server on loopback).

Each test runs once per adapter through the ``stores`` fixture, which opens stores the way the
daemon does (``connect_run_store`` with a ``RunsConfig``). The concurrent-writer test starts
several processes, each with its own connection, as two workspaces on two machines would.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from daemon.core.run_models import DecisionKind, RunStatus
from daemon.core.selection_models import DecisionSource, StageDecision
from daemon.errors import ErrorCode, PipelineError
from daemon.orchestration.plan import assemble_plan
from daemon.orchestration.run_store import RunStore
from tests.pipeline_support import builtin_catalog
from tests.run_store_writers import RUNS_PER_WRITER, SHARED, WRITERS, StoreSpec, event, record, write_concurrently

PLAN = assemble_plan(
    builtin_catalog().get("bug_fix"),
    [StageDecision(stage_id="code_review", include=False, reason="small fix", source=DecisionSource.MODEL)],
    "Fix the crash",
)


class Stores:
    """Opens stores on one adapter's storage and closes them after the test."""

    def __init__(self, spec: StoreSpec) -> None:
        self.spec = spec
        self._open: list[RunStore] = []

    def open(self, workspace_id: str = "ws-a") -> RunStore:
        store = self.spec.open(workspace_id)
        self._open.append(store)
        return store

    def close(self) -> None:
        for store in self._open:
            store.close()


@pytest.fixture(params=["sqlite", "postgres"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    url = str(request.getfixturevalue("postgres_url")) if request.param == "postgres" else None
    opened = Stores(StoreSpec(kind=str(request.param), state_dir=tmp_path / "state", database_url=url))
    yield opened
    opened.close()


async def test_a_store_keeps_records_decision_logs_events_and_cancel_flags_for_a_new_connection(
    stores: Stores,
) -> None:
    store = stores.open()
    created = await store.create(record("r1", plan=PLAN))
    assert created.workspace == "ws-a"
    assert await store.log("r1", DecisionKind.SELECTION, "bug_fix", {"x": 1, "text": "naïve ✓"}) == 1
    assert await store.log("r1", DecisionKind.PLAN, "planned") == 2
    updated = await store.update("r1", status=RunStatus.RUNNING, pid=123, host="box")
    assert updated.status is RunStatus.RUNNING and updated.plan == PLAN and updated.updated_at >= created.updated_at
    await store.request_cancel("r1")
    assert await store.cancel_requested("r1")
    await store.save_event(event("r1", 1))
    await store.save_event(event("r1", 2))

    reopened = stores.open()
    again = await reopened.get("r1")
    assert again.cancel_requested and again.plan == PLAN and (again.pid, again.host) == (123, "box")
    assert [e.seq for e in await reopened.events("r1")] == [1, 2] and await reopened.last_event_seq("r1") == 2
    assert [(d.seq, d.kind, d.data) for d in await reopened.decisions("r1")] == [
        (1, DecisionKind.SELECTION, {"x": 1, "text": "naïve ✓"}),
        (2, DecisionKind.PLAN, {}),
    ]
    await reopened.clear_cancel("r1")
    assert not await store.cancel_requested("r1") and not (await store.get("r1")).cancel_requested
    assert await store.last_event_seq("nothing") == 0 and await store.events("nothing") == []


async def test_an_unknown_run_id_is_run_not_found(stores: Stores) -> None:
    store = stores.open()
    for attempt in (store.get("nope"), store.update("nope", status=RunStatus.FAILED), store.request_cancel("nope")):
        with pytest.raises(PipelineError) as caught:
            await attempt
        assert caught.value.code is ErrorCode.RUN_NOT_FOUND
    assert not await store.cancel_requested("nope")


async def test_creating_a_run_id_that_exists_is_refused_and_the_first_record_is_kept(stores: Stores) -> None:
    first, second = stores.open("ws-a"), stores.open("ws-b")
    await first.create(record("r1", request="the first"))
    with pytest.raises(PipelineError) as caught:
        await second.create(record("r1", request="the second"))
    assert caught.value.code is ErrorCode.RUN_EXISTS
    kept = await second.get("r1")
    assert (kept.request, kept.workspace) == ("the first", "ws-a")


async def test_listing_is_newest_first_this_workspace_by_default_and_every_writer_when_asked(stores: Stores) -> None:
    mine, theirs = stores.open("ws-a"), stores.open("ws-b")
    await mine.create(record("a1", created_at="2026-01-01T10:00:00.000000+00:00"))
    await theirs.create(record("b1", created_at="2026-01-01T11:00:00.000000+00:00"))
    await mine.create(record("a2", created_at="2026-01-01T12:00:00.000000+00:00"))
    assert [r.run_id for r in await mine.list()] == ["a2", "a1"]
    assert [r.run_id for r in await theirs.list()] == ["b1"]
    every = await mine.list(all_workspaces=True)
    assert [(r.run_id, r.workspace) for r in every] == [("a2", "ws-a"), ("b1", "ws-b"), ("a1", "ws-a")]
    assert [r.run_id for r in await theirs.list(2, all_workspaces=True)] == ["a2", "b1"]


async def test_an_event_saved_twice_under_one_seq_is_kept_once_with_the_later_content(stores: Stores) -> None:
    store = stores.open()
    await store.create(record("r1"))
    await store.save_event(event("r1", 1, "running"))
    await store.save_event(event("r1", 1, "succeeded"))
    assert [(e.seq, e.status) for e in await store.events("r1")] == [(1, "succeeded")]


async def test_an_update_with_an_invalid_value_changes_nothing(stores: Stores) -> None:
    store = stores.open()
    await store.create(record("r1"))
    with pytest.raises(ValueError, match="status"):
        await store.update("r1", status="exploded")
    assert (await stores.open().get("r1")).status is RunStatus.PLANNED


# -- concurrent writers -------------------------------------------------------------------------


async def test_writers_in_several_processes_lose_and_duplicate_no_record_or_entry(stores: Stores) -> None:
    store = stores.open("ws-a")
    await store.create(record(SHARED))
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=len(WRITERS), mp_context=context) as pool:
        futures = [
            asyncio.wrap_future(pool.submit(write_concurrently, stores.spec, n, ws))
            for n, (_machine, ws) in enumerate(WRITERS)
        ]
        returned = await asyncio.gather(*futures)

    total = len(WRITERS) * RUNS_PER_WRITER
    every = await store.list(1000, all_workspaces=True)
    ids = [r.run_id for r in every]
    expected = {f"w{n}-{i:02d}" for n in range(len(WRITERS)) for i in range(RUNS_PER_WRITER)} | {SHARED}
    assert len(ids) == len(set(ids)) == total + 1 and set(ids) == expected
    assert all(r.status is RunStatus.SUCCEEDED for r in every if r.run_id != SHARED)
    by_workspace = {ws: {r.run_id for r in every if r.workspace == ws} for ws in ("ws-a", "ws-b")}
    assert len(by_workspace["ws-a"]) == 2 * RUNS_PER_WRITER + 1 and len(by_workspace["ws-b"]) == 2 * RUNS_PER_WRITER
    assert {r.run_id for r in await stores.open("ws-b").list(1000)} == by_workspace["ws-b"]

    shared = await store.decisions(SHARED)
    assert [d.seq for d in shared] == list(range(1, total + 1))
    assert sorted(s for seqs in returned for s in seqs) == list(range(1, total + 1))
    summaries = [d.summary for d in shared]
    assert len(set(summaries)) == total
    for n in range(len(WRITERS)):  # each writer's entries in the order it appended them
        mine = [s for s in summaries if s.startswith(f"writer {n} ")]
        assert mine == [f"writer {n} entry {i}" for i in range(RUNS_PER_WRITER)]
    for run_id in expected - {SHARED}:
        assert [d.seq for d in await store.decisions(run_id)] == [1]


async def test_text_with_nul_and_non_ascii_characters_is_kept_exactly(stores: Stores) -> None:
    hostile = "line\x00after NUL, naïve ✓ 🙂, quote ' and \\ backslash"
    store = stores.open()
    await store.create(record("r1", request=hostile))
    await store.log("r1", DecisionKind.ERROR, hostile, {"text": hostile, hostile: [hostile]})
    await store.save_event(event("r1", 1, hostile))
    reopened = stores.open()
    assert (await reopened.get("r1")).request == hostile
    [entry] = await reopened.decisions("r1")
    assert entry.summary == hostile and entry.data == {"text": hostile, hostile: [hostile]}
    assert [e.status for e in await reopened.events("r1")] == [hostile]
