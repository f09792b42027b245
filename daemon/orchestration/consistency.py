"""Consistency across attempts: a stage attempt checked against what the run's earlier attempts tried and what failed.

The design's validation layer asks "does code contradict previous iterations?". After a stage attempt's
agents finish (before its change is committed), ``check_attempt`` compares it with the run's earlier
attempts and answers findings (``ConsistencyFinding``):

- ``test_failed_again``: a test stage failed on a test that failed in one of its earlier attempts (test ids
  as pytest, unittest, go test and cargo test print them), with whether anything was committed since;
- ``hunk_returned``: the attempt puts back lines that an earlier attempt added and a later one took out
  (the change a failure made the run revert comes back);
- ``contradicts_accepted``: the attempt takes out lines another stage wrote in an attempt that succeeded
  (the implementation editing the accepted tests, say);
- ``no_change``: a retry of an editing stage after a failure that sends the run back to it (its own, or one
  whose ``retry_stage`` it is) changed no file (the code the failure was about is the same).

Each finding names the stages it concerns (for a repeated failing test, the stage the retry goes to
first); the graph records findings on the attempt's ``StageResult``, logs them (``consistency`` in the
decision log), says them as a ``thought`` event, and hands every finding that concerns a stage to its
agents' next prompts (``findings_for``). Lines are compared stripped, and only lines with some substance
(three word characters or more), so a closing bracket never makes a finding.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from daemon.core.run_models import ExecutionPlan
from daemon.orchestration.agents.roles import EDITING_STAGE_TYPES
from daemon.orchestration.state import ConsistencyFinding, ExecutionState, StageResult
from daemon.vcs.attempt_diffs import DiffHunk, WorktreeDiffs

__all__ = ["RunDiffs", "check_attempt", "failing_tests", "findings_for"]

_TEST_IDS = (
    re.compile(r"(?:FAILED|ERROR)\s+([\w./\\-]+::[^\s]+)"),  # pytest's short summary
    re.compile(r"([\w./\\-]+\.py::[^\s]+)\s+(?:FAILED|ERROR)\b"),  # pytest -v
    re.compile(r"^(?:FAIL|ERROR): (\w+) \(([\w.]+)\)", re.MULTILINE),  # unittest
    re.compile(r"--- FAIL: (\S+)"),  # go test
    re.compile(r"^test (\S+) \.\.\. FAILED", re.MULTILINE),  # cargo test
)
_SUBSTANCE = re.compile(r"\w")
_MAX_PROMPT_FINDINGS = 8


class RunDiffs:
    """A run worktree's diffs (``WorktreeDiffs``) read in worker threads."""

    def __init__(self, worktree: Path, *, start: str) -> None:
        self._diffs = WorktreeDiffs(worktree, start=start)

    async def pending_hunks(self) -> list[DiffHunk]:
        return await asyncio.to_thread(self._diffs.pending_hunks)

    async def pending_patch(self) -> str:
        return await asyncio.to_thread(self._diffs.pending_patch)

    async def commit_hunks(self, commit: str) -> list[DiffHunk]:
        return await asyncio.to_thread(self._diffs.commit_hunks, commit)

    async def run_patch(self) -> str:
        return await asyncio.to_thread(self._diffs.run_patch)


def failing_tests(result: StageResult) -> set[str]:
    """The tests a failed attempt's agents name as failing (from their summaries, evidence and answers)."""
    found: set[str] = set()
    for agent in result.agents:
        if not agent.failed:
            continue
        for text in (agent.summary, agent.output, agent.error or "", *agent.evidence):
            for pattern in _TEST_IDS:
                for match in pattern.finditer(text):
                    found.add(".".join(reversed(match.groups())) if len(match.groups()) > 1 else match[1])
    return {t.rstrip(",;:") for t in found}


def _substantial(lines: Iterable[str]) -> set[str]:
    return {line.strip() for line in lines if len(_SUBSTANCE.findall(line)) >= 3}


def _ref(result: StageResult) -> str:
    return f"{result.stage_id}/{result.attempt}"


def _history(state: ExecutionState) -> list[StageResult]:
    """Every recorded attempt of the run, in the order they ran."""
    results = [r for rs in state.stage_results.values() for r in rs]
    return sorted(results, key=lambda r: (r.started_at, r.finished_at))


def _quote(lines: Iterable[str]) -> str:
    shown = sorted(lines, key=len, reverse=True)[:2]
    return "; ".join(f"`{line[:100]}`" for line in shown)


def _tests_again(plan: ExecutionPlan, state: ExecutionState, result: StageResult) -> list[ConsistencyFinding]:
    now: set[str] = failing_tests(result) if result.failed else set[str]()
    if not now:
        return []
    stage_id = result.stage_id
    earlier = [r for r in state.stage_results.get(stage_id, []) if r.failed and failing_tests(r) & now]
    if not earlier:
        return []
    again = sorted(now & set[str]().union(*(failing_tests(r) for r in earlier)))
    last = earlier[-1]
    history = _history(state)
    commits = [r for r in history if r.commit and r.started_at >= last.finished_at]
    attempts = ", ".join(str(r.attempt) for r in earlier)
    since = (
        f"{len(commits)} commit(s) since ({', '.join(_ref(r) for r in commits)}) did not fix it"
        if commits
        else "nothing was committed since: the code under test is the one that failed before"
    )
    retry = plan.routing[stage_id].retry if stage_id in plan.routing else stage_id
    text = (
        f"{', '.join(again)} failed again in {stage_id} attempt {result.attempt}, as in attempt(s) {attempts}; "
        f"{since}. Do not repeat what those attempts tried: find why this test fails."
    )
    return [
        ConsistencyFinding(
            kind="test_failed_again",
            stage_id=stage_id,
            attempt=result.attempt,
            concerns=tuple(dict.fromkeys((retry, stage_id))),
            text=text,
            refs=tuple(_ref(r) for r in earlier),
            tests=tuple(again),
        )
    ]


