"""MCP servers passed by the client in ``session/new`` (the ACP SDK's client over real stdio; real MCP
servers written here: one spawned by ``ided acp`` over stdio, one over streamable HTTP; a
replay-scripted coder): their tools reach the agents as ``mcp__<server>__<tool>``, their calls are
``tool_call`` updates and really reach the servers; ask mode offers the read-only ones only; a server
that cannot start is reported and the session works; the stdio servers end with the process."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from acp.schema import (
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    McpServerStdio,
    SseMcpServer,
    ToolCallProgress,
    ToolCallStart,
)

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

WEB_SERVER = '''
import sys
from pathlib import Path

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

server = MCPServer("web")


@server.tool()
def shout(text: str, ctx: Context) -> str:
    """The text in capitals (kept in the calls file with the client's X-Ided-Test header)."""
    Path(sys.argv[2]).write_text(f"{text} (header {(ctx.headers or {}).get('x-ided-test')})")
    return text.upper()


server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
'''

RECORD = "mcp__notes__record_note"
READ = "mcp__notes__read_notes"
SHOUT = "mcp__web__shout"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.asynccontextmanager
async def web_server(tmp_path: Path) -> AsyncGenerator[tuple[HttpMcpServer, Path]]:
    """An MCP server over streamable HTTP on a free loopback port, up once uvicorn says so."""
    script, calls = tmp_path / "web_server.py", tmp_path / "web_calls.txt"
    script.write_text(WEB_SERVER)
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(script), str(port), str(calls), stderr=asyncio.subprocess.PIPE
    )
    assert process.stderr is not None
    stderr = process.stderr

    async def started() -> None:
        while b"Uvicorn running on" not in await stderr.readline():
            if stderr.at_eof():
                raise AssertionError("the HTTP MCP server exited before it listened")

    drain: asyncio.Task[bytes] | None = None
    try:
        await asyncio.wait_for(started(), WAIT_S)
        drain = asyncio.create_task(stderr.read())  # keep its log pipe flowing
        headers = [HttpHeader(name="X-Ided-Test", value="1")]
        yield HttpMcpServer(type="http", name="web", url=f"http://127.0.0.1:{port}/mcp", headers=headers), calls
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), WAIT_S)
        if drain is not None:
            await asyncio.wait_for(drain, WAIT_S)


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


async def test_agents_call_tools_of_the_clients_stdio_and_http_mcp_servers_and_ask_mode_offers_read_only_ones(
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
            "tool_calls": [
                {"name": RECORD, "args": {"text": "from-coder", "count": 2}},
                {"name": SHOUT, "args": {"text": "over http"}},
            ],
        },
        {
            "role": "coder",
            "match": "what was noted",
            "tool_calls": [{"name": RECORD, "args": {"text": "refused"}}, {"name": READ, "args": {}}],
        },
        everyone_succeeds(),
    ]
    script = write_script(tmp_path / "script.yaml", entries)
    async with web_server(tmp_path) as (web, web_calls), spawn_ided_acp(tmp_path, env_for(tmp_path, script)) as agent:
        await initialize(agent.conn)
        session = await asyncio.wait_for(agent.conn.new_session(cwd=str(repo), mcp_servers=[server, web]), WAIT_S)
        sid = session.session_id
        reply = await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=prompt_text("note the fix")), WAIT_S)
        assert reply.stop_reason == "end_turn", agent.client.messages(sid)
        start, done = calls_of(agent.client, sid, RECORD)
        assert start.kind == "other" and start.status == "in_progress"
        assert start.raw_input == {"text": "from-coder", "count": 2}
        assert done.status == "completed" and "noted from-coder x2" in output_of(done)
        assert notes.read_text() == "from-coder:2\n"  # the server really received the call
        shout_start, shout_done = calls_of(agent.client, sid, SHOUT)
        assert shout_start.raw_input == {"text": "over http"} and shout_done.status == "completed"
        assert "OVER HTTP" in output_of(shout_done) and web_calls.read_text() == "over http (header 1)"

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
