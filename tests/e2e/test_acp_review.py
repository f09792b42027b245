"""Editing runs over ``ided acp`` (the ACP SDK's client, real stdio, a fixture git repository, a
replay-scripted coder that writes files): tool calls, one diff for review and a permission request;
accept puts the run's commits on the user's branch, reject changes nothing, feedback starts a
second attempt on the same branch; a folder that is not a repository refuses code mode only."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import FileEditToolCallContent, ToolCallProgress, ToolCallStart

from tests.e2e.acp_support import (
    CALC,
    WAIT_S,
    RecordingClient,
    env_for,
    fixture_repo,
    initialize,
    prompt_text,
    spawn_ided_acp,
)
from tests.pipeline_support import choose, everyone_succeeds, recorded_tools, stage_intel_tools, write_script
from tests.vcs_support import git

pytestmark = pytest.mark.e2e

FIXED = "def add(a, b):\n    return a + b  # checked\n"
FEEDBACK_FIX = "def add(a, b):\n    return b + a  # as asked\n"


def editing_script(tmp_path: Path) -> Path:
    entries: list[dict[str, Any]] = [
        {"role": "orchestrator", "answer": choose("bug_fix", "a crash report", code_review="SKIP")},
        {
            "role": "coder",
            "match": "swap the operands",
            "say": "Swapping them as asked.",
            "tool_calls": [{"name": "write_file", "args": {"path": "calc.py", "content": FEEDBACK_FIX}}],
        },
        {
            "role": "coder",
            "say": "Fixing add.",
            "tool_calls": [{"name": "write_file", "args": {"path": "calc.py", "content": FIXED}}],
        },
        everyone_succeeds(),
    ]
    return write_script(tmp_path / "script.yaml", entries, record_tools="tools.jsonl")


def diffs(client: RecordingClient) -> list[FileEditToolCallContent]:
    found: list[FileEditToolCallContent] = []
    for update in client.tool_calls():
        found += [c for c in update.content or [] if isinstance(c, FileEditToolCallContent)]
    return found


async def test_accepting_the_review_puts_the_runs_commits_on_the_users_branch_and_rollback_reverts_them(
    tmp_path: Path,
) -> None:
    repo = fixture_repo(tmp_path)
    before = git(repo, "rev-parse", "HEAD")
    client = RecordingClient(permission_answers=[("accept", None)])
    env = env_for(tmp_path, editing_script(tmp_path), acp__attach_daemon="true")  # as a user's: with the daemon
    async with spawn_ided_acp(tmp_path, env, client=client) as agent:
        await initialize(agent.conn)
        sid = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        reply = await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=prompt_text("fix add")), WAIT_S)
        assert reply.stop_reason == "end_turn"
        writes = [u for u in client.tool_calls(sid) if isinstance(u, ToolCallStart) and u.kind == "edit"]
        assert any("calc.py" in (u.title or "") or u.locations for u in writes)
        (diff,) = diffs(client)
        assert diff.path == str(repo / "calc.py") and diff.old_text == CALC and diff.new_text == FIXED
        ((call, options),) = client.permission_requests
        assert [o.option_id for o in options] == ["accept", "reject", "feedback"]
        assert call.kind == "edit"
        final = [
            u for u in client.tool_calls(sid) if isinstance(u, ToolCallProgress) and u.tool_call_id == call.tool_call_id
        ]
        assert final[-1].status == "completed"
        assert "Accepted: " in client.messages(sid)
        assert (repo / "calc.py").read_text() == FIXED
        assert git(repo, "rev-parse", "HEAD") != before
        assert "fix attempt 1" in git(repo, "log", "-1", "--format=%B")
        # the same tools as the CLI's and the LSP front's runs: the code-intel tools the stage names
        assert stage_intel_tools("bug_fix", "fix", "coder") <= recorded_tools(tmp_path / "tools.jsonl", "coder")
        run_id = client.messages(sid).split("/rollback ")[1].split()[0]
        rolled = await asyncio.wait_for(
            agent.conn.prompt(session_id=sid, prompt=prompt_text(f"/rollback {run_id}")), WAIT_S
        )
        assert rolled.stop_reason == "end_turn" and f"Rolled back run {run_id}" in client.messages(sid)
        assert (repo / "calc.py").read_text() == CALC
        assert git(repo, "rev-list", "--count", f"{before}..HEAD") == "2"  # the run's commit and its revert


async def test_accepting_with_kept_files_applies_only_those_and_rollback_reverts_them(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path)
    before = git(repo, "rev-parse", "HEAD")
    script = write_script(
        tmp_path / "script.yaml",
        [
            {"role": "orchestrator", "answer": choose("bug_fix", "a crash report", code_review="SKIP")},
            {
                "role": "coder",
                "say": "Fixing add and rewriting the readme.",
                "tool_calls": [
                    {"name": "write_file", "args": {"path": "calc.py", "content": FIXED}},
                    {"name": "write_file", "args": {"path": "README.md", "content": "# calc, rewritten\n"}},
                ],
            },
            everyone_succeeds(),
        ],
    )
    keep = {"ided/keep": [{"path": str(repo / "calc.py")}]}
    client = RecordingClient(permission_answers=[("accept", keep)])
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, script), client=client) as agent:
        await initialize(agent.conn)
        sid = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        reply = await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=prompt_text("fix add")), WAIT_S)
        assert reply.stop_reason == "end_turn"
        assert len(diffs(client)) == 2
        ((call, _),) = client.permission_requests
        final = [
            u for u in client.tool_calls(sid) if isinstance(u, ToolCallProgress) and u.tool_call_id == call.tool_call_id
        ]
        assert final[-1].status == "completed" and (final[-1].field_meta or {}).get("ided/review") == "accepted"
        assert "dropped: README.md" in client.messages(sid)
        assert (repo / "calc.py").read_text() == FIXED
        assert (repo / "README.md").read_text() == "# calc\n"
        assert git(repo, "diff", "--name-only", before, "HEAD") == "calc.py"
        run_id = client.messages(sid).split("/rollback ")[1].split()[0]
        rolled = await asyncio.wait_for(
            agent.conn.prompt(session_id=sid, prompt=prompt_text(f"/rollback {run_id}")), WAIT_S
        )
        assert rolled.stop_reason == "end_turn" and f"Rolled back run {run_id}" in client.messages(sid)
    assert (repo / "calc.py").read_text() == CALC
    assert git(repo, "diff", before, "HEAD") == ""


async def test_rejecting_the_review_leaves_the_users_tree_and_branch_untouched(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path)
    before = git(repo, "rev-parse", "HEAD")
    client = RecordingClient(permission_answers=[("reject", None)])
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, editing_script(tmp_path)), client=client) as agent:
        await initialize(agent.conn)
        sid = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        reply = await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=prompt_text("fix add")), WAIT_S)
        assert reply.stop_reason == "end_turn"
        assert len(client.permission_requests) == 1 and "Rejected: " in client.messages(sid)
    assert git(repo, "rev-parse", "HEAD") == before
    assert (repo / "calc.py").read_text() == CALC and git(repo, "status", "--porcelain") == ""
    assert any(b.strip().startswith("ided/run/") for b in git(repo, "branch", "--list").splitlines())


async def test_feedback_starts_a_second_attempt_on_the_same_branch_and_a_second_review(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path)
    client = RecordingClient(permission_answers=[("feedback", None), ("accept", None)])
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, editing_script(tmp_path)), client=client) as agent:
        await initialize(agent.conn)
        sid = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        first = await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=prompt_text("fix add")), WAIT_S)
        assert first.stop_reason == "end_turn" and "Type your feedback" in client.messages(sid)
        assert (repo / "calc.py").read_text() == CALC
        second = await asyncio.wait_for(
            agent.conn.prompt(session_id=sid, prompt=prompt_text("please swap the operands")), WAIT_S
        )
        assert second.stop_reason == "end_turn"
        assert len(client.permission_requests) == 2
        last_diff = diffs(client)[-1]
        assert last_diff.old_text == CALC and last_diff.new_text == FEEDBACK_FIX
    assert (repo / "calc.py").read_text() == FEEDBACK_FIX
    log = git(repo, "log", "--format=%s", "-3")
    assert "fix attempt 2" in log and "fix attempt 1" in log


async def test_a_folder_that_is_not_a_repository_refuses_code_mode_and_still_answers_in_ask_mode(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "calc.py").write_text(CALC)
    script = write_script(
        tmp_path / "script.yaml",
        [{"role": "orchestrator", "answer": choose("bug_fix", "a crash report", code_review="SKIP")}] * 2
        + [everyone_succeeds()],
    )
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, script)) as agent:
        await initialize(agent.conn)
        sid = (await agent.conn.new_session(cwd=str(folder), mcp_servers=[])).session_id
        with pytest.raises(RequestError) as refused:
            await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=prompt_text("fix add")), WAIT_S)
        data = refused.value.data
        assert isinstance(data, dict) and data["code"] == "not_a_repository" and "git init" in str(refused.value)
        await agent.conn.set_session_mode(session_id=sid, mode_id="ask")
        reply = await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=prompt_text("fix add")), WAIT_S)
        assert reply.stop_reason == "end_turn" and "succeeded" in agent.client.messages(sid)
        assert agent.client.permission_requests == []


async def test_a_code_prompt_while_another_run_holds_the_edit_lock_is_refused_naming_the_holder(
    tmp_path: Path,
) -> None:
    repo = fixture_repo(tmp_path)
    script = write_script(
        tmp_path / "script.yaml",
        [
            {"role": "orchestrator", "answer": choose("bug_fix", "a crash report", code_review="SKIP"), "repeat": True},
            {**everyone_succeeds(), "delay_seconds": 0.5},
        ],
    )
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, script)) as agent:
        await initialize(agent.conn)
        first = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        second = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        running = asyncio.create_task(agent.conn.prompt(session_id=first, prompt=prompt_text("fix add")))
        await agent.client.wait_for(lambda: bool(agent.client.plans(first)), "the first run's plan")
        with pytest.raises(RequestError) as refused:
            await asyncio.wait_for(agent.conn.prompt(session_id=second, prompt=prompt_text("fix add")), WAIT_S)
        data = refused.value.data
        assert isinstance(data, dict) and data["code"] == "edit_lock_held", data
        assert (await asyncio.wait_for(running, WAIT_S)).stop_reason == "end_turn"
