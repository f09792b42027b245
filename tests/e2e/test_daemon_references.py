"""References by name in the daemon: remembered while nothing the language server could see changed.

A real daemon (subprocess, socket, watcher) over a copy of a Python project, a real basedpyright:
the warm answer is the cold one without asking the server again, and a file saved with a new call
site (waited for through the daemon's own ``index/changed`` event) is in the next answer.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from daemon.config import load_config
from daemon.service.intel.capabilities import REFERENCES
from daemon.service.wire.api import DaemonStatus, Methods
from daemon.service.wire.client import DaemonClient
from tests.intel_tools import copy_workspace, intel_settings, require_server

pytestmark = pytest.mark.e2e

SYMBOL = {"symbol": "Point.distance_to"}


async def _python_requests(client: DaemonClient) -> int:
    status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
    return next(s for s in status.servers if "python" in s.languages).requests


def _places(answer: dict[str, Any]) -> list[tuple[str, int, int]]:
    return [
        (r["location"]["path"], r["location"]["range"]["start_line"], r["location"]["range"]["start_column"])
        for r in answer["references"]
    ]


async def _save_and_wait(path: Path, text: str, events: asyncio.Queue[tuple[str, dict[str, Any]]]) -> None:
    """Write ``path`` and wait for the daemon's ``index/changed`` naming it (sent after the servers were told)."""
    await asyncio.to_thread(path.write_text, text)
    rel = f"{path.parent.name}/{path.name}" if path.parent.name == "shapes" else path.name
    while True:
        method, params = await asyncio.wait_for(events.get(), 30)
        if method == Methods.INDEX_CHANGED and rel in params["paths"]:
            return


async def test_references_are_remembered_until_a_save_the_server_sees(tmp_path: Path, isolated_home: Path) -> None:
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    overrides: dict[str, Any] = {
        "state_dir": str(tmp_path / "state"),
        "embedding": {"enabled": False},
        "daemon": {"idle_shutdown_seconds": 0, "debounce_ms": 20},
        "intel": intel_settings(),
    }
    config = load_config(workspace, overrides=overrides)
    events: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()

    async def on_note(method: str, params: dict[str, Any]) -> None:
        await events.put((method, params))

    client = await DaemonClient.attach(
        config, client="other", overrides=overrides, subscribe=True, on_notification=on_note
    )
    try:
        status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
        while status.index.last_update is None:  # subscribed before asking: the first pass's event is not missed
            method, _ = await asyncio.wait_for(events.get(), 60)
            if method == Methods.INDEX_CHANGED:
                break
        cold = await client.call(REFERENCES.daemon_method, SYMBOL)
        assert ("app.py", 10, 17) in _places(cold)
        # the cold call started basedpyright and waited for it to load: its answer had nothing to be
        # remembered with; the next one is asked and remembered, the one after answered from memory
        assert await client.call(REFERENCES.daemon_method, SYMBOL) == cold
        asked = await _python_requests(client)
        warm = await client.call(REFERENCES.daemon_method, SYMBOL)
        assert warm == cold
        assert await _python_requests(client) == asked  # answered without asking basedpyright again

        # a new module with a call site (the server must add it to its program) ...
        await _save_and_wait(
            workspace / "shapes" / "extra.py",
            "from shapes.geometry import Point\n\n\ndef far() -> float:\n"
            "    return Point(0.0, 0.0).distance_to(Point(3.0, 4.0))\n",
            events,
        )
        after_new = await client.call(REFERENCES.daemon_method, SYMBOL)
        assert set(_places(after_new)) == {*_places(cold), ("shapes/extra.py", 5, 28)}
        assert await _python_requests(client) > asked
        # ... and a call site added to a module the server already had
        app = workspace / "app.py"
        text = app.read_text().replace(
            "    return Reporter", "    print(first.distance_to(points[2]))\n    return Reporter"
        )
        await _save_and_wait(app, text, events)
        after_edit = await client.call(REFERENCES.daemon_method, SYMBOL)
        assert set(_places(after_edit)) == {*_places(after_new), ("app.py", 11, 17)}
    finally:
        await client.call(Methods.SHUTDOWN, None)
        await client.close()
