"""Runs owned by the workspace daemon: started through one connection, followed, reviewed from another.

A real daemon (spawned as ``ided daemon --detach``) in a temp git repository; the LLM is the scripted
(replay) provider the daemon reads from ``IDED_PIPELINE__REPLAY_SCRIPT``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from daemon.config import load_config
from daemon.core.run_models import DecisionKind, ProgressKind, RunRecord, RunStatus
from daemon.errors import DaemonError, ErrorCode
from daemon.service.intel.capabilities import DEFINITION
from daemon.service.runs.opening import open_run_service
from daemon.service.runs.params import RunStart
from daemon.service.runs.remote import DaemonRuns, attach_runs
from daemon.service.runs.service import RunService
from daemon.service.wire.api import DaemonStatus, Methods
from daemon.service.wire.client import DaemonClient, DaemonUnavailable
from tests.e2e.test_daemon import _wait_gone
from tests.e2e.test_mcp_stdio import _env
from tests.e2e.test_pipeline_intel_tools import debugger_asks_for_a_definition
from tests.integration.test_agents_runtime import ONLY_IMPLEMENTATION, ORIGINAL, coder_writes, folder, ok, rest_succeeds
from tests.pipeline_support import WAIT, choose, everyone_succeeds, write_script

pytestmark = pytest.mark.e2e


def _daemon_pid(runs: RunService) -> int:
    transport = runs.transport
    assert isinstance(transport, DaemonRuns)
    return transport.daemon_pid


def _head(repo: Path) -> str:
    log = subprocess.run(["git", "log", "-1", "--format=%H"], cwd=repo, capture_output=True, text=True, check=True)
    return log.stdout.strip()


WITH_PRODUCT = ORIGINAL + "\n\ndef multiply(a, b):\n    return a * b\n"


def _repo_with_daemon_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh repository, with this test's state and home for every daemon it starts."""
    repo = folder(tmp_path / "repo")
    for key, value in _env(tmp_path / "state", tmp_path / "home").items():
        monkeypatch.setenv(key, value)
    return repo


async def test_a_run_started_through_one_connection_is_followed_and_accepted_through_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo_with_daemon_env(tmp_path, monkeypatch)
    script = write_script(
        tmp_path / "script.yaml",
        [
            ONLY_IMPLEMENTATION,
            coder_writes(WITH_PRODUCT, match=r"Attempt: 1\b"),
            {"role": "coder", "match": r"Attempt: 1\b", **ok("multiply added")},
            rest_succeeds(),
        ],
    )
    monkeypatch.setenv("IDED_PIPELINE__REPLAY_SCRIPT", str(script))
    config = load_config(repo)
    starter = await attach_runs(config, client="cli", start=True)
    reviewer: RunService | None = None
    control = await DaemonClient.attach(config, client="other", start=False)
    try:
        async with await starter.start(RunStart(request="Add a multiply function")) as started:
            reviewer = await attach_runs(config, client="cli", start=False)
            async with await reviewer.follow(started.run_id) as followed:
                seen_by_reviewer = [e async for e in followed]
            seen_by_starter = [e async for e in started]
        stored = await reviewer.events(started.run_id)
        finished = await reviewer.wait(started.run_id, wait_seconds=WAIT)
        changes = await reviewer.diff(started.run_id)
        accepted = await reviewer.accept(started.run_id)
        detail = await reviewer.show(started.run_id, events=True)
        decisions = await reviewer.decisions(started.run_id)
        branch = await starter.branch(started.run_id)
        listed = await starter.list_runs()
        with pytest.raises(DaemonError) as unknown:
            await reviewer.get("no-such-run")
        status = await control.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
    finally:
        await starter.aclose()
        if reviewer is not None:
            await reviewer.aclose()
        await control.call(Methods.SHUTDOWN, None)
        await asyncio.wait_for(control.wait_closed(), 30)
        await control.close()

    # one daemon served both connections (and the control one)
    assert {c.client for c in status.clients} >= {"cli", "other"} and len(status.clients) == 3
    assert finished.status is RunStatus.SUCCEEDED
    # both followers saw the same run, from its start to its end, as it was stored
    assert seen_by_starter[0].event is ProgressKind.RUN_STARTED
    assert seen_by_starter[-1].event is ProgressKind.RUN_FINISHED
    assert [e.seq for e in seen_by_reviewer] == [e.seq for e in stored] == [e.seq for e in seen_by_starter]
    assert {e.run_id for e in seen_by_reviewer} == {started.run_id}
    # reviewed from the second connection: the run's commit is on the user's branch now
    assert "multiply" in changes.diff and [c.attempt for c in changes.commits] == [1]
    assert accepted.files == ("src/calc.py",)
    # runs/show: the record, the decision log (the accept logged last) and the events, in one answer
    assert detail.record.run_id == started.run_id and detail.record.status is RunStatus.SUCCEEDED
    assert detail.decisions == tuple(decisions) and detail.decisions[-1].kind is DecisionKind.ACCEPT
    assert [e.seq for e in detail.events] == [e.seq for e in stored]
    assert (repo / "src" / "calc.py").read_text() == WITH_PRODUCT
    assert _head(repo) == accepted.head
    assert branch.review == "accepted"
    assert started.run_id in [r.run_id for r in listed]
    assert unknown.value.code is ErrorCode.RUN_NOT_FOUND and "no-such-run" in unknown.value.message


