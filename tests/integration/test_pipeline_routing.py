"""Every routing path of the two seed workflows, end to end through the runtime, driven by replay scripts.

The scripted model answers per role (agent id) and attempt; a retry only finds its answer when the
enriched context carries the failure report, which proves the adaptive-retrieval hand-off.
"""

from __future__ import annotations

from pathlib import Path

from daemon.core.run_models import DecisionKind, RunStatus, StopStatus
from tests.pipeline_support import (
    WAIT,
    answer,
    choose,
    everyone_succeeds,
    open_runtime,
    outcomes,
    replay_config,
    trail,
    write_script,
)

FEATURE = "feature_with_iterative_testing"
ARCH = "architecture_discussion"


def feature_choice(**over: str) -> dict[str, object]:
    decisions = {"requirements_analysis": "SKIP", "code_review": "INCLUDE", "documentation": "SKIP", **over}
    return {"role": "orchestrator", "answer": choose(FEATURE, **decisions)}


def arch_choice(prior_art: str = "SKIP") -> dict[str, object]:
    return {"role": "orchestrator", "answer": choose(ARCH, prior_art_research=prior_art)}


async def test_feature_success_path_runs_every_included_stage_once_and_succeeds(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [feature_choice(requirements_analysis="INCLUDE", documentation="INCLUDE"), everyone_succeeds()],
    )
    async with open_runtime(tmp_path / "state", replay_config(script)) as runtime:
        record = await runtime.run("Add a --json flag to the status command", wait_seconds=WAIT)
        events = await runtime.events(record.run_id)
        log = await runtime.decision_log(record.run_id)
    assert record.status is RunStatus.SUCCEEDED
    assert record.stop is not None and record.stop.status is StopStatus.SUCCESS
    assert trail(events) == [
        "requirements_analysis",
        "implementation",
        "test_writing",
        "test_execution",
        "code_review",
        "documentation",
        "done",
    ]
    routes = [e.summary for e in log if e.kind is DecisionKind.ROUTE]
    assert routes[-1].startswith("documentation -> done (success)")
    assert len(record.stop.evidence_refs) == 6


async def test_feature_test_failure_enriches_then_retries_implementation_and_succeeds(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            feature_choice(),
            answer("test_runner", "failure", "test_multiply fails with NameError", attempt=1),
            # the retried coder only answers when its prompt carries the failure report from adaptive retrieval
            {
                "role": "coder",
                "match": r"Attempt: 2\b[\s\S]*test_execution attempt 1 failed: test_multiply fails",
                "answer": {"status": "success", "summary": "fixed multiply"},
            },
            answer("coder", attempt=1),
            {"role": "test_writer", "answer": {"status": "success", "summary": "tests"}, "repeat": True},
            {"role": "test_runner", "match": r"Attempt: 2\b", "answer": {"status": "success", "summary": "green"}},
            {"role": "reviewer", "answer": {"status": "success", "summary": "ok"}},
            {"role": "security_reviewer", "answer": {"status": "success", "summary": "ok"}},
        ],
    )
    async with open_runtime(tmp_path / "state", replay_config(script)) as runtime:
        record = await runtime.run("Add a multiply function", wait_seconds=WAIT)
        events = await runtime.events(record.run_id)
        log = await runtime.decision_log(record.run_id)
        state = await runtime.state(record.run_id)
    assert record.status is RunStatus.SUCCEEDED, record.stop
    assert trail(events) == [
        "implementation",
        "test_writing",
        "test_execution",
        "adaptive_retrieval",
        "implementation",
        "test_writing",
        "test_execution",
        "code_review",
        "done",
    ]
    assert state is not None
    assert state.enrichment_attempts == {"test_execution": 1}
    assert state.attempts["implementation"] == 2
    retry = [e for e in log if e.kind is DecisionKind.RETRY]
    assert [e.data["target"] for e in retry] == ["implementation"]
    enrich_route = next(e for e in log if e.kind is DecisionKind.ROUTE and "adaptive_retrieval" in e.summary)
    assert "enrichment_attempts[test_execution]=0 < 2" in enrich_route.summary


async def test_feature_tests_failing_past_the_limit_go_to_next_stage_on_failure_and_stop_as_failure(
    tmp_path: Path,
) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            feature_choice(),
            {"role": "test_runner", "answer": {"status": "failure", "summary": "still red"}, "repeat": True},
            everyone_succeeds(),
        ],
    )
    async with open_runtime(tmp_path / "state", replay_config(script)) as runtime:
        record = await runtime.run("Add a multiply function", wait_seconds=WAIT)
        events = await runtime.events(record.run_id)
        state = await runtime.state(record.run_id)
    assert trail(events).count("adaptive_retrieval") == 2
    assert trail(events)[-2:] == ["code_review", "done"]
    assert state is not None and state.attempts["test_execution"] == 3
    last_route = state.routes[-2]
    assert last_route.source == "test_execution" and last_route.target == "code_review"
    assert "enrichment_attempts[test_execution]=2 >= 2" in last_route.condition
    assert record.status is RunStatus.FAILED
    assert record.stop is not None and "test_execution" in record.stop.reason
    assert record.stop.evidence_refs == (f"run:{record.run_id}/stage:test_execution/attempt:3",)


