"""Consistency across attempts, on a real git repository with a real pytest: a retry that repeats what failed is
reported (decision log, the attempt's result, the next prompt of the stage that must fix it), one that does not
is not.

The scripted coder's later entries match only when the prompt carries the findings, so a finding that does not
reach the agents leaves the coder without an answer and the run aborts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from daemon.core.run_models import DecisionKind, RunStatus
from tests.pipeline_support import BASKET_BUGGY, BASKET_FIXED, BASKET_TEST, choose, run_basket_task

FEATURE = "feature_with_iterative_testing"
TEST_ID = "tests/test_basket.py::test_basket_product_weights_each_price"

BUGGY = BASKET_BUGGY
OTHER_BUG = BUGGY.replace("sum(prices) + sum(weights)", "sum(prices) * sum(weights)")
FIXED = BASKET_FIXED
TEST = BASKET_TEST
EDITED_TEST = TEST.replace("== 11.0", "== 12.0")
DONE: dict[str, Any] = {"status": "success", "summary": "done", "evidence": []}


def _coder(attempt: int, files: dict[str, str], *, match: str = "", lacks: str = "") -> list[dict[str, Any]]:
    """Two entries of the coder's attempt: its writes, then its answer; ``match``: a pattern the prompt must also
    fit after the attempt line (lookaheads), ``lacks``: what it must not hold anywhere."""
    pattern = (rf"^(?![\s\S]*{lacks})[\s\S]*" if lacks else "") + rf"Attempt: {attempt}\b"
    pattern += match
    writes = [{"name": "write_file", "args": {"path": path, "content": text}} for path, text in files.items()]
    return [
        {"role": "coder", "match": pattern, "tool_calls": writes},
        {"role": "coder", "match": pattern, "answer": {**DONE, "summary": f"attempt {attempt} written"}},
    ]


def _common() -> list[dict[str, Any]]:
    return [
        {
            "role": "orchestrator",
            "answer": choose(FEATURE, requirements_analysis="SKIP", code_review="SKIP", documentation="SKIP"),
        },
        {
            "role": "test_writer",
            "match": r"Attempt: 1\b",
            "tool_calls": [{"name": "write_file", "args": {"path": "tests/test_basket.py", "content": TEST}}],
        },
        {"role": "test_writer", "answer": {**DONE, "summary": "test written"}, "repeat": True},
        {"role": "test_runner", "answer": {**DONE, "summary": "ran the tests"}, "repeat": True},
    ]


async def test_a_retry_that_repeats_what_failed_is_reported_to_the_log_and_the_next_prompt(tmp_path: Path) -> None:
    script = [
        *_common(),
        *_coder(1, {"src/basket.py": BUGGY}),
        # attempt 2 tries another formula and edits the test that test_writing wrote and that passed its stage
        *_coder(2, {"src/basket.py": OTHER_BUG, "tests/test_basket.py": EDITED_TEST}),
        # attempt 3 is answered only when its prompt says the test failed again and the accepted test was changed;
        # it puts back attempt 1's formula, which attempt 2 took out
        *_coder(3, {"src/basket.py": BUGGY}, match=r"(?=[\s\S]*failed again)(?=[\s\S]*test_writing/1 wrote)"),
    ]
    done = await run_basket_task(tmp_path, script)
    record, state, log = done.record, done.state, done.log

    assert record.status is RunStatus.FAILED, record.stop  # the test never passed: three red attempts
    assert state.attempts["implementation"] == 3, state.attempts  # attempt 3 was answered: the prompt had both
    runs = state.stage_results["test_execution"]
    assert [r.failed for r in runs] == [True, True, True]
    assert runs[0].consistency == ()
    again = runs[1].consistency
    assert [f.kind for f in again] == ["test_failed_again"], again
    assert again[0].tests == (TEST_ID,)
    assert again[0].concerns == ("implementation", "test_execution")
    assert "1 commit(s) since (implementation/2)" in again[0].text

    impl = state.stage_results["implementation"]
    assert impl[0].consistency == ()
    contradiction = [f for f in impl[1].consistency if f.kind == "contradicts_accepted"]
    assert contradiction and contradiction[0].paths == ("tests/test_basket.py",), impl[1].consistency
    assert contradiction[0].refs == ("test_writing/1",)
    returned = [f for f in impl[2].consistency if f.kind == "hunk_returned"]
    assert returned, impl[2].consistency
    assert returned[0].refs == ("implementation/1", "implementation/2")
    assert returned[0].paths == ("src/basket.py",)
    assert "sum(prices) + sum(weights)" in returned[0].text

    logged = [e for e in log if e.kind is DecisionKind.CONSISTENCY]
    kinds = [e.data["kind"] for e in logged]
    assert kinds.count("test_failed_again") == 2 and "hunk_returned" in kinds and "contradicts_accepted" in kinds
    assert any("failed again" in e.summary and TEST_ID in e.summary for e in logged)


async def test_a_retry_that_fixes_the_failure_is_not_reported(tmp_path: Path) -> None:
    script = [
        *_common(),
        *_coder(1, {"src/basket.py": BUGGY}),
        # attempt 2 is answered only when its prompt holds no finding
        *_coder(2, {"src/basket.py": FIXED}, lacks="Checked against the earlier attempts"),
    ]
    done = await run_basket_task(tmp_path, script)
    record, state, log = done.record, done.state, done.log

    assert record.status is RunStatus.SUCCEEDED, record.stop
    assert [r.failed for r in state.stage_results["test_execution"]] == [True, False]
    assert state.stage_results["implementation"][1].commit is not None  # the fix replaced attempt 1's line
    assert [f for rs in state.stage_results.values() for r in rs for f in r.consistency] == []
    assert not [e for e in log if e.kind is DecisionKind.CONSISTENCY]
