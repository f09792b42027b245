"""The reflector and the evaluator on a real git repository with a real pytest and scripted models: a send-back
before the commit, then an accept; a send-back past reflection.max_rounds left open; the evaluator's score in the
stop decision, and a score under evaluation.pass_score failing the run. The workflow is the shipped feature
workflow with both switched on, as a user writes it in the repository's .ided/workflows/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from daemon.core.run_models import DecisionKind, ProgressKind, RunStatus
from tests.pipeline_support import (
    BASKET_BUGGY,
    BASKET_FIXED,
    BASKET_TEST,
    choose,
    reflected_workflow,
    run_basket_task,
)
from tests.vcs_support import git

NAME = "feature_reflected"

BUGGY = BASKET_BUGGY
FIXED = BASKET_FIXED
TEST = BASKET_TEST
DONE: dict[str, Any] = {"status": "success", "summary": "done", "evidence": []}
CRITIQUE = "basket_product adds the sums instead of weighting each price"


def _writes(role: str, match: str, files: dict[str, str], summary: str) -> list[dict[str, Any]]:
    calls = [{"name": "write_file", "args": {"path": p, "content": t}} for p, t in files.items()]
    return [
        {"role": role, "match": match, "tool_calls": calls},
        {"role": role, "match": match, "answer": {**DONE, "summary": summary}},
    ]


def _common() -> list[dict[str, Any]]:
    return [
        {
            "role": "orchestrator",
            "answer": choose(NAME, requirements_analysis="SKIP", code_review="SKIP", documentation="SKIP"),
        },
        *_writes("test_writer", r"Attempt: 1\b", {"tests/test_basket.py": TEST}, "test written"),
        {"role": "test_runner", "answer": {**DONE, "summary": "ran the tests"}, "repeat": True},
    ]


async def test_the_reflector_sends_an_attempt_back_before_its_commit_then_accepts_it(tmp_path: Path) -> None:
    workflow = reflected_workflow(
        NAME,
        "feature_with_iterative_testing",
        reflection={"enabled": True, "stages": ["implementation"], "max_rounds": 2},
        evaluation={"enabled": True},
    )
    script: list[dict[str, Any]] = [
        *_common(),
        *_writes("coder", r"Attempt: 1\b(?![\s\S]*Reflection round)", {"src/basket.py": BUGGY}, "basket_product"),
        {
            "role": "reflector",
            "match": r"Stage: implementation\nAttempt: 1\nReflection round: 1\b",
            "answer": {"verdict": "send_back", "critique": CRITIQUE, "issues": ["sum(prices) + sum(weights)"]},
        },
        # the coder's second round is answered only with the critique in its prompt
        *_writes("coder", rf"Reflection round: 2[\s\S]*{CRITIQUE}", {"src/basket.py": FIXED}, "weighted now"),
        {
            "role": "reflector",
            "match": r"Reflection round: 2\b[\s\S]*zip\(prices, weights\)",  # it reads the revised change
            "answer": {"verdict": "accept", "critique": "each price is weighted", "issues": []},
        },
        {
            "role": "evaluator",
            "match": r"test_execution attempt 1 succeeded",
            "answer": {"score": 8, "summary": "does what was asked, tested", "strengths": ["a test"], "issues": []},
        },
    ]
    done = await run_basket_task(tmp_path, script, files={f".ided/workflows/{NAME}.yaml": workflow})
    record, state, log, events, repo = done.record, done.state, done.log, done.events, done.repo

    assert record.status is RunStatus.SUCCEEDED, record.stop
    assert state.attempts["implementation"] == 1  # a send-back is a round of the same attempt, not a retry
    [impl] = state.stage_results["implementation"]
    assert [(c.round, c.verdict) for c in impl.critiques] == [(1, "send_back"), (2, "accept")]
    assert impl.critiques[0].critique == CRITIQUE
    assert impl.commit is not None
    # only the accepted version was committed: the sent-back one never reached the branch
    branch = record.changes.branch
    history = git(repo, "log", "-p", f"{record.changes.base_commit}..{branch}")
    assert "zip(prices, weights)" in history and "sum(prices) + sum(weights)" not in history
    assert len(record.changes.commits) == 2  # implementation, test_writing

    reflections = [e for e in log if e.kind is DecisionKind.REFLECTION]
    assert [e.data["verdict"] for e in reflections] == ["send_back", "accept"]
    assert reflections[0].data["sent_back"] is True and CRITIQUE in reflections[0].summary
    assert state.evaluation is not None and state.evaluation.score == 8
    assert [e.summary for e in log if e.kind is DecisionKind.EVALUATION] == [
        "evaluator scored 8/10: does what was asked, tested"
    ]
    assert record.stop is not None and "evaluator scored 8/10" in record.stop.reason
    started = [e.node for e in events if e.event is ProgressKind.NODE_STARTED]
    assert started == [
        "implementation",
        "reflector",
        "implementation",
        "reflector",
        "test_writing",
        "test_execution",
        "evaluator",
        "done",
    ]
    assert [e.stage_name for e in events if e.event is ProgressKind.NODE_FINISHED and e.node == "reflector"] == [
        "Reflector",
        "Reflector",
    ]


async def test_send_backs_stop_at_max_rounds_and_a_low_score_fails_the_run(tmp_path: Path) -> None:
    workflow = reflected_workflow(
        NAME,
        "feature_with_iterative_testing",
        reflection={"enabled": True, "max_rounds": 1},
        evaluation={"enabled": True, "pass_score": 6},
    )
    script: list[dict[str, Any]] = [
        *_common(),
        *_writes("coder", r"Attempt: 1\b(?![\s\S]*Reflection round)", {"src/basket.py": FIXED}, "written"),
        {"role": "coder", "match": r"Reflection round: 2\b", "answer": {**DONE, "summary": "kept as it is"}},
        {
            "role": "reflector",
            "match": r"Stage: implementation\n",
            "answer": {"verdict": "send_back", "critique": "name the variables better", "issues": []},
            "repeat": True,
        },
        {"role": "reflector", "match": r"Stage: test_writing\n", "answer": {"verdict": "accept", "critique": "ok"}},
        {"role": "evaluator", "answer": {"score": 3, "summary": "works, but unreadable"}},
    ]
    done = await run_basket_task(tmp_path, script, files={f".ided/workflows/{NAME}.yaml": workflow})
    record, state, log = done.record, done.state, done.log

    [impl] = state.stage_results["implementation"]
    assert [(c.round, c.verdict) for c in impl.critiques] == [(1, "send_back"), (2, "send_back")]
    assert impl.critiques[1].note == "reflection.max_rounds=1 reached" and impl.commit is not None
    [tests] = state.stage_results["test_writing"]  # reflected by default: a test_writing stage
    assert [c.verdict for c in tests.critiques] == ["accept"]
    assert [e.data["sent_back"] for e in log if e.kind is DecisionKind.REFLECTION] == [True, False, False]
    assert not state.stage_results["test_execution"][-1].failed
    assert record.status is RunStatus.FAILED, record.stop
    assert record.stop is not None
    assert "evaluator scored 3/10: works, but unreadable (under evaluation.pass_score 6)" in record.stop.reason