async def test_feature_implementation_failing_past_the_limit_aborts(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            feature_choice(),
            {"role": "coder", "answer": {"status": "failure", "summary": "does not compile"}, "repeat": True},
            everyone_succeeds(),
        ],
    )
    async with open_runtime(tmp_path / "state", replay_config(script)) as runtime:
        record = await runtime.run("Add a multiply function", wait_seconds=WAIT)
        events = await runtime.events(record.run_id)
    assert trail(events) == [
        "implementation",
        "adaptive_retrieval",
        "implementation",
        "adaptive_retrieval",
        "implementation",
        "abort",
    ]
    assert record.status is RunStatus.ABORTED
    assert record.stop is not None and record.stop.status is StopStatus.ABORTED
    assert "next_stage_on_failure" in record.stop.reason


async def test_feature_code_review_fails_when_any_reviewer_fails(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            feature_choice(),
            answer("security_reviewer", "failure", "SQL built by string concatenation", attempt=1),
            everyone_succeeds(),
        ],
    )
    async with open_runtime(tmp_path / "state", replay_config(script)) as runtime:
        record = await runtime.run("Add a search endpoint", wait_seconds=WAIT)
        events = await runtime.events(record.run_id)
    finished = outcomes(events)
    assert ("code_review", "failed") in finished
    # review failure -> adaptive retrieval -> retry of the implementation, then the review passes
    assert trail(events)[4:] == [
        "adaptive_retrieval",
        "implementation",
        "test_writing",
        "test_execution",
        "code_review",
        "done",
    ]
    assert record.status is RunStatus.SUCCEEDED


async def test_architecture_success_path_routes_around_the_skipped_prior_art_stage(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.yaml", [arch_choice("SKIP"), everyone_succeeds()])
    async with open_runtime(tmp_path / "state", replay_config(script)) as runtime:
        record = await runtime.run("Should we move run records to Postgres?", wait_seconds=WAIT)
        events = await runtime.events(record.run_id)
    assert trail(events) == ["context_gathering", "options_analysis", "trade_off_review", "decision_record", "done"]
    assert record.plan is not None and [s.stage_id for s in record.plan.skipped] == ["prior_art_research"]
    assert record.status is RunStatus.SUCCEEDED


async def test_architecture_context_gathering_succeeds_unless_all_its_agents_fail(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            arch_choice("INCLUDE"),
            answer("decision_log_reader", "failure", "no decision log", attempt=1),
            everyone_succeeds(),
        ],
    )
    async with open_runtime(tmp_path / "state", replay_config(script)) as runtime:
        record = await runtime.run("Should we move run records to Postgres?", wait_seconds=WAIT)
        events = await runtime.events(record.run_id)
    assert outcomes(events)[0] == ("context_gathering", "succeeded")
    assert trail(events)[:3] == ["context_gathering", "prior_art_research", "options_analysis"]
    assert record.status is RunStatus.SUCCEEDED


async def test_architecture_majority_objection_sends_options_back_then_review_passes(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            arch_choice(),
            answer("performance_reviewer", "failure", "latency budget exceeded", attempt=1),
            answer("operations_reviewer", "failure", "no migration path", attempt=1),
            answer("maintainability_reviewer", attempt=1),
            everyone_succeeds(),
        ],
    )
    async with open_runtime(tmp_path / "state", replay_config(script)) as runtime:
        record = await runtime.run("Which approach for caching: Redis or in-process?", wait_seconds=WAIT)
        events = await runtime.events(record.run_id)
    assert trail(events) == [
        "context_gathering",
        "options_analysis",
        "trade_off_review",
        "adaptive_retrieval",
        "options_analysis",
        "trade_off_review",
        "decision_record",
        "done",
    ]
    assert record.status is RunStatus.SUCCEEDED


async def test_architecture_single_objection_does_not_fail_a_majority_review(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [arch_choice(), answer("performance_reviewer", "failure", "latency", attempt=1), everyone_succeeds()],
    )
    async with open_runtime(tmp_path / "state", replay_config(script)) as runtime:
        record = await runtime.run("Which approach for caching?", wait_seconds=WAIT)
        events = await runtime.events(record.run_id)
    assert ("trade_off_review", "succeeded") in outcomes(events)
    assert "adaptive_retrieval" not in trail(events)
    assert record.status is RunStatus.SUCCEEDED


async def test_architecture_review_failing_past_the_limit_records_the_decision_but_fails(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            arch_choice(),
            {"role": "performance_reviewer", "answer": {"status": "failure", "summary": "too slow"}, "repeat": True},
            {"role": "operations_reviewer", "answer": {"status": "failure", "summary": "no ops story"}, "repeat": True},
            everyone_succeeds(),
        ],
    )
    async with open_runtime(tmp_path / "state", replay_config(script)) as runtime:
        record = await runtime.run("Which approach for caching?", wait_seconds=WAIT)
        events = await runtime.events(record.run_id)
    assert trail(events)[-2:] == ["decision_record", "done"]
    assert trail(events).count("trade_off_review") == 3
    assert record.status is RunStatus.FAILED
    assert record.stop is not None and "trade_off_review" in record.stop.reason


async def test_architecture_aborts_when_no_context_is_found_within_max_attempts(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            arch_choice(),
            {"role": "docs_researcher", "answer": {"status": "failure", "summary": "nothing"}, "repeat": True},
            {"role": "decision_log_reader", "answer": {"status": "failure", "summary": "nothing"}, "repeat": True},
        ],
    )
    async with open_runtime(tmp_path / "state", replay_config(script)) as runtime:
        record = await runtime.run("Should we adopt event sourcing?", wait_seconds=WAIT)
        events = await runtime.events(record.run_id)
    assert trail(events) == ["context_gathering", "adaptive_retrieval", "context_gathering", "abort"]
    assert record.status is RunStatus.ABORTED
    assert record.stop is not None and "max_attempts=2" in record.stop.reason
