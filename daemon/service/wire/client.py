"""Attach to a workspace's daemon, starting it first when asked (like ``gopls -remote=auto``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from daemon.config import Config, to_set_pairs
from daemon.errors import DaemonError, ErrorCode
from daemon.service.wire.api import HelloParams, Methods
from daemon.service.wire.files import remove_stale
from daemon.service.wire.rpc import STREAM_LIMIT, Handler, NotificationHandler, RpcConnection

__all__ = ["DaemonClient", "DaemonUnavailable", "spawn_daemon"]


M = TypeVar("M", bound=BaseModel)
ClientKind = Literal["lsp", "mcp", "acp", "cli", "other"]


class DaemonUnavailable(DaemonError):
    default_code = ErrorCode.STORE_FAILED


def _daemon_command(config: Config, overrides: Mapping[str, Any] | None) -> list[str]:
    cmd = [sys.executable, "-P", "-m", "daemon"]  # -P: the workspace never shadows the stdlib
    for pair in to_set_pairs(overrides or {}):
        cmd += ["--set", pair]
    return [*cmd, "daemon", "--workspace", str(config.workspace_path)]


async def spawn_daemon(config: Config, overrides: Mapping[str, Any] | None = None) -> None:
    """Start ``ided daemon --detach`` and wait until it listens (or says why it could not)."""
    proc = await asyncio.create_subprocess_exec(
        *_daemon_command(config, overrides),
        "--detach",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(config.workspace_path),
    )
    try:
        _, err = await asyncio.wait_for(proc.communicate(), config.daemon.start_timeout_seconds)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise DaemonUnavailable(
            f"the daemon for {config.workspace} did not start within {config.daemon.start_timeout_seconds:.0f}s "
            f"(log: {config.state_path / 'daemon.log'})"
        ) from None
    if proc.returncode != 0 and remove_stale(config.state_path) is None:
        code, why = _coded(err.decode(errors="replace").strip().removeprefix("error: "))
        raise DaemonUnavailable(f"the daemon for {config.workspace} could not start: {why}", code=code)


_DOCS_LINK = re.compile(r"\s*\[see docs/errors\.md#(\w+)\]\s*$")


def _coded(message: str) -> tuple[ErrorCode | None, str]:
    """The code a failed ``ided daemon --detach`` printed (its message ends with the docs link), and the
    message without that link; (None, message) when it printed none."""
    found = _DOCS_LINK.search(message)
    if found is None:
        return None, message
    try:
        return ErrorCode(found.group(1)), message[: found.start()]
    except ValueError:
        return None, message


class DaemonClient:
    """A connection to the daemon. Use ``async with await DaemonClient.attach(...)``."""

    def __init__(self, conn: RpcConnection, reader_task: asyncio.Task[None], hello: dict[str, Any]) -> None:
        self._conn = conn
        self._reader_task = reader_task
        self.daemon_pid = int(hello.get("pid", 0))
        self.hello = hello
        """The daemon's answer to ``daemon/hello`` (pid, version, workspace, ...)."""

    @classmethod
    async def attach(
        cls,
        config: Config,
        *,
        client: ClientKind,
        start: bool = True,
        subscribe: bool = False,
        on_notification: NotificationHandler | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> DaemonClient:
        """Connect to the running daemon; with ``start``, spawn one first if none answers."""
        record = remove_stale(config.state_path)
        if record is None:
            if not start:
                raise DaemonUnavailable(f"no daemon is running for {config.workspace}")
            await spawn_daemon(config, overrides)
            record = remove_stale(config.state_path)
            if record is None:
                raise DaemonUnavailable(f"the daemon for {config.workspace} started but does not answer")
        reader, writer = await asyncio.open_unix_connection(record.socket, limit=STREAM_LIMIT)
        conn = RpcConnection(reader, writer, on_notification=on_notification, name=f"daemon pid {record.pid}")
        task = asyncio.create_task(conn.serve(), name="ided-daemon-client")
        hello = await conn.request(Methods.HELLO, HelloParams(client=client, pid=os.getpid(), subscribe=subscribe))
        return cls(conn, task, hello)

    async def call(
        self, method: str, params: BaseModel | Mapping[str, Any] | None = None, *, wait_s: float = 120
    ) -> Any:
        return await self._conn.request(method, params, wait_s=wait_s)

    async def call_model(
        self, method: str, params: BaseModel | Mapping[str, Any] | None, result: type[M], *, wait_s: float = 120
    ) -> M:
        return result.model_validate(await self.call(method, params, wait_s=wait_s))

    def add_handlers(self, handlers: Mapping[str, Handler]) -> None:
        """Serve ``handlers`` to the daemon's requests on this connection (a lent run's call-backs)."""
        self._conn.add_handlers(handlers)

    @property
    def closed(self) -> bool:
        return self._conn.closed

    async def wait_closed(self) -> None:
        await self._conn.wait_closed()

    async def close(self) -> None:
        await self._conn.close()
        self._reader_task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader_task

    async def __aenter__(self) -> DaemonClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
