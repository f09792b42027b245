"""Run store, progress bus, stop decisions and the project profile."""

from __future__ import annotations

import asyncio
from pathlib import Path

from daemon.core.run_models import ExecutionProgress, ProgressKind, RouteDecision, RouteOutcome, StopStatus, utc_now
from daemon.core.selection_models import DecisionSource, StageDecision
from daemon.core.workflow_schema import FailureAggregation
from daemon.orchestration.plan import assemble_plan
from daemon.orchestration.progress import ProgressBus
from daemon.orchestration.project_profile import ProjectProfiler, profile_project
from daemon.orchestration.reporter import RunReporter
from daemon.orchestration.sqlite_run_store import SqliteRunStore
from daemon.orchestration.state import AgentOutcome, ExecutionState, StageResult
from daemon.orchestration.stop_decision import decide_stop
from tests.pipeline_support import builtin_catalog

CATALOG = builtin_catalog()
BUG_FIX = CATALOG.get("bug_fix")
PLAN = assemble_plan(
    BUG_FIX,
    [StageDecision(stage_id="code_review", include=False, reason="small fix", source=DecisionSource.MODEL)],
    "Fix the crash",
)


def result(stage: str, attempt: int = 1, *, failed: bool = False) -> StageResult:
    return StageResult(
        stage_id=stage,
        attempt=attempt,
        failed=failed,
        aggregation=FailureAggregation.ANY_FAILS,
        agents=(AgentOutcome(agent_id="a", failed=failed, summary="red" if failed else "green"),),
        summary="red" if failed else "green",
        started_at=utc_now(),
        finished_at=utc_now(),
    )


def state(terminal: str | None, results: dict[str, list[StageResult]], **extra: object) -> ExecutionState:
    return ExecutionState.model_validate({"run_id": "r1", "terminal": terminal, "stage_results": results, **extra})


ALL_GREEN = {sid: [result(sid)] for sid in PLAN.stage_ids}


def test_reaching_done_with_every_stage_green_is_success_with_evidence() -> None:
    stop = decide_stop(PLAN, state("done", ALL_GREEN))
    assert stop.status is StopStatus.SUCCESS
    assert stop.evidence_refs[0] == "run:r1/stage:reproduction/attempt:1"


def test_reaching_done_with_a_failed_last_attempt_is_a_failure() -> None:
    results = {**ALL_GREEN, "regression_testing": [result("regression_testing", 1, failed=True)]}
    stop = decide_stop(PLAN, state("done", results))
    assert stop.status is StopStatus.FAILURE
    assert "regression_testing (attempt 1): red" in stop.reason
    assert stop.evidence_refs == ("run:r1/stage:regression_testing/attempt:1",)


def test_a_failure_followed_by_a_successful_retry_counts_as_success() -> None:
    results = {**ALL_GREEN, "fix": [result("fix", 1, failed=True), result("fix", 2)]}
    stop = decide_stop(PLAN, state("done", results))
    assert stop.status is StopStatus.SUCCESS and "fix (2 attempts)" in stop.reason


def test_reaching_done_without_a_required_stage_or_without_any_stage_is_a_failure() -> None:
    partial = {k: v for k, v in ALL_GREEN.items() if k != "fix"}
    assert "without running required stage(s) fix" in decide_stop(PLAN, state("done", partial)).reason
    assert decide_stop(PLAN, state("done", {})).status is StopStatus.FAILURE
    assert decide_stop(PLAN, state(None, ALL_GREEN)).reason == "the graph stopped without reaching done or abort"


def test_abort_carries_the_routing_condition_and_the_last_route() -> None:
    route = RouteDecision(source="fix", target="abort", outcome=RouteOutcome.FAILURE, condition="c")
    results = {"reproduction": [result("reproduction")], "fix": [result("fix", 3, failed=True)]}
    stop = decide_stop(PLAN, state("abort", results, abort_reason="attempts[fix]=3", routes=[route.model_dump()]))
    assert stop.status is StopStatus.ABORTED and stop.reason == "aborted: attempts[fix]=3"
    assert stop.evidence_refs == ("run:r1/stage:fix/attempt:3", "run:r1/route:1")


def _event(run_id: str, seq: int, kind: ProgressKind = ProgressKind.NODE_STARTED) -> ExecutionProgress:
    return ExecutionProgress(run_id=run_id, seq=seq, timestamp=utc_now(), event=kind, workflow="w", status="running")


