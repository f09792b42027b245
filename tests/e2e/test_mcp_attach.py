"""`ided mcp` (attached by default): an MCP agent shares the workspace daemon with every other front."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from daemon.config import load_config
from daemon.service.wire.api import DaemonStatus, Methods
from daemon.service.wire.client import DaemonClient
from tests.e2e.test_mcp_stdio import CALL_TIMEOUT, _env, call
from tests.intel_tools import copy_workspace, require_server

pytestmark = pytest.mark.e2e


async def test_an_attached_mcp_server_answers_from_the_shared_daemon(tmp_path: Path) -> None:
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    env = _env(tmp_path / "state", tmp_path / "home")
    params = StdioServerParameters(
        command=sys.executable, args=["-P", "-m", "daemon", "mcp", "-w", str(workspace)], env=env, cwd=str(workspace)
    )
    config = load_config(workspace, env=env)
    with (tmp_path / "mcp-stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=CALL_TIMEOUT) as client:
            found = await call(client, "find_definition", file="app.py", line=11, column=12)
            assert found["definitions"][0]["location"]["path"] == "shapes/report.py"
            other = await DaemonClient.attach(config, client="cli", start=False)  # the daemon it started
            try:
                status = await other.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
                assert sorted(c.client for c in status.clients) == ["cli", "mcp"]
                hits = await call(client, "search_code", query="Reporter")
                assert any(h["path"] == "shapes/report.py" for h in hits["hits"])
            finally:
                await other.call(Methods.SHUTDOWN, None)
                await asyncio.wait_for(other.wait_closed(), 30)
                await other.close()
