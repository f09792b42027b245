"""``status`` never queues behind the index thread: while it works (a first pass over a large tree,
a big re-index), the daemon answers from the last snapshot at once instead of after the work."""

from __future__ import annotations

import asyncio
import shutil
import threading
from pathlib import Path
from typing import Any

from daemon.config import load_config
from daemon.service.index.host import IndexHost

FIXTURE = Path(__file__).parents[1] / "fixtures" / "workspaces" / "polyglot"


async def test_status_answers_from_the_last_snapshot_while_the_index_thread_is_held(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = tmp_path / "ws"
    shutil.copytree(FIXTURE, workspace)
    overrides: dict[str, Any] = {
        "state_dir": str(tmp_path / "state"),
        "embedding": {"enabled": False},
        "daemon": {"watch": False},
    }
    config = load_config(workspace, overrides=overrides)

    async def publish(method: str, params: Any) -> None:
        return None

    host = IndexHost(config, publish)
    await host.start()
    try:
        await asyncio.wait_for(host.ready.wait(), 60)
        indexed = await host.status()
        assert indexed.files_indexed > 0
        entered, release = threading.Event(), threading.Event()

        def hold_the_index_thread() -> None:  # stands for a long pass: the thread is busy until released
            entered.set()
            release.wait(120)

        held = asyncio.create_task(host._call(hold_the_index_thread))
        assert await asyncio.to_thread(entered.wait, 30)
        # without the snapshot this waits for the held thread (120 s); the bound only catches that
        during = await asyncio.wait_for(host.status(), 30)
        assert not held.done()
        assert (during.files_indexed, during.chunks) == (indexed.files_indexed, indexed.chunks)
        release.set()
        await held
    finally:
        await host.close()