async def test_a_run_subscription_sees_every_event_after_subscribing_and_ends_with_the_run() -> None:
    bus = ProgressBus()
    mine = bus.subscribe("a")
    everything = bus.subscribe()
    bus.publish(_event("a", 1))
    bus.publish(_event("b", 1))
    bus.publish(_event("a", 2, ProgressKind.RUN_FINISHED))
    async with asyncio.timeout(5):
        got = [(e.run_id, e.seq) async for e in mine]
    assert got == [("a", 1), ("a", 2)]
    assert everything.run_id is None
    everything.close()
    bus.publish(_event("a", 3))  # no subscriber left: nothing to deliver, nothing raised


async def test_a_slow_subscriber_loses_the_oldest_events_not_the_newest() -> None:
    bus = ProgressBus()
    sub = bus.subscribe(maxsize=2)
    for seq in range(1, 5):
        bus.publish(_event("a", seq))
    async with asyncio.timeout(5):
        assert [(await sub.__anext__()).seq for _ in range(2)] == [3, 4]
    assert sub.dropped == 2
    sub.close()


class _FirstSaveLingers(SqliteRunStore):
    """A real SQLite store whose first ``save_event`` hands the loop over a few times before it writes, as a
    busy thread pool does: a second event saved meanwhile would finish first."""

    async def save_event(self, event: ExecutionProgress) -> None:
        if event.seq == 1:
            for _ in range(20):
                await asyncio.sleep(0)
        await super().save_event(event)


async def test_events_emitted_at_once_reach_subscribers_in_seq_order(tmp_path: Path) -> None:
    bus = ProgressBus()
    store = _FirstSaveLingers(tmp_path / "runs.db", workspace_id="here")
    reporter = RunReporter(run_id="r", plan=PLAN, bus=bus, store=store)
    live = bus.subscribe("r")
    try:
        emitted = await asyncio.gather(
            reporter.emit(ProgressKind.THOUGHT, status="running", text="first"),
            reporter.emit(ProgressKind.THOUGHT, status="running", text="second"),
        )
        reporter_done = await reporter.emit(ProgressKind.RUN_FINISHED, status="succeeded")
        async with asyncio.timeout(5):
            seen = [(e.seq, e.text) async for e in live]
        stored = [e.seq for e in await store.events("r")]
    finally:
        store.close()
    assert [e.seq for e in emitted] == [1, 2] and reporter_done.seq == 3
    assert seen == [(1, "first"), (2, "second"), (3, None)]
    assert stored == [1, 2, 3]


def test_project_profile_counts_languages_and_finds_security_markers(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "auth.py").write_text("x = 1\n")
    (tmp_path / "app" / "main.py").write_text("x = 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_main.py").write_text("x = 1\n")
    (tmp_path / "README.md").write_text("# x\n")
    (tmp_path / ".env").write_text("SECRET=1\n")
    (tmp_path / "node_modules" / "dep").mkdir(parents=True)
    (tmp_path / "node_modules" / "dep" / "index.js").write_text("x\n")
    profile = profile_project(tmp_path)
    assert profile.languages == {"python": 3, "markdown": 1}
    assert set(profile.security_markers) == {".env", "app/auth.py"}
    assert profile.has_tests and profile.has_docs and profile.size == "small" and profile.files == 5
    assert "security-sensitive markers: .env, app/auth.py" in profile.summary()


def test_security_markers_are_whole_words_of_code_paths_not_substrings(tmp_path: Path) -> None:
    files = [
        "AUTHORS.rst",
        "src/author.py",
        "src/tokenizer.py",
        "docs/authentication.md",
        "src/auth.py",
        "src/OAuthClient.java",
        "lib/cryptography/keys.py",
        "pkg/permissions_test.go",
    ]
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    profile = profile_project(tmp_path)
    assert set(profile.security_markers) == {
        "src/auth.py",
        "src/OAuthClient.java",
        "lib/cryptography/keys.py",
        "pkg/permissions_test.go",
    }


def test_a_kept_profile_is_walked_again_only_when_a_folder_changed(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "main.py").write_text("x = 1\n")
    profiler = ProjectProfiler(tmp_path)
    first = profiler.current()
    again = profiler.current()
    (tmp_path / "app" / "auth.py").write_text("x = 1\n")
    after = profiler.current()
    assert first is again and profiler.walks == 2
    assert first.security_markers == () and after.security_markers == ("app/auth.py",)
