"""MCP servers passed by the client in ``session/new`` (the ACP SDK's client over real stdio, a real MCP
server written here and spawned by ``ided acp``, a replay-scripted coder): its tools reach the agents
as ``mcp__<server>__<tool>``, their calls are ``tool_call`` updates and really reach the server; ask
mode offers the read-only ones only; a server that cannot start is reported and the session works;
the servers end with the process."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from acp.schema import EnvVariable, McpServerStdio, SseMcpServer, ToolCallProgress, ToolCallStart

from tests.e2e.acp_support import (
    WAIT_S,
    RecordingClient,
    env_for,
    fixture_repo,
    initialize,
    prompt_text,
    spawn_ided_acp,
    stop,
)
from tests.pipeline_support import choose, everyone_succeeds, write_script

pytestmark = pytest.mark.e2e

NOTES_SERVER = '''
import os
import sys
from pathlib import Path

from mcp.server import MCPServer
from mcp_types import ToolAnnotations

marker = Path(os.environ["NOTES_FILE"])
Path(os.environ["NOTES_PID_FILE"]).write_text(str(os.getpid()))
server = MCPServer("notes")


@server.tool()
def record_note(text: str, count: int = 1) -> str:
    """Append a note to the notes file."""
    with marker.open("a") as notes:
        notes.write(f"{text}:{count}\\n")
    return f"noted {text} x{count}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def read_notes() -> str:
    """Every note recorded so far."""
    return marker.read_text() if marker.exists() else "(no notes)"


server.run()
'''

RECORD = "mcp__notes__record_note"
READ = "mcp__notes__read_notes"


def notes_server(tmp_path: Path) -> tuple[McpServerStdio, Path, Path]:
    """The server as the client describes it, its notes file and the file it writes its pid to."""
    script = tmp_path / "notes_server.py"
    script.write_text(NOTES_SERVER)
    notes, pid_file = tmp_path / "notes.txt", tmp_path / "notes.pid"
    spec = McpServerStdio(
        name="notes",
        command=sys.executable,
        args=[str(script)],
        env=[EnvVariable(name="NOTES_FILE", value=str(notes)), EnvVariable(name="NOTES_PID_FILE", value=str(pid_file))],
    )
    return spec, notes, pid_file


def calls_of(client: RecordingClient, sid: str, name: str) -> tuple[ToolCallStart, ToolCallProgress]:
    """The start and the last update of the (single) call of tool ``name``."""
    (start,) = [u for u in client.tool_calls(sid) if isinstance(u, ToolCallStart) and (u.title or "").startswith(name)]
    updates = [
        u for u in client.tool_calls(sid) if isinstance(u, ToolCallProgress) and u.tool_call_id == start.tool_call_id
    ]
    return start, updates[-1]


def output_of(update: ToolCallProgress) -> str:
    return str(update.raw_output) + "".join(str(getattr(c, "content", "")) for c in update.content or [])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_an_agent_calls_a_tool_of_the_clients_mcp_server_shown_as_tool_calls_and_ask_mode_offers_read_only_tools(
    tmp_path: Path,
) -> None:
    repo = fixture_repo(tmp_path)
    server, notes, pid_file = notes_server(tmp_path)
    entries: list[dict[str, Any]] = [
        {"role": "orchestrator", "answer": choose("bug_fix", "scripted", code_review="SKIP"), "repeat": True},
        {
            "role": "coder",
            "match": "note the fix",
            "say": "Recording it.",
            "tool_calls": [{"name": RECORD, "args": {"text": "from-coder", "count": 2}}],
        },
        {
            "role": "coder",
            "match": "what was noted",
            "tool_calls": [{"name": RECORD, "args": {"text": "refused"}}, {"name": READ, "args": {}}],
        },
        everyone_succeeds(),
    ]
    script = write_script(tmp_path / "script.yaml", entries)
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, script)) as agent:
        await initialize(agent.conn)
        sid = (await asyncio.wait_for(agent.conn.new_session(cwd=str(repo), mcp_servers=[server]), WAIT_S)).session_id
        reply = await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=prompt_text("note the fix")), WAIT_S)
        assert reply.stop_reason == "end_turn", agent.client.messages(sid)
        start, done = calls_of(agent.client, sid, RECORD)
        assert start.kind == "other" and start.status == "in_progress"
        assert start.raw_input == {"text": "from-coder", "count": 2}
        assert done.status == "completed" and "noted from-coder x2" in output_of(done)
        assert notes.read_text() == "from-coder:2\n"  # the server really received the call

        agent.client.updates.clear()
        await asyncio.wait_for(agent.conn.set_session_mode(session_id=sid, mode_id="ask"), WAIT_S)
        reply = await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=prompt_text("what was noted")), WAIT_S)
        assert reply.stop_reason == "end_turn", agent.client.messages(sid)
        _, refused = calls_of(agent.client, sid, RECORD)
        assert refused.status == "failed" and f"no tool named '{RECORD}'" in output_of(refused)
        read_start, read_done = calls_of(agent.client, sid, READ)
        assert read_start.kind == "read" and read_done.status == "completed"
        assert "from-coder:2" in output_of(read_done)
        assert notes.read_text() == "from-coder:2\n"
        pid = int(pid_file.read_text())
        assert alive(pid)
        assert await stop(agent.process) == 0
    assert not alive(pid), "the MCP server outlived the ACP process"


async def test_an_mcp_server_that_cannot_start_is_reported_to_the_client_and_the_session_still_runs_prompts(
    tmp_path: Path,
) -> None:
    repo = fixture_repo(tmp_path)
    broken = McpServerStdio(name="broken", command=sys.executable, args=["-c", "raise SystemExit(3)"], env=[])
    missing = McpServerStdio(name="missing", command=str(tmp_path / "no-such-server"), args=[], env=[])
    sse = SseMcpServer(type="sse", name="streamer", url="http://127.0.0.1:9/sse", headers=[])
    script = write_script(
        tmp_path / "script.yaml",
        [{"role": "orchestrator", "answer": choose("bug_fix", "scripted", code_review="SKIP")}, everyone_succeeds()],
    )
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, script)) as agent:
        await initialize(agent.conn)
        session = await asyncio.wait_for(
            agent.conn.new_session(cwd=str(repo), mcp_servers=[broken, missing, sse]), WAIT_S
        )
        sid = session.session_id
        await agent.client.wait_for(lambda: "could not be used" in agent.client.messages(sid), "the MCP report")
        report = agent.client.messages(sid)
        assert "MCP server 'broken' could not be connected" in report
        assert "MCP server 'missing' could not be connected" in report and "no-such-server" in report
        assert "transport 'sse' is not supported" in report
        assert "No MCP tools are offered" in report
        await asyncio.wait_for(agent.conn.set_session_mode(session_id=sid, mode_id="ask"), WAIT_S)
        reply = await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=prompt_text("explain add")), WAIT_S)
        assert reply.stop_reason == "end_turn" and "succeeded" in agent.client.messages(sid)
        assert await stop(agent.process) == 0
