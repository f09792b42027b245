"""The parts of the consistency check: failing test ids as test runners print them, hunks of a real git worktree
(uncommitted and committed), and a retry that changed nothing after the failure that sent the run back to it."""

from __future__ import annotations

from pathlib import Path

from daemon.core.workflow_schema import FailureAggregation
from daemon.orchestration.consistency import RunDiffs, check_attempt, failing_tests
from daemon.orchestration.plan import assemble_plan
from daemon.orchestration.state import AgentOutcome, ExecutionState, StageResult
from tests.pipeline_support import builtin_catalog
from tests.vcs_support import git, make_repo, write

PYTEST_TAIL = """F.                                                                       [100%]
=================================== FAILURES ===================================
___________________________ test_basket_weights ___________________________
E       assert 9.0 == 11.0
=========================== short test summary info ============================
FAILED tests/test_basket.py::test_basket_weights - assert 9.0 == 11.0
ERROR tests/test_io.py::TestRead::test_empty[utf-8] - OSError
1 failed, 1 passed in 0.03s"""


def _result(stage_id: str, attempt: int, *, failed: bool, evidence: tuple[str, ...] = (), at: str = "") -> StageResult:
    agent = AgentOutcome(agent_id="a", failed=failed, summary="s", evidence=evidence)
    return StageResult(
        stage_id=stage_id,
        attempt=attempt,
        failed=failed,
        aggregation=FailureAggregation.ANY_FAILS,
        agents=(agent,),
        summary="red" if failed else "ok",
        started_at=at,
        finished_at=at + "z",
    )


def test_failing_tests_are_read_as_each_runner_prints_them() -> None:
    assert failing_tests(_result("t", 1, failed=True, evidence=(PYTEST_TAIL,))) == {
        "tests/test_basket.py::test_basket_weights",
        "tests/test_io.py::TestRead::test_empty[utf-8]",
    }
    unittest = "FAIL: test_add (tests.test_calc.CalcTest)\n----\nAssertionError"
    assert failing_tests(_result("t", 1, failed=True, evidence=(unittest,))) == {"tests.test_calc.CalcTest.test_add"}
    go = "--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 1"
    cargo = "test parser::tests::empty ... FAILED\ntest parser::tests::one ... ok"
    assert failing_tests(_result("t", 1, failed=True, evidence=(go, cargo))) == {"TestParse", "parser::tests::empty"}
    # a passing attempt names no failing test, whatever its output says
    assert failing_tests(_result("t", 1, failed=False, evidence=(PYTEST_TAIL,))) == set()


async def test_hunks_of_the_worktree_and_of_commits(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/a.py": "x = 1\ny = 2\n", "old.txt": "gone\n"})
    start = git(repo, "rev-parse", "HEAD")
    diffs = RunDiffs(repo, start=start)
    write(repo, "src/a.py", "x = 1\ny = 3\n")
    write(repo, "src/new.py", "def f():\n    return 1\n")
    (repo / "old.txt").unlink()
    pending = {(h.path, h.removed, h.added) for h in await diffs.pending_hunks()}
    assert pending == {
        ("src/a.py", ("y = 2",), ("y = 3",)),
        ("src/new.py", (), ("def f():", "    return 1")),
        ("old.txt", ("gone",), ()),
    }
    assert git(repo, "status", "--porcelain") != ""  # nothing was staged in the user's index
    assert git(repo, "diff", "--cached") == ""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "attempt")
    head = git(repo, "rev-parse", "HEAD")
    assert {(h.path, h.added) for h in await diffs.commit_hunks(head)} >= {("src/a.py", ("y = 3",))}
    assert await diffs.pending_hunks() == []
    assert "+y = 3" in await diffs.run_patch()


async def test_a_retry_that_changed_nothing_after_the_failure_that_sent_it_back(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    diffs = RunDiffs(repo, start=git(repo, "rev-parse", "HEAD"))
    catalog = builtin_catalog()
    workflow = catalog.workflows["feature_with_iterative_testing"]
    plan = assemble_plan(workflow, [], "add a thing")
    state = ExecutionState(
        stage_results={
            "implementation": [_result("implementation", 1, failed=False, at="1")],
            "test_writing": [_result("test_writing", 1, failed=False, at="2")],
            "test_execution": [_result("test_execution", 1, failed=True, at="3")],
        }
    )
    retry = _result("implementation", 2, failed=False, at="4")
    found = await check_attempt(plan, state, retry, diffs=diffs, pending=[])
    assert [f.kind for f in found] == ["no_change"] and found[0].refs == ("test_execution/1",)
    # test_writing runs again after the retry without changes: no failure sent the run back to it
    again = _result("test_writing", 2, failed=False, at="5")
    assert await check_attempt(plan, state, again, diffs=diffs, pending=[]) == ()
    # without a worktree (a run that edits nothing) only the tests are compared
    assert await check_attempt(plan, state, retry, diffs=None, pending=None) == ()