async def test_a_run_in_the_daemon_asks_the_daemons_own_language_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = debugger_asks_for_a_definition(tmp_path, monkeypatch)
    runs = await attach_runs(config, client="cli", start=True)
    control = await DaemonClient.attach(config, client="other", start=False)
    try:
        await control.call(Methods.INDEX_REINDEX, None, wait_s=120)  # answers once the pass is done
        # A definition by position waits for the language server (one by name would be answered from
        # the index while it starts), so the run's own call below meets a ready server.
        at_use = {"file": "app.py", "line": 11, "column": 12}
        await control.call(DEFINITION.daemon_method, at_use, wait_s=120)
        run = RunStart(request="Reporter renders the wrong title", workflow="bug_fix", mode="ask")
        async with await runs.start(run) as started:
            seen = [e async for e in started]
        finished = await runs.wait(started.run_id, wait_seconds=WAIT)
        status = await control.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
    finally:
        await runs.aclose()
        await control.call(Methods.SHUTDOWN, None)
        await asyncio.wait_for(control.wait_closed(), 30)
        await control.close()

    assert finished.status is RunStatus.SUCCEEDED
    done = [
        e
        for e in seen
        if e.event is ProgressKind.TOOL_CALL_UPDATE and e.agent_id == "debugger" and e.tool_status == "completed"
    ]
    assert done and "shapes/report.py" in (done[-1].output or "")
    assert re.search(r'"answered_by":\s*"language_server"', done[-1].output or "")  # not the index's stand-in
    # the run asked the daemon in process: its clients are the two connections of this test, no third
    assert sorted(c.client for c in status.clients) == ["cli", "other"]
    assert any(s.state == "ready" for s in status.servers if "python" in s.languages)


async def test_a_run_in_flight_keeps_the_daemon_up_after_its_last_client_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo_with_daemon_env(tmp_path, monkeypatch)
    monkeypatch.setenv("IDED_DAEMON__IDLE_SHUTDOWN_SECONDS", "1")
    monkeypatch.setenv("IDED_DAEMON__IDLE_SHUTDOWN_NO_EDITOR_SECONDS", "1")
    slow = {"role": "*", "answer": {"status": "success", "summary": "slow"}, "delay_seconds": 8}
    orchestrator = {"role": "orchestrator", "answer": choose("architecture_discussion"), "repeat": True}
    script = write_script(tmp_path / "script.yaml", [orchestrator, slow, everyone_succeeds()])
    monkeypatch.setenv("IDED_PIPELINE__REPLAY_SCRIPT", str(script))
    config = load_config(repo)
    runs = await attach_runs(config, client="cli", start=True)
    try:
        async with await runs.start(RunStart(request="how should calc grow?", mode="ask")) as started:
            pid = _daemon_pid(runs)
    finally:
        await runs.aclose()  # no client is left while the run goes on (the scripted model answers in 8 s)
    await _wait_gone(pid, wait_s=120)  # it stops by itself once idle, after the run

    async with open_run_service(config, daemon="never", client="cli", models_needed=False) as opened:
        record = await opened.service.get(started.run_id)
        stored = await opened.service.events(started.run_id)
    assert record.status is RunStatus.SUCCEEDED  # not interrupted by an idle shutdown mid-run
    assert stored[-1].event is ProgressKind.RUN_FINISHED


