"""The run service in process: what a front follows, and review feedback answered through the run's graph."""

from __future__ import annotations

from pathlib import Path

from daemon.core.run_models import ProgressKind, RunStatus
from daemon.service.runs.local import here
from daemon.service.runs.params import RunStart
from daemon.service.runs.review import RunReview
from daemon.service.runs.work import RunWork
from daemon.vcs.worktrees import RunWorktrees
from tests.integration.test_agents_runtime import (
    FEATURE,
    ONLY_IMPLEMENTATION,
    ORIGINAL,
    coder_writes,
    folder,
    ok,
    rest_succeeds,
    runtime_for,
)
from tests.pipeline_support import WAIT, choose


async def test_following_a_run_yields_its_own_events_from_start_to_finish_while_another_run_goes_on(
    tmp_path: Path,
) -> None:
    repo = folder(tmp_path / "repo")
    entries = [
        {"role": "orchestrator", "answer": choose(FEATURE, code_review="SKIP", documentation="SKIP")},
        {"role": "orchestrator", "answer": choose(FEATURE, code_review="SKIP", documentation="SKIP")},
        rest_succeeds(),
    ]
    async with runtime_for(tmp_path, repo, entries) as runtime:
        runs = here(RunWork(runtime, RunReview(RunWorktrees(repo, tmp_path / "state"), runtime.store)))
        async with (
            await runs.start(RunStart(request="explain add", mode="ask")) as first,
            await runs.start(RunStart(request="explain multiply", mode="ask")) as second,
        ):
            first_events = [e async for e in first]
            second_events = [e async for e in second]
        stored = await runs.events(first.run_id)
        finished = await runs.wait(first.run_id, wait_seconds=WAIT)
        detail = await runs.show(first.run_id, events=True)
        lean = await runs.show(second.run_id)
        decisions = await runs.decisions(first.run_id)
    assert first.run_id != second.run_id
    assert {e.run_id for e in first_events} == {first.run_id}
    assert {e.run_id for e in second_events} == {second.run_id}
    assert first_events[0].event is ProgressKind.RUN_STARTED  # listened to before the launch: nothing missed
    assert first_events[-1].event is ProgressKind.RUN_FINISHED and second_events[-1].event is ProgressKind.RUN_FINISHED
    assert [e.seq for e in first_events] == [e.seq for e in stored]
    assert finished.status is RunStatus.SUCCEEDED
    # show: the record, the decision log and (asked for) the events in one answer
    assert detail.record == finished and detail.decisions == tuple(decisions) and detail.decisions
    assert detail.events == tuple(stored)
    assert lean.record.run_id == second.run_id and lean.events == () and lean.decisions


async def test_a_second_feedback_is_the_next_attempt_and_every_attempt_is_in_the_runs_checkpoint(
    tmp_path: Path,
) -> None:
    repo = folder(tmp_path / "repo")
    with_product = ORIGINAL + "\n\ndef multiply(a, b):\n    return a * b\n"
    documented = ORIGINAL + '\n\ndef multiply(a, b):\n    """The product."""\n    return a * b\n'
    typed = ORIGINAL + '\n\ndef multiply(a: int, b: int) -> int:\n    """The product."""\n    return a * b\n'
    entries = [
        ONLY_IMPLEMENTATION,
        coder_writes(with_product, match=r"Attempt: 1\b"),
        {"role": "coder", "match": r"Attempt: 1\b", **ok("multiply added")},
        coder_writes(documented, match=r"(?s)Attempt: 2\b.*add a docstring"),
        {"role": "coder", "match": r"(?s)Attempt: 2\b.*add a docstring", **ok("docstring added")},
        coder_writes(typed, match=r"(?s)Attempt: 3\b.*add type hints"),
        {"role": "coder", "match": r"(?s)Attempt: 3\b.*add type hints", **ok("hints added")},
        rest_succeeds(),
    ]
    async with runtime_for(tmp_path, repo, entries) as runtime:
        runs = here(RunWork(runtime, RunReview(RunWorktrees(repo, tmp_path / "state"), runtime.store)))
        async with await runs.start(RunStart(request="Add a multiply function")) as run:
            _ = [e async for e in run]
        for text in ("please add a docstring", "please add type hints"):
            async with await runs.feedback(run.run_id, text) as answered:
                trail = [e async for e in answered]
            assert trail[-1].event is ProgressKind.RUN_FINISHED
        record = await runs.wait(run.run_id, wait_seconds=WAIT)
        state = await runtime.state(run.run_id)
        changes = await runs.diff(run.run_id)
    assert record.status is RunStatus.SUCCEEDED and record.follow_ups == 2
    assert record.stop is not None and "implementation attempt 3 succeeded" in record.stop.reason
    assert state is not None
    attempts = state.stage_results["implementation"]
    assert [(r.attempt, r.feedback) for r in attempts] == [
        (1, None),
        (2, "please add a docstring"),
        (3, "please add type hints"),
    ]
    assert state.attempts["implementation"] == 3
    assert len(changes.commits) == 3 and [c.attempt for c in changes.commits] == [1, 2, 3]
    assert "a: int, b: int" in changes.diff
    assert (repo / "src" / "calc.py").read_text() == ORIGINAL
