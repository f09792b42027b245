"""``OpeningWorkspace``: the handle answers at once, calls wait for the real workspace, a failed opening
answers every call with its coded error, and closing stops an opening still under way.

The real workspace is ``LocalWorkspace.open_index`` over a small git-less folder (real Qdrant Edge,
real Tree-sitter); the opening is held back by an event the test sets, not by time.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from daemon.config import Config
from daemon.core.ports import Workspace
from daemon.errors import DaemonError, ErrorCode
from daemon.index.workspace_index import WorkspaceIndex
from daemon.service.workspace.local import LocalWorkspace
from daemon.service.workspace.opening import OpeningWorkspace
from tests.intel_tools import workspace_config

WAIT_S = 60.0


def _config(tmp_path: Path) -> Config:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def frobnicate(values):\n    return sum(values)\n", encoding="utf-8")
    config = workspace_config(root, tmp_path / "state")
    with WorkspaceIndex.open(config) as index:
        index.index()
    return config


async def test_calls_wait_for_the_opening_and_then_answer_from_the_real_workspace(tmp_path: Path) -> None:
    config = _config(tmp_path)
    release = asyncio.Event()
    entered = asyncio.Event()

    @asynccontextmanager
    async def opener() -> AsyncGenerator[Workspace]:
        entered.set()
        await release.wait()
        async with LocalWorkspace.open_index(config) as workspace:
            yield workspace

    handle = OpeningWorkspace.start(opener)
    try:
        await asyncio.wait_for(entered.wait(), WAIT_S)
        search = asyncio.create_task(handle.search("frobnicate values", k=5, filters=None))
        assert not handle.ready  # held back by the event: the call waits for the opening
        release.set()
        result = await asyncio.wait_for(search, WAIT_S)
        assert [hit.chunk.path for hit in result.hits][:1] == ["calc.py"]
        assert handle.ready and handle.serves_intel is False  # the index alone serves no intel
    finally:
        await handle.aclose()


async def test_a_failed_opening_answers_every_call_with_its_coded_error(tmp_path: Path) -> None:
    @asynccontextmanager
    async def opener() -> AsyncGenerator[Workspace]:
        raise DaemonError("the daemon could not start: disk full", code=ErrorCode.STORE_FAILED)
        yield  # pragma: no cover - an async generator that fails before yielding

    handle = OpeningWorkspace.start(opener)
    try:
        for call in (handle.status(), handle.search("x", k=1, filters=None)):
            with pytest.raises(DaemonError) as caught:
                await asyncio.wait_for(call, WAIT_S)
            assert caught.value.code is ErrorCode.STORE_FAILED and "disk full" in str(caught.value)
    finally:
        await handle.aclose()


async def test_closing_while_opening_stops_the_opening(tmp_path: Path) -> None:
    entered = asyncio.Event()
    cancelled = asyncio.Event()

    @asynccontextmanager
    async def opener() -> AsyncGenerator[Workspace]:
        entered.set()
        try:
            await asyncio.Event().wait()  # an opening that never finishes on its own
        except asyncio.CancelledError:
            cancelled.set()
            raise
        raise AssertionError("unreachable")
        yield  # pragma: no cover

    handle = OpeningWorkspace.start(opener)
    await asyncio.wait_for(entered.wait(), WAIT_S)
    await asyncio.wait_for(handle.aclose(), WAIT_S)
    assert cancelled.is_set()
