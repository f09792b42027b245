"""``ided acp`` over real stdio, driven by the ACP SDK's own client, on a fixture git repository with
a replay-scripted model: initialize, sessions and modes, dry runs, runs streamed as plans, session
load in a fresh process, cancel, a second prompt refused, a client that disconnects mid-run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import AvailableCommandsUpdate, UserMessageChunk

from daemon.core.run_models import RunStatus
from daemon.orchestration.sqlite_run_store import SqliteRunStore, runs_db_path
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
    text_of,
)
from tests.pipeline_support import answer, choose, everyone_succeeds, write_script

pytestmark = pytest.mark.e2e


def bug_fix_script(tmp_path: Path, *, slow_stage: str | None = None) -> Path:
    entries: list[dict[str, Any]] = [
        {"role": "orchestrator", "answer": choose("bug_fix", "a crash report", code_review="SKIP")}
    ]
    if slow_stage is not None:
        entries.append({**answer(slow_stage), "delay_seconds": 1.0})
    entries.append(everyone_succeeds())
    return write_script(tmp_path / "script.yaml", entries)


async def run_status(tmp_path: Path, run_id: str) -> RunStatus:
    store = await asyncio.to_thread(SqliteRunStore, runs_db_path(tmp_path / "state"), workspace_id="reader")
    try:
        return (await store.get(run_id)).status
    finally:
        await asyncio.to_thread(store.close)


async def test_initialize_advertises_load_session_embedded_context_and_session_listing(tmp_path: Path) -> None:
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, None)) as agent:
        reply = await initialize(agent.conn)
        caps = reply.agent_capabilities
        assert caps.load_session is True
        assert caps.prompt_capabilities.embedded_context is True
        assert caps.prompt_capabilities.image is False and caps.prompt_capabilities.audio is False
        assert caps.mcp_capabilities.http is True and caps.mcp_capabilities.sse is False
        assert caps.session_capabilities.list is not None
        assert reply.agent_info is not None and reply.agent_info.name == "ided"
        assert await stop(agent.process) == 0


async def test_new_session_offers_ask_and_code_modes_and_the_slash_commands(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path)
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, None)) as agent:
        await initialize(agent.conn)
        session = await asyncio.wait_for(agent.conn.new_session(cwd=str(repo), mcp_servers=[]), WAIT_S)
        assert session.modes is not None and session.modes.current_mode_id == "code"
        assert [m.id for m in session.modes.available_modes] == ["ask", "code"]
        await agent.client.wait_for(
            lambda: any(isinstance(u, AvailableCommandsUpdate) for u in agent.client.of()), "the commands"
        )
        commands = next(u for u in agent.client.of() if isinstance(u, AvailableCommandsUpdate))
        assert {c.name for c in commands.available_commands} >= {"dry-run", "workflow", "runs"}
        await asyncio.wait_for(agent.conn.set_session_mode(session_id=session.session_id, mode_id="ask"), WAIT_S)
        with pytest.raises(RequestError) as bad_mode:
            await asyncio.wait_for(agent.conn.set_session_mode(session_id=session.session_id, mode_id="yolo"), WAIT_S)
        assert bad_mode.value.code == -32602 and "unknown mode" in str(bad_mode.value.data)
        with pytest.raises(RequestError) as unknown:
            await asyncio.wait_for(agent.conn.prompt(session_id="s-nope", prompt=prompt_text("hi")), WAIT_S)
        assert unknown.value.code == -32602 and "unknown session" in str(unknown.value.data)
        listed = await asyncio.wait_for(agent.conn.list_sessions(cwd=str(repo)), WAIT_S)
        assert [s.session_id for s in listed.sessions] == [session.session_id]


async def test_dry_run_streams_the_selection_as_thoughts_and_a_pending_plan_and_executes_nothing(
    tmp_path: Path,
) -> None:
    repo = fixture_repo(tmp_path)
    script = bug_fix_script(tmp_path)
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, script)) as agent:
        await initialize(agent.conn)
        session = await agent.conn.new_session(cwd=str(repo), mcp_servers=[])
        sid = session.session_id
        reply = await asyncio.wait_for(
            agent.conn.prompt(session_id=sid, prompt=prompt_text("/dry-run fix the crash in add")), WAIT_S
        )
        assert reply.stop_reason == "end_turn"
        assert "Workflow bug_fix (llm): a crash report" in agent.client.thoughts(sid)
        assert "code_review: skip" in agent.client.thoughts(sid)
        (plan,) = agent.client.plans(sid)
        assert plan_statuses(plan) == [
            ("reproduction", "pending"),
            ("diagnosis", "pending"),
            ("fix", "pending"),
            ("regression_testing", "pending"),
            ("code_review", "skipped"),
        ]
        assert "Dry run: run " in agent.client.messages(sid) and "graph TD;" in agent.client.messages(sid)
        run_id = agent.client.messages(sid).split("Dry run: run ")[1].split()[0]
    assert await run_status(tmp_path, run_id) is RunStatus.PLANNED


async def test_a_prompt_runs_the_workflow_and_the_plan_moves_from_pending_to_completed(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path)
    script = bug_fix_script(tmp_path)
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, script)) as agent:
        await initialize(agent.conn)
        sid = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        reply = await asyncio.wait_for(
            agent.conn.prompt(session_id=sid, prompt=prompt_text("fix the crash in add")), WAIT_S
        )
        assert reply.stop_reason == "end_turn"
        plans = [dict(plan_statuses(p)) for p in agent.client.plans(sid)]
        assert plans[0]["reproduction"] == "pending"
        assert any(p["reproduction"] == "in_progress" for p in plans)
        assert plans[-1] == {
            "reproduction": "completed",
            "diagnosis": "completed",
            "fix": "completed",
            "regression_testing": "completed",
            "code_review": "skipped",
        }
        assert "succeeded" in agent.client.messages(sid)


async def test_loading_a_finished_session_in_a_new_process_replays_the_request_and_the_run(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path)
    script = bug_fix_script(tmp_path)
    env = env_for(tmp_path, script)
    async with spawn_ided_acp(tmp_path, env) as first:
        await initialize(first.conn)
        sid = (await first.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        await asyncio.wait_for(first.conn.prompt(session_id=sid, prompt=prompt_text("fix the crash in add")), WAIT_S)
        live_plans = [plan_statuses(p) for p in first.client.plans(sid)]
        live_messages = first.client.messages(sid)
    async with spawn_ided_acp(tmp_path, env) as second:
        await initialize(second.conn)
        loaded = await asyncio.wait_for(second.conn.load_session(cwd=str(repo), session_id=sid, mcp_servers=[]), WAIT_S)
        assert loaded is not None and loaded.modes is not None and loaded.modes.current_mode_id == "code"
        replayed = second.client.of(sid)
        assert isinstance(replayed[0], UserMessageChunk) and text_of(replayed[0]) == "fix the crash in add"
        assert [plan_statuses(p) for p in second.client.plans(sid)] == live_plans
        assert second.client.messages(sid) == live_messages
        with pytest.raises(RequestError) as missing:
            await asyncio.wait_for(
                second.conn.load_session(cwd=str(repo), session_id="s-unknown", mcp_servers=[]), WAIT_S
            )
        assert missing.value.code == -32602 and "no session 's-unknown'" in str(missing.value.data)


async def test_cancel_mid_run_answers_cancelled_and_no_further_stage_starts(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path)
    script = bug_fix_script(tmp_path, slow_stage="debugger")
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, script)) as agent:
        await initialize(agent.conn)
        sid = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        prompt = await prompt_until_in_progress(agent, sid, "fix the crash in add", "diagnosis")
        with pytest.raises(RequestError) as busy:
            await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=prompt_text("another thing")), WAIT_S)
        assert busy.value.code == -32600 and "already running a prompt" in str(busy.value.data)
        await agent.conn.cancel(session_id=sid)
        reply = await asyncio.wait_for(prompt, WAIT_S)
        assert reply.stop_reason == "cancelled"
        last = dict(plan_statuses(agent.client.plans(sid)[-1]))
        assert last["fix"] == "pending" and last["regression_testing"] == "pending"
        assert "cancelled" in agent.client.messages(sid)


async def test_a_client_that_disconnects_mid_run_leaves_the_run_cancelled(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path)
    script = bug_fix_script(tmp_path, slow_stage="debugger")
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, script)) as agent:
        await initialize(agent.conn)
        sid = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        prompt = await prompt_until_in_progress(agent, sid, "fix the crash in add", "diagnosis")
        assert await stop(agent.process) == 0
        prompt.cancel()
    runs = await recorded_runs(tmp_path)
    assert [status for _, status in runs] == [RunStatus.CANCELLED], runs
