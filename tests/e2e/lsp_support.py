"""Shared by the ``ided lsp`` end-to-end tests: a pytest-lsp client that keeps ``ided/*`` answers
as plain JSON, the server command line, and stopping the daemon a test started."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, LanguageClient, register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

from daemon.config import Config, load_config
from daemon.errors import ConfigError
from daemon.service.wire.api import Methods
from daemon.service.wire.client import DaemonClient, DaemonUnavailable

FIXTURE = Path(__file__).parents[1] / "fixtures" / "workspaces" / "polyglot"
WAIT_S = 60.0


@attrs.define
class RawResponse:
    id: int | str
    result: Any
    jsonrpc: str = "2.0"


@attrs.define
class RawNotification:
    method: str
    params: Any
    jsonrpc: str = "2.0"


class RawIdedProtocol(LanguageClientProtocol):
    """Leaves ``ided/*`` results and notifications as the JSON the server sent (dicts, lists)."""

    @functools.lru_cache  # noqa: B019 - the shape pygls declares
    def get_result_type(self, method: str) -> type[Any] | None:
        return RawResponse if method.startswith("ided/") else super().get_result_type(method)

    @functools.lru_cache  # noqa: B019
    def get_message_type(self, method: str) -> type[Any] | None:
        return RawNotification if method == "ided/index/changed" else super().get_message_type(method)


class IdedTestClient(LanguageClient):
    def __init__(self) -> None:
        super().__init__(protocol_cls=RawIdedProtocol, converter_factory=default_converter)  # pyright: ignore[reportUnknownMemberType]
        self.progress_ended = asyncio.Event()
        self.shown: asyncio.Queue[types.ShowMessageParams] = asyncio.Queue()
        self.index_changed: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.initialize_result: types.InitializeResult | None = None

    async def ided(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return await asyncio.wait_for(self.protocol.send_request_async(method, params), WAIT_S)


def make_client() -> IdedTestClient:
    client = IdedTestClient()
    features = dict(DEFAULT_CLIENT_FEATURES)
    record_progress = features[types.PROGRESS]

    def progress(ls: IdedTestClient, params: types.ProgressParams) -> None:
        record_progress(ls, params)
        value: Any = params.value
        if isinstance(value, dict) and value.get("kind") == "end":  # pyright: ignore[reportUnknownMemberType]
            ls.progress_ended.set()

    def changed(ls: IdedTestClient, params: Any) -> None:
        ls.index_changed.put_nowait(params)

    record_message = features[types.WINDOW_SHOW_MESSAGE]

    def show_message(ls: IdedTestClient, params: types.ShowMessageParams) -> None:
        record_message(ls, params)
        ls.shown.put_nowait(params)

    features[types.PROGRESS] = progress
    features[types.WINDOW_SHOW_MESSAGE] = show_message
    features["ided/index/changed"] = changed
    register_lsp_features(client, features)
    return client


DAEMON_IDLE_S = 30
"""The test daemons' idle shutdown: each test stops its daemon, but one that was still starting when
its front exited cannot be reached yet; this way it stops on its own, half a minute later."""


def overrides(state: Path) -> dict[str, Any]:
    return {
        "state_dir": str(state),
        "embedding": {"enabled": False},
        "daemon": {"idle_shutdown_seconds": DAEMON_IDLE_S, "debounce_ms": 20},
    }


def server_args(state: Path) -> list[str]:
    return [
        "-P", "-m", "daemon",
        "--set", f"state_dir={state}",
        "--set", "embedding.enabled=false",
        "--set", f"daemon.idle_shutdown_seconds={DAEMON_IDLE_S}",
        "--set", "daemon.debounce_ms=20",
        "lsp",
    ]  # fmt: skip


def copy_fixture(dest: Path) -> Path:
    shutil.copytree(FIXTURE, dest)
    return dest


def initialize_params(workspace: Path, *, progress: bool = True) -> types.InitializeParams:
    return types.InitializeParams(
        capabilities=types.ClientCapabilities(window=types.WindowClientCapabilities(work_done_progress=progress)),
        root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name=workspace.name)],
    )


@asynccontextmanager
async def lsp_client(
    workspace: Path,
    state: Path,
    *extra: str,
    progress: bool = True,
    cwd: Path | None = None,
    options: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
) -> AsyncGenerator[IdedTestClient]:
    """``ided lsp`` over real stdio, initialized; on exit: shutdown, exit (code 0), daemon stopped.

    ``extra``: more ``--set key=value`` arguments; ``options``: the ``initializationOptions``;
    ``env``: the server's environment (default: this process's)."""
    client = make_client()
    args = server_args(state)
    await client.start_io(sys.executable, *args[:-1], *extra, args[-1], cwd=str(cwd or workspace), env=env)  # pyright: ignore[reportUnknownMemberType]
    try:
        params = initialize_params(workspace, progress=progress)
        params.initialization_options = options
        client.initialize_result = await asyncio.wait_for(client.initialize_session(params), WAIT_S)
        yield client
        await asyncio.wait_for(client.shutdown_session(), WAIT_S)
        assert client._server is not None
        assert client._server.returncode == 0
    finally:
        process = client._server
        if process is not None and process.returncode is None:  # the test failed before exit
            process.terminate()
            await asyncio.wait_for(process.wait(), WAIT_S)
        await asyncio.wait_for(client.stop(), WAIT_S)
        with contextlib.suppress(ConfigError):  # a test's workspace may carry a broken .ided.toml
            await stop_daemon(load_config(workspace, overrides=overrides(state)))


async def stop_daemon(config: Config) -> None:
    """Stop the workspace's daemon, if one runs, and wait until its process is gone."""
    try:
        client = await DaemonClient.attach(config, client="other", start=False)
    except (DaemonUnavailable, OSError):
        return
    pid = client.daemon_pid
    try:
        await client.call(Methods.SHUTDOWN, None, wait_s=10)
    finally:
        await client.close()
    await wait_gone(pid)


async def wait_gone(pid: int, wait_s: float = 20) -> None:
    """Wait for a process (not necessarily our child) to exit, via a pidfd: no polling."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    exited = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(fd, exited.set)
    try:
        await asyncio.wait_for(exited.wait(), wait_s)
    finally:
        loop.remove_reader(fd)
        os.close(fd)