async def _hunk_findings(
    result: StageResult, history: Sequence[StageResult], pending: Sequence[DiffHunk], diffs: RunDiffs
) -> list[ConsistencyFinding]:
    stage_id, attempt = result.stage_id, result.attempt
    committed = [(r, await diffs.commit_hunks(r.commit)) for r in history if r.commit]
    returned: dict[tuple[str, str, str], set[str]] = {}
    contradicted: dict[tuple[str, str], set[str]] = {}
    for hunk in pending:
        added = _substantial(hunk.added)
        # lines an earlier attempt (m) took out, which a still earlier one (k) had put in
        for i in range(len(committed) - 1, 0, -1):
            m, m_hunks = committed[i]
            taken_out = added & _substantial(line for h in m_hunks if h.path == hunk.path for line in h.removed)
            if not taken_out:
                continue
            for k, k_hunks in reversed(committed[:i]):
                put_in = taken_out & _substantial(line for h in k_hunks if h.path == hunk.path for line in h.added)
                if put_in:
                    returned.setdefault((hunk.path, _ref(k), _ref(m)), set()).update(put_in)
                    break
            break
        # lines another stage wrote in an attempt that succeeded
        removed = _substantial(hunk.removed)
        for k, k_hunks in committed:
            if k.stage_id == stage_id or k.failed or not removed:
                continue
            overlap = removed & _substantial(line for h in k_hunks if h.path == hunk.path for line in h.added)
            if overlap:
                contradicted.setdefault((hunk.path, _ref(k)), set()).update(overlap)
    findings = [
        ConsistencyFinding(
            kind="hunk_returned",
            stage_id=stage_id,
            attempt=attempt,
            concerns=(stage_id,),
            text=(
                f"{stage_id} attempt {attempt} puts back {len(lines)} line(s) of {path} that {k} added and {m} took "
                f"out ({_quote(lines)}): a change the run already tried and reverted comes back."
            ),
            refs=(k, m),
            paths=(path,),
        )
        for (path, k, m), lines in returned.items()
    ]
    findings.extend(
        ConsistencyFinding(
            kind="contradicts_accepted",
            stage_id=stage_id,
            attempt=attempt,
            concerns=(stage_id,),
            text=(
                f"{stage_id} attempt {attempt} changes {len(lines)} line(s) of {path} that {k} wrote in an attempt "
                f"that succeeded ({_quote(lines)}): it contradicts accepted work; change it only if it is wrong, "
                "and say why."
            ),
            refs=(k,),
            paths=(path,),
        )
        for (path, k), lines in contradicted.items()
    )
    return findings


def _unchanged_retry(
    plan: ExecutionPlan, state: ExecutionState, result: StageResult, history: Sequence[StageResult]
) -> list[ConsistencyFinding]:
    stage_id = result.stage_id
    before = state.stage_results.get(stage_id, [])
    if not before or plan.stage(stage_id).type not in EDITING_STAGE_TYPES:
        return []
    failures = [
        r
        for r in history
        if r.failed
        and r.started_at >= before[-1].finished_at
        and stage_id in (r.stage_id, plan.routing[r.stage_id].retry if r.stage_id in plan.routing else None)
    ]
    if not failures:
        return []
    failure = failures[-1]
    return [
        ConsistencyFinding(
            kind="no_change",
            stage_id=stage_id,
            attempt=result.attempt,
            concerns=(stage_id,),
            text=(
                f"{stage_id} attempt {result.attempt} changed no file after {_ref(failure)} failed "
                f"({failure.summary[:200]}): the code that failed is unchanged."
            ),
            refs=(_ref(failure),),
        )
    ]


async def check_attempt(
    plan: ExecutionPlan,
    state: ExecutionState,
    result: StageResult,
    *,
    diffs: RunDiffs | None,
    pending: Sequence[DiffHunk] | None,
) -> tuple[ConsistencyFinding, ...]:
    """``result`` (not yet in ``state``) checked against the run's earlier attempts. ``pending``: what the
    attempt changed (None when the run edits nothing: then only the tests are compared)."""
    findings = _tests_again(plan, state, result)
    if diffs is not None and pending is not None:
        history = _history(state)
        if pending:
            findings.extend(await _hunk_findings(result, history, pending, diffs))
        else:
            findings.extend(_unchanged_retry(plan, state, result, history))
    return tuple(findings)


def findings_for(state: ExecutionState, stage_id: str) -> tuple[ConsistencyFinding, ...]:
    """The run's findings that concern ``stage_id``, oldest first, the last few when there are many."""
    seen: dict[str, ConsistencyFinding] = {}
    for result in _history(state):
        for finding in result.consistency:
            if stage_id in finding.concerns:
                seen.setdefault(finding.text, finding)
    return tuple(seen.values())[-_MAX_PROMPT_FINDINGS:]
