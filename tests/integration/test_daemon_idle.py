"""The daemon's idle limit before and after its first client, on a daemon served in this process."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from daemon.config import load_config
from daemon.service.daemon.server import DaemonServer
from daemon.service.wire.client import DaemonClient
from daemon.service.wire.files import read_record

FIXTURE = Path(__file__).parents[1] / "fixtures" / "workspaces" / "polyglot"


async def test_a_daemon_waits_for_its_first_client_as_long_as_a_front_waits_and_then_keeps_its_short_limit(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = tmp_path / "ws"
    shutil.copytree(FIXTURE, workspace)
    overrides = {
        "state_dir": str(tmp_path / "state"),
        "embedding": {"enabled": False},
        "intel": {"prestart": False},
        "daemon": {"idle_shutdown_seconds": 1, "idle_shutdown_no_editor_seconds": 1, "start_timeout_seconds": 45},
    }
    config = load_config(workspace, overrides=overrides)
    ready = asyncio.Event()
    server = DaemonServer(config, on_ready=ready.set)
    serving = asyncio.create_task(server.serve())
    try:
        await asyncio.wait_for(ready.wait(), 120)
        # a front that spawned it may take seconds to connect on a loaded machine: a 1 s limit would stop it first
        assert server.idle_limit() == 45
        client = await DaemonClient.attach(config, client="cli", start=False)
        assert server.idle_limit() == 1
        await client.close()
        await asyncio.wait_for(asyncio.shield(serving), 60)  # stops by itself, once idle for the short limit
    finally:
        if not serving.done():
            server.request_shutdown()
            await serving
    assert read_record(config.state_path) is None
