"""The daemon fills dense vectors in a worker process: the model never loads in the daemon itself."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from daemon.config import default_cache_root, load_config
from daemon.core.models import SearchMode
from daemon.index.model_files import bundled_model_dir
from daemon.service.wire.api import DaemonStatus, Methods, SearchParams
from daemon.service.wire.client import DaemonClient
from tests.adversarial.test_processes import (  # pyright: ignore[reportPrivateUsage]
    _descendants,
    _exits,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

WORKER = "daemon.index.embed_worker"


def _maps_onnxruntime(pid: int) -> bool:
    return "onnxruntime" in Path(f"/proc/{pid}/maps").read_text()


async def test_vectors_fill_in_a_worker_that_exits_when_done(tmp_path: Path, isolated_home: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for f in range(12):
        body = "\n\n".join(
            f'def step_{f}_{i}(values):\n    """Scale the values by {i}."""\n    return [v * {i} for v in values]'
            for i in range(12)
        )
        (workspace / f"mod_{f}.py").write_text(body + "\n")
    overrides: dict[str, Any] = {
        "state_dir": str(tmp_path / "state"),
        "embedding": {"enabled": True, "threads": 1, "max_tokens": 32},
        "daemon": {"idle_shutdown_seconds": 0},
    }
    config = load_config(workspace, overrides=overrides)
    client = await DaemonClient.attach(config, client="other", overrides=overrides)
    pid = client.daemon_pid
    workers: set[int] = set()
    try:

        async def filled() -> DaemonStatus:
            while True:
                workers.update(p for p, cmd in _descendants(pid).items() if WORKER in cmd)
                status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
                if status.index.chunks and status.index.embedded_fraction >= 1.0 and status.busy is None:
                    return status
                await asyncio.sleep(0.02)

        status = await asyncio.wait_for(filled(), 240)
        assert status.index.chunks >= 144
        assert workers, "no embedding worker was seen while the vectors filled"
        for worker in workers:  # it exits once no chunk lacks a vector
            assert await _exits(worker, 30), f"embedding worker {worker} still runs after the fill"
        assert not _maps_onnxruntime(pid)  # the model ran in the worker only
        result = await client.call(Methods.INDEX_SEARCH, SearchParams(query="scale the values", k=3))
        assert result["hits"] and result["mode"] == SearchMode.HYBRID.value, result
        assert _maps_onnxruntime(pid)  # the query embedded in the daemon (its light session)
    finally:
        await client.call(Methods.SHUTDOWN, None)
        await client.close()


async def test_a_model_that_cannot_load_leaves_search_lexical_and_says_why(tmp_path: Path, isolated_home: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "mod.py").write_text("def scale(values):\n    return [v * 2 for v in values]\n")
    model = tmp_path / "broken-model"
    model.mkdir()
    bundled = bundled_model_dir(default_cache_root())
    for name in ("tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json"):
        (model / name).write_bytes((bundled / name).read_bytes())
    (model / "model.onnx").write_bytes(b"not an onnx model")
    overrides: dict[str, Any] = {
        "state_dir": str(tmp_path / "state"),
        "embedding": {"enabled": True, "model_dir": str(model)},
        "daemon": {"idle_shutdown_seconds": 0},
    }
    config = load_config(workspace, overrides=overrides)
    client = await DaemonClient.attach(config, client="other", overrides=overrides)
    try:

        async def reason() -> str:
            while True:
                status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
                if status.index.dense_unavailable_reason:
                    return status.index.dense_unavailable_reason
                await asyncio.sleep(0.05)

        assert "cannot load dense model" in await asyncio.wait_for(reason(), 120)
        result = await client.call(Methods.INDEX_SEARCH, SearchParams(query="scale the values", k=3))
        assert result["hits"] and result["mode"] == SearchMode.LEXICAL.value
        assert not [cmd for cmd in _descendants(client.daemon_pid).values() if WORKER in cmd]
    finally:
        await client.call(Methods.SHUTDOWN, None)
        await client.close()


async def test_a_daemon_left_idle_finishes_the_fill_before_it_stops(tmp_path: Path, isolated_home: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for f in range(80):
        body = "\n\n".join(
            f'def shift_{f}_{i}(values, offset_{i}=None):\n    """Shift the values by {i}, or by the offset."""\n'
            f"    step = offset_{i} if offset_{i} is not None else {i}\n    return [v + step for v in values]"
            for i in range(12)
        )
        (workspace / f"mod_{f}.py").write_text(body + "\n")
    overrides: dict[str, Any] = {
        "state_dir": str(tmp_path / "state"),
        "embedding": {"enabled": True, "threads": 1},
        "daemon": {"idle_shutdown_seconds": 1, "idle_shutdown_no_editor_seconds": 1},
    }
    config = load_config(workspace, overrides=overrides)
    client = await DaemonClient.attach(config, client="other", overrides=overrides)
    pid = client.daemon_pid

    async def first_pass() -> None:
        while True:
            status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
            if status.index.last_update is not None:
                return
            await asyncio.sleep(0.02)

    await asyncio.wait_for(first_pass(), 120)
    await client.close()  # no client from here on: idle, but the vectors are still filling
    assert await _exits(pid, 600), "the daemon did not stop once idle"
    from daemon.index.workspace_index import WorkspaceIndex

    with WorkspaceIndex.open(config) as ws:
        status = ws.status()
    assert status.chunks >= 960 and status.embedded_fraction == 1.0, status
