"""One hostile request must not freeze the daemon for everyone.

A legal 200 KB Python file nested 100,000 levels deep: ``intel/ast_node`` on it used to walk the
tree on the daemon's event loop (tens of seconds per call, ``ided status`` and every other client
waiting behind it). Now each request's Tree-sitter work runs off the loop under a time and depth
budget and answers ``too_complex``; ``daemon/status`` is answered while the hostile requests are in
flight, and the daemon serves normal requests afterwards.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from daemon.config import load_config
from daemon.errors import ErrorCode
from daemon.service.intel.capabilities import AST_NODE, DOCUMENT_SYMBOLS
from daemon.service.wire.api import DaemonStatus, Methods
from daemon.service.wire.client import DaemonClient
from daemon.service.wire.rpc import DOMAIN_ERROR, RpcError
from tests.intel_tools import copy_workspace, intel_settings

pytestmark = pytest.mark.e2e

DEPTH = 100_000
LIVENESS_S = 20.0
"""Status must answer well inside the time one hostile request held the loop before (30+ s)."""


async def _error_code(pending: asyncio.Task[Any]) -> str | None:
    try:
        await pending
    except RpcError as exc:
        assert exc.code == DOMAIN_ERROR, exc
        return exc.data["code"]
    return None


async def test_a_deeply_nested_file_answers_too_complex_while_status_is_served(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = copy_workspace("intel_python", tmp_path)
    (workspace / "deep.py").write_text("x = " + "[" * DEPTH + "1" + "]" * DEPTH + "\n")
    overrides: dict[str, Any] = {
        "state_dir": str(tmp_path / "state"),
        "embedding": {"enabled": False},
        "daemon": {"idle_shutdown_seconds": 30},  # a daemon a failing run leaves behind stops by itself
        "intel": intel_settings(),
    }
    config = load_config(workspace, overrides=overrides)
    client = await DaemonClient.attach(config, client="other", overrides=overrides)
    try:
        hostile = [
            asyncio.create_task(
                client.call(AST_NODE.daemon_method, {"file": "deep.py", "line": 1, "column": 4 + DEPTH // 2 + i})
            )
            for i in range(4)
        ]
        symbols = asyncio.create_task(client.call(DOCUMENT_SYMBOLS.daemon_method, {"file": "deep.py"}))
        status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus, wait_s=LIVENESS_S)
        assert status.pid == client.daemon_pid
        assert [await _error_code(task) for task in hostile] == [ErrorCode.TOO_COMPLEX.value] * 4
        assert (await symbols)["query"] == "deep.py"
        # the syntax threads are free again: a normal file is described
        node = await client.call(AST_NODE.daemon_method, {"file": "app.py", "line": 1, "column": 1})
        assert node["path"] == "app.py" and node["node"]["type"]
        shallow = await client.call(AST_NODE.daemon_method, {"file": "deep.py", "line": 1, "column": 1})
        assert shallow["node"]["text"] == "x"
    finally:
        await client.call(Methods.SHUTDOWN, None)
        await client.close()
