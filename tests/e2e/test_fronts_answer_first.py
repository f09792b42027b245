"""Every front answers its handshake before the workspace daemon does: ``ided mcp`` and ``ided lsp``
``initialize``, ``ided acp`` ``initialize`` and ``session/new``, and each attaches in the background.

The synchronisation is real: the workspace daemon runs but is stopped (SIGSTOP), so a front's attach
(connect, then ``hello``) cannot finish until the test resumes it. A front that waited for the daemon
before answering would never answer here; once resumed, the first request answers from the daemon.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from daemon.config import Config, load_config
from daemon.service.wire.api import DaemonStatus, Methods
from daemon.service.wire.client import DaemonClient
from tests.e2e.acp_support import WAIT_S, env_for, fixture_repo, initialize, spawn_ided_acp
from tests.e2e.lsp_support import copy_fixture, lsp_client, overrides, wait_gone
from tests.e2e.test_acp_replay_status import StatusRecorder
from tests.e2e.test_mcp_stdio import CALL_TIMEOUT, SEARCH_PATH, _env, call
from tests.intel_tools import copy_workspace, require_server

pytestmark = pytest.mark.e2e


@dataclass
class PausedDaemon:
    """The workspace daemon, started and then stopped by a signal until ``resume``."""

    client: DaemonClient
    pid: int

    def resume(self) -> None:
        os.kill(self.pid, signal.SIGCONT)


@asynccontextmanager
async def paused_daemon(config: Config, settings: dict[str, Any]) -> AsyncGenerator[PausedDaemon]:
    """Start the daemon of ``config``'s workspace (with ``settings``), stop it; on exit resume and shut it down."""
    client = await DaemonClient.attach(config, client="cli", start=True, overrides=settings)
    paused = PausedDaemon(client=client, pid=client.daemon_pid)
    os.kill(paused.pid, signal.SIGSTOP)
    try:
        yield paused
    finally:
        paused.resume()
        with contextlib.suppress(ConnectionError, TimeoutError):
            await client.call(Methods.SHUTDOWN, None, wait_s=WAIT_S)
        await client.close()
        await wait_gone(paused.pid, WAIT_S)


async def test_mcp_answers_initialize_while_the_daemon_cannot_answer(tmp_path: Path) -> None:
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    state = tmp_path / "state"
    env = _env(state, tmp_path / "home")
    config = load_config(workspace, env=env)
    settings = {"state_dir": str(state), "embedding": {"enabled": False}, "intel": {"search_path": list(SEARCH_PATH)}}
    params = StdioServerParameters(
        command=sys.executable, args=["-P", "-m", "daemon", "mcp", "-w", str(workspace)], env=env, cwd=str(workspace)
    )
    async with paused_daemon(config, settings) as daemon:
        with (tmp_path / "mcp-stderr.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=CALL_TIMEOUT) as client:
                # initialize is answered, and the tools listed, with the daemon stopped: nothing waited for it
                assert client.server_info is not None and client.server_info.name == "ided-code-intel"
                tools = {tool.name for tool in (await client.list_tools()).tools}
                assert "find_definition" in tools
                daemon.resume()
                found = await call(client, "find_definition", file="app.py", line=11, column=12)
                assert found["definitions"][0]["location"]["path"] == "shapes/report.py"
                status = await daemon.client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
                assert "mcp" in [c.client for c in status.clients]


async def test_lsp_answers_initialize_while_the_daemon_cannot_answer(tmp_path: Path) -> None:
    workspace = copy_fixture(tmp_path / "ws")
    state = tmp_path / "state"
    settings = overrides(state)
    config = load_config(workspace, overrides=settings)
    async with paused_daemon(config, settings) as daemon, lsp_client(workspace, state) as client:
        assert client.initialize_result is not None  # answered with the daemon stopped
        daemon.resume()
        status = await asyncio.wait_for(client.ided("ided/index/status"), WAIT_S)
        assert status["daemonPid"] == daemon.pid


async def test_acp_answers_initialize_and_session_new_while_the_daemon_cannot_answer(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path)
    env = env_for(tmp_path, None, acp__attach_daemon="true")
    config = load_config(repo, env=env)
    settings = {"state_dir": str(tmp_path / "state"), "embedding": {"enabled": False}}
    recorder = StatusRecorder()
    async with paused_daemon(config, settings) as daemon, spawn_ided_acp(tmp_path, env, client=recorder) as agent:
        await initialize(agent.conn)
        sid = (await asyncio.wait_for(agent.conn.new_session(cwd=str(repo), mcp_servers=[]), WAIT_S)).session_id
        assert recorder.statuses(sid) == []  # the status waits for the attach, which waits for the daemon
        daemon.resume()
        await recorder.wait_for(lambda: bool(recorder.statuses(sid)), "_ided/status once the daemon answers")
        (status,) = recorder.statuses(sid)
        assert status["daemon"] == "running" and status["daemon_pid"] == daemon.pid