async def test_after_its_daemon_is_killed_the_next_call_attaches_to_a_fresh_daemon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo_with_daemon_env(tmp_path, monkeypatch)
    slow = {"role": "*", "answer": {"status": "success", "summary": "slow"}, "delay_seconds": 600}
    orchestrator = {"role": "orchestrator", "answer": choose("architecture_discussion"), "repeat": True}
    script = write_script(tmp_path / "script.yaml", [orchestrator, slow])
    monkeypatch.setenv("IDED_PIPELINE__REPLAY_SCRIPT", str(script))
    config = load_config(repo)
    runs = await attach_runs(config, client="cli", start=True)
    try:
        first_pid = _daemon_pid(runs)
        started = await runs.start(RunStart(request="how should calc grow?", mode="ask"))
        with pytest.raises(DaemonError) as lost:
            async with started:
                async for event in started:
                    if event.event is ProgressKind.RUN_STARTED:  # in flight: the scripted model answers in 600 s
                        os.kill(first_pid, signal.SIGKILL)
        await _wait_gone(first_pid)
        # the first call after the loss changes something (never sent twice): it goes to a fresh daemon
        with pytest.raises(DaemonError) as unknown:
            await runs.cancel("no-such-run")
        again = await runs.get(started.run_id)  # the killed daemon's run, read from the store it left
        second_pid = _daemon_pid(runs)
    finally:
        await runs.aclose()
        with contextlib.suppress(DaemonUnavailable):  # none when the fresh one never started
            control = await DaemonClient.attach(config, client="other", start=False)
            await control.call(Methods.SHUTDOWN, None)
            await asyncio.wait_for(control.wait_closed(), 30)
            await control.close()

    assert "lost the connection" in lost.value.message
    assert unknown.value.code is ErrorCode.RUN_NOT_FOUND  # answered by the fresh daemon, not "connection lost"
    assert again.run_id == started.run_id
    assert second_pid not in (0, first_pid)


async def test_runs_stay_in_the_front_when_the_daemon_holds_another_value_of_an_api_key_the_settings_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo_with_daemon_env(tmp_path, monkeypatch)
    script = write_script(tmp_path / "script.yaml", [everyone_succeeds()])
    monkeypatch.setenv("IDED_PIPELINE__REPLAY_SCRIPT", str(script))
    monkeypatch.setenv("IDED_RETRIEVAL__WEB_API_KEY_ENV", "IDED_TEST_WEB_KEY")
    monkeypatch.setenv("IDED_TEST_WEB_KEY", "the key the daemon starts with")
    config = load_config(repo)
    runs = await attach_runs(config, client="cli", start=True)  # the daemon gets this environment
    try:
        await runs.aclose()
        monkeypatch.setenv("IDED_TEST_WEB_KEY", "a key exported later")
        with pytest.raises(DaemonError) as refused:
            await attach_runs(config, client="cli", start=False)
        async with open_run_service(config, daemon="start", client="cli") as opened:
            in_daemon, note = opened.in_daemon, opened.note
        monkeypatch.setenv("IDED_TEST_WEB_KEY", "the key the daemon starts with")
        again = await attach_runs(config, client="cli", start=False)
        await again.aclose()
    finally:
        control = await DaemonClient.attach(config, client="other", start=False)
        await control.call(Methods.SHUTDOWN, None)
        await asyncio.wait_for(control.wait_closed(), 30)
        await control.close()
    assert refused.value.code is ErrorCode.DAEMON_RUNNING and "API keys" in refused.value.message
    assert not in_daemon and "API keys" in note  # the run would go to this process, saying why


async def test_a_replay_script_answers_every_run_of_a_daemon_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # entries without `repeat` are used up per run: the daemon's second run reads the script afresh
    repo = _repo_with_daemon_env(tmp_path, monkeypatch)
    script = write_script(
        tmp_path / "script.yaml",
        [
            ONLY_IMPLEMENTATION,
            coder_writes(WITH_PRODUCT),
            {"role": "coder", **ok("multiply added")},
            rest_succeeds(),
        ],
    )
    monkeypatch.setenv("IDED_PIPELINE__REPLAY_SCRIPT", str(script))
    config = load_config(repo)
    runs = await attach_runs(config, client="cli", start=True)
    control = await DaemonClient.attach(config, client="other", start=False)
    records: list[RunRecord] = []
    try:
        for _ in range(2):
            async with await runs.start(RunStart(request="Add a multiply function")) as started:
                _ = [e async for e in started]
            records.append(await runs.wait(started.run_id, wait_seconds=WAIT))
            await runs.reject(started.run_id)
    finally:
        await runs.aclose()
        await control.call(Methods.SHUTDOWN, None)
        await asyncio.wait_for(control.wait_closed(), 30)
        await control.close()

    assert [r.status for r in records] == [RunStatus.SUCCEEDED, RunStatus.SUCCEEDED]
    assert [r.selection.path.value for r in records if r.selection] == ["llm", "llm"]
    assert all(r.changes is not None and [f.path for f in r.changes.files] == ["src/calc.py"] for r in records)
