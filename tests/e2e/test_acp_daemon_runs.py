"""ACP runs execute in the workspace daemon, and what the prompt lends them crosses back (the ACP SDK's
client over real stdio, a real daemon, a real stdio MCP server the client passed, a replay-scripted
coder).

With ``acp.attach_daemon`` on, the run of a prompt is the daemon's (the run store names the daemon's pid
as the process executing it, read while the run asks for a file), yet the agents read the file as the
editor has it (``fs/read_text_file``: unsaved text) and call the client's MCP server's tool, through
``loan/read_file`` and ``loan/call_tool`` over the ACP process's connection to the daemon.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp.schema import ReadTextFileResponse

from daemon.config import load_config
from daemon.core.run_models import RunStatus
from daemon.orchestration.sqlite_run_store import SqliteRunStore, runs_db_path
from daemon.service.wire.files import read_record
from tests.e2e.acp_support import (
    WAIT_S,
    RecordingClient,
    env_for,
    fixture_repo,
    initialize,
    prompt_text,
    spawn_ided_acp,
)
from tests.e2e.test_acp_mcp import RECORD, calls_of, notes_server, output_of
from tests.e2e.test_acp_replay_status import shut_down_daemon
from tests.pipeline_support import choose, everyone_succeeds, write_script

pytestmark = pytest.mark.e2e

UNSAVED = "def add(a, b):\n    return a + b  # UNSAVED-IN-EDITOR\n"


@dataclass
class RunWatchingClient(RecordingClient):
    """Also notes, at each file read, the pid the run store names for the runs executing then."""

    state: Path = Path()
    executing_pids: list[int | None] = field(default_factory=lambda: list[int | None]())

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        store = await asyncio.to_thread(SqliteRunStore, runs_db_path(self.state), workspace_id="reader")
        try:
            running = [r for r in await store.list(10, all_workspaces=True) if r.status is RunStatus.RUNNING]
        finally:
            await asyncio.to_thread(store.close)
        self.executing_pids.extend(r.pid for r in running)
        return await super().read_text_file(session_id, path, line, limit, **kwargs)


@pytest.mark.parametrize("configured_by", ["environment", "--set"])
async def test_a_prompts_run_executes_in_the_daemon_reading_the_editors_buffer_and_calling_the_clients_tool(
    tmp_path: Path, configured_by: str
) -> None:
    """The replay script comes from the environment, or from ``ided --set ... acp`` (which the daemon that
    ``ided acp`` starts must get too, or it would run with other run settings and the run stay here)."""
    repo = fixture_repo(tmp_path)
    server, notes, _pid_file = notes_server(tmp_path)
    entries: list[dict[str, Any]] = [
        {"role": "orchestrator", "answer": choose("bug_fix", "scripted", code_review="SKIP"), "repeat": True},
        {
            "role": "coder",
            "match": "look and note",
            "say": "Reading, then noting.",
            "tool_calls": [
                {"name": "read_file", "args": {"path": "calc.py"}},
                {"name": RECORD, "args": {"text": "from-the-daemon", "count": 3}},
            ],
        },
        everyone_succeeds(),
    ]
    script = write_script(tmp_path / "script.yaml", entries)
    client = RunWatchingClient(state=tmp_path / "state")
    client.open_buffers[str(repo / "calc.py")] = UNSAVED
    by_env = configured_by == "environment"
    env = env_for(tmp_path, script if by_env else None, acp__attach_daemon="true")
    settings = () if by_env else ("--set", f"pipeline.replay_script={script}")
    try:
        async with spawn_ided_acp(tmp_path, env, client=client, global_args=settings) as agent:
            await initialize(agent.conn)
            session = await asyncio.wait_for(agent.conn.new_session(cwd=str(repo), mcp_servers=[server]), WAIT_S)
            sid = session.session_id
            reply = await asyncio.wait_for(
                agent.conn.prompt(session_id=sid, prompt=prompt_text("look and note")), WAIT_S
            )
            assert reply.stop_reason == "end_turn", agent.client.messages(sid)
            daemon = read_record(tmp_path / "state")
            assert daemon is not None and daemon.pid != agent.process.pid

            # the run was the daemon's: it executed there while it read the file
            assert client.executing_pids and set(client.executing_pids) == {daemon.pid}, client.executing_pids
            # the agents read the editor's text, not the disk's
            assert str(repo / "calc.py") in client.reads
            _start, read = calls_of(client, sid, "read_file")
            assert "UNSAVED-IN-EDITOR" in output_of(read) and "UNSAVED" not in (repo / "calc.py").read_text()
            # the client's MCP tool ran in the server the ACP process spawned, called back from the daemon
            _start, noted = calls_of(client, sid, RECORD)
            assert noted.status == "completed" and "noted from-the-daemon x3" in output_of(noted)
            assert notes.read_text() == "from-the-daemon:3\n"
    finally:
        await shut_down_daemon(load_config(repo, env=env))
