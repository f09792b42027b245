"""A cold ``ided mcp`` answers a definition by name before its workspace has opened, from a Tree-sitter
scan in its own process (``mcp_servers.code_intel.early_definitions``). The daemon it starts is held at
the workspace lock, taken here as an in-process ``ided`` command would take it: the workspace cannot
open until the test lets it go, so no timing decides which answer comes."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from daemon.config import load_config
from daemon.index.state_files import ensure_state_dir
from daemon.index.workspace_lock import WorkspaceLock
from daemon.service.wire.api import Methods
from daemon.service.wire.client import DaemonClient, DaemonUnavailable
from tests.e2e.test_mcp_stdio import CALL_TIMEOUT, _env, call
from tests.intel_tools import copy_workspace, require_server

pytestmark = pytest.mark.e2e


async def test_a_definition_by_name_is_answered_while_the_daemon_cannot_open_the_workspace(tmp_path: Path) -> None:
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    # the daemon waits for the lock up to half its start timeout: long enough for this test, bounded if it fails
    env = _env(tmp_path / "state", tmp_path / "home") | {"IDED_DAEMON__START_TIMEOUT_SECONDS": "120"}
    config = load_config(workspace, env=env)
    ensure_state_dir(config.state_path)
    lock = WorkspaceLock(config.state_path)
    lock.acquire(holder="ided index")
    params = StdioServerParameters(
        command=sys.executable, args=["-P", "-m", "daemon", "mcp", "-w", str(workspace)], env=env, cwd=str(workspace)
    )
    try:
        with (tmp_path / "mcp-stderr.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=CALL_TIMEOUT) as client:
                first = await call(client, "find_definition", symbol="Reporter.render")
                assert not (config.state_path / "daemon.json").exists()  # the daemon is not serving yet
                assert first["answered_by"] == "index" and first["server"] is None
                (definition,) = first["definitions"]
                assert (definition["location"]["path"], definition["symbol"]) == ("shapes/report.py", "Reporter.render")
                assert definition["source"].lstrip().startswith("def render(")
                assert any("Tree-sitter scan of the workspace" in note for note in first["notes"])

                lock.release()  # the daemon opens the workspace: what a scan cannot answer goes to it
                later = await call(client, "find_definition", file="app.py", line=11, column=12)
                assert later["answered_by"] == "language_server"
                assert later["definitions"][0]["location"]["path"] == "shapes/report.py"
    finally:
        lock.release()
        with contextlib.suppress(DaemonUnavailable):  # none when the test failed before the daemon started
            other = await DaemonClient.attach(config, client="cli", start=False)
            await other.call(Methods.SHUTDOWN, None)
            await asyncio.wait_for(other.wait_closed(), 30)
            await other.close()
