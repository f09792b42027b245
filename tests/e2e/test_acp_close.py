"""``session/close`` over real stdio, driven by the ACP SDK's own client, on a fixture git repository with
a replay-scripted model: advertised in ``initialize``; an idle session closes and is then unknown to
every request (its file stays: it can be loaded again); a prompt in flight answers ``cancelled``
before the close does, and its run's record and branch stay; an unknown session closes; the client
MCP servers of the closed session (and only those) are gone once the close is answered."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from acp import RequestError

from daemon.core.run_models import RunStatus
from tests.e2e.acp_support import (
    WAIT_S,
    env_for,
    fixture_repo,
    initialize,
    plan_statuses,
    prompt_text,
    prompt_until_in_progress,
    recorded_runs,
    spawn_ided_acp,
    stop,
)
from tests.e2e.test_acp_mcp import alive, notes_server
from tests.e2e.test_acp_session import bug_fix_script
from tests.vcs_support import git

pytestmark = pytest.mark.e2e


def _unknown(error: RequestError) -> bool:
    return error.code == -32602 and "unknown session" in str(error.data)


async def test_initialize_advertises_session_close(tmp_path: Path) -> None:
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, None)) as agent:
        reply = await initialize(agent.conn)
        caps = reply.agent_capabilities.session_capabilities
        assert caps is not None and caps.close is not None
        assert await stop(agent.process) == 0


async def test_a_closed_idle_session_is_unknown_to_later_requests_and_can_be_loaded_again(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path)
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, None)) as agent:
        await initialize(agent.conn)
        sid = (await asyncio.wait_for(agent.conn.new_session(cwd=str(repo), mcp_servers=[]), WAIT_S)).session_id
        closed = await asyncio.wait_for(agent.conn.close_session(session_id=sid), WAIT_S)
        assert closed is not None
        with pytest.raises(RequestError) as prompt:
            await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=prompt_text("hi")), WAIT_S)
        with pytest.raises(RequestError) as never_known:
            await asyncio.wait_for(agent.conn.prompt(session_id="s-never", prompt=prompt_text("hi")), WAIT_S)
        assert _unknown(prompt.value) and _unknown(never_known.value)
        assert str(prompt.value.data) == str(never_known.value.data).replace("s-never", sid)  # the same error
        with pytest.raises(RequestError) as mode:
            await asyncio.wait_for(agent.conn.set_session_mode(session_id=sid, mode_id="ask"), WAIT_S)
        assert _unknown(mode.value)
        assert await asyncio.wait_for(agent.conn.close_session(session_id=sid), WAIT_S) is not None  # again: fine
        # only what the session held in memory went: its file stays, so it is listed and loads again
        listed = await asyncio.wait_for(agent.conn.list_sessions(cwd=str(repo)), WAIT_S)
        assert [s.session_id for s in listed.sessions] == [sid]
        await asyncio.wait_for(agent.conn.load_session(cwd=str(repo), session_id=sid, mcp_servers=[]), WAIT_S)
        await asyncio.wait_for(agent.conn.set_session_mode(session_id=sid, mode_id="ask"), WAIT_S)
        assert await stop(agent.process) == 0


async def test_closing_a_session_mid_prompt_answers_the_prompt_cancelled_first_and_keeps_the_run(
    tmp_path: Path,
) -> None:
    repo = fixture_repo(tmp_path)
    script = bug_fix_script(tmp_path, slow_stage="debugger")
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, script)) as agent:
        await initialize(agent.conn)
        sid = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        prompt = await prompt_until_in_progress(agent, sid, "fix the crash in add", "diagnosis")
        await asyncio.wait_for(agent.conn.close_session(session_id=sid), WAIT_S)
        assert prompt.done(), "session/close answered before the prompt it cancelled"
        assert prompt.result().stop_reason == "cancelled"
        last = dict(plan_statuses(agent.client.plans(sid)[-1]))
        assert last["fix"] == "pending" and last["regression_testing"] == "pending"
        assert "cancelled" in agent.client.messages(sid)  # the run's closing message came before the close
        sent = len(agent.client.of(sid))
        await asyncio.sleep(1.5)  # longer than the slow stage: a straggler would show up now
        assert len(agent.client.of(sid)) == sent, "updates after session/close"
        with pytest.raises(RequestError) as after:
            await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=prompt_text("again")), WAIT_S)
        assert _unknown(after.value)
        assert await stop(agent.process) == 0
    ((run_id, status),) = await recorded_runs(tmp_path)
    assert status is RunStatus.CANCELLED
    git(repo, "rev-parse", "--verify", f"refs/heads/ided/run/{run_id}")  # the run's branch is still there


async def test_closing_an_unknown_session_succeeds(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path)
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, None)) as agent:
        await initialize(agent.conn)
        assert await asyncio.wait_for(agent.conn.close_session(session_id="s-never-made"), WAIT_S) is not None
        assert await asyncio.wait_for(agent.conn.close_session(session_id="not an id/.."), WAIT_S) is not None
        sid = (await asyncio.wait_for(agent.conn.new_session(cwd=str(repo), mcp_servers=[]), WAIT_S)).session_id
        await asyncio.wait_for(agent.conn.set_session_mode(session_id=sid, mode_id="ask"), WAIT_S)  # still serving
        assert await stop(agent.process) == 0


def _server_pid(pid_file: Path) -> int:
    """The pid the MCP server wrote once it started (polled; blocking: run it in a thread)."""
    deadline = time.monotonic() + WAIT_S
    while not pid_file.exists() or not pid_file.read_text():
        if time.monotonic() > deadline:
            raise AssertionError(f"the MCP server never wrote {pid_file}")
        time.sleep(0.05)
    return int(pid_file.read_text())


async def test_closing_a_session_ends_its_client_mcp_servers_and_no_other_sessions(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    server_a, _, pid_file_a = notes_server(tmp_path / "a")
    server_b, _, pid_file_b = notes_server(tmp_path / "b")
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, None)) as agent:
        await initialize(agent.conn)
        sid_a = (
            await asyncio.wait_for(agent.conn.new_session(cwd=str(repo), mcp_servers=[server_a]), WAIT_S)
        ).session_id
        sid_b = (
            await asyncio.wait_for(agent.conn.new_session(cwd=str(repo), mcp_servers=[server_b]), WAIT_S)
        ).session_id
        pid_a = await asyncio.to_thread(_server_pid, pid_file_a)
        pid_b = await asyncio.to_thread(_server_pid, pid_file_b)
        await asyncio.sleep(0.5)  # let the MCP handshakes finish: the close then leaves a connected client
        assert alive(pid_a) and alive(pid_b)
        await asyncio.wait_for(agent.conn.close_session(session_id=sid_a), WAIT_S)
        assert agent.process.returncode is None
        assert not alive(pid_a), "the closed session's MCP server outlived session/close"
        assert alive(pid_b), "closing one session ended another session's MCP server"
        await asyncio.wait_for(agent.conn.set_session_mode(session_id=sid_b, mode_id="ask"), WAIT_S)
        assert await stop(agent.process) == 0
    assert not alive(pid_b)
