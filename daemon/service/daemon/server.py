"""``ided daemon``: one long-running process per workspace that every front attaches to.

It owns the workspace index, the language servers and the workspace's pipeline runs, listens on a
Unix socket readable only by the user, writes ``daemon.json`` (pid, socket) to the state
directory, refuses to start twice for one workspace, stops when idle, and shuts down cleanly on
SIGTERM/SIGINT (flushing the index).

Idle means no client attached. The limit is ``daemon.idle_shutdown_seconds`` once an editor (an
``lsp`` or ``acp`` front) has attached, and the shorter ``daemon.idle_shutdown_no_editor_seconds``
while only agents (``mcp``) and commands have: a daemon an agent session started leaves soon after it.
Runs executing in the daemon count as activity, and so does filling the dense vectors: it does not
stop while one does, and the idle clock starts again when the last one ends. Until its first
client connects, the limit is at least ``daemon.start_timeout_seconds``, as long as the front that
started it waits for it: a short limit never stops a daemon before the front it was started for
arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import signal
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from daemon import __version__
from daemon.config import Config
from daemon.errors import DaemonError, ErrorCode
from daemon.index.state_files import ensure_state_dir, state_writes
from daemon.service.index.host import IndexHost
from daemon.service.intel.host import IntelHost
from daemon.service.intel.trust_notice import trust_notice
from daemon.service.runs.host import RunHost
from daemon.service.runs.settings import settings_digest
from daemon.service.wire.api import ClientInfo, DaemonStatus, HelloParams, Methods, ReindexParams, SearchParams
from daemon.service.wire.files import remove_stale, socket_path, write_record
from daemon.service.wire.rpc import STREAM_LIMIT, Handler, RpcConnection
from daemon.service.workspace.hosted import HostedWorkspace

__all__ = ["DaemonAlreadyRunning", "DaemonComponent", "DaemonServer"]

logger = logging.getLogger(__name__)


class DaemonAlreadyRunning(DaemonError):
    """A daemon already serves this workspace (``daemon_running``): attach to it, or stop it first."""

    default_code = ErrorCode.DAEMON_RUNNING


class DaemonComponent(Protocol):
    """Something the daemon owns and serves: it contributes handlers and has a lifecycle."""

    def handlers(self) -> Mapping[str, Handler]: ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...


class DaemonServer:
    def __init__(
        self,
        config: Config,
        components: list[DaemonComponent] | None = None,
        on_ready: Callable[[], None] | None = None,
    ) -> None:
        self.config = config
        self._on_ready = on_ready
        self.state_dir = config.state_path
        self.index = IndexHost(config, self.broadcast)
        self.intel: IntelHost | None = None
        self.runs: RunHost | None = None
        if components is None:
            self.intel = IntelHost(config, self.index)
            # -- runs: one run service, over this daemon's own index and language servers --
            self.runs = RunHost(
                config, HostedWorkspace(self.index, self.intel), self.publish_runs, ready=self.index.ready.wait
            )
            components = [self.intel, self.runs]
        self._components: list[DaemonComponent] = components
        self._connections: dict[RpcConnection, ClientInfo] = {}
        self._subscribers: set[RpcConnection] = set()
        self._run_followers: set[RpcConnection] = set()
        self._runs_hello = {"runs_settings": settings_digest(config)} if self.runs is not None else {}
        self._shutdown = asyncio.Event()
        self._last_client_left = time.monotonic()
        self._started = datetime.now(UTC)
        self._editor_attached = False
        self._client_seen = False

    # -- lifecycle ----------------------------------------------------------------------------

    async def serve(self) -> None:
        ensure_state_dir(self.state_dir)
        with state_writes("restrict the state directory to its owner", self.state_dir):
            os.chmod(self.state_dir, 0o700)
        live = remove_stale(self.state_dir)
        if live is not None:
            raise DaemonAlreadyRunning(
                f"a daemon (pid {live.pid}) already serves {self.config.workspace} on {live.socket}; "
                "`ided stop` stops it"
            )
        await self.index.start()
        started: list[DaemonComponent] = []
        sock = socket_path(self.state_dir)
        server: asyncio.Server | None = None
        try:
            for component in self._components:
                await component.start()
                started.append(component)
            with state_writes("create the daemon's socket", sock):
                with contextlib.suppress(FileNotFoundError):
                    sock.unlink()
                old_umask = os.umask(0o177)
                try:
                    server = await asyncio.start_unix_server(self._on_client, path=str(sock), limit=STREAM_LIMIT)
                finally:
                    os.umask(old_umask)
            with state_writes("write the daemon record", self.state_dir / "daemon.json"):
                write_record(self.state_dir, sock=sock, workspace=self.config.workspace_path, version=__version__)
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, self._shutdown.set)
            logger.info("daemon for %s listening on %s (pid %d)", self.config.workspace, sock, os.getpid())
            if self._on_ready is not None:
                self._on_ready()
            self._last_client_left = time.monotonic()  # the idle clock starts when clients can connect
            idle = asyncio.create_task(self._idle_watch())
            await self._shutdown.wait()
            idle.cancel()
        finally:
            logger.info("daemon shutting down")
            if server is not None:
                server.close()
            for conn in list(self._connections):
                await conn.close()
            for component in reversed(started):
                with contextlib.suppress(Exception):
                    await component.close()
            await self.index.close()
            with contextlib.suppress(OSError):
                sock.unlink()
            with contextlib.suppress(OSError):
                (self.state_dir / "daemon.json").unlink()

    def request_shutdown(self) -> None:
        self._shutdown.set()

    def idle_limit(self) -> int:
        """Seconds without a client before it stops (0: never); see the module docstring."""
        limit = self.config.daemon.idle_shutdown_seconds
        shorter = self.config.daemon.idle_shutdown_no_editor_seconds
        if limit > 0 and not self._editor_attached and shorter > 0:
            limit = min(limit, shorter)
        if limit > 0 and not self._client_seen:  # the front that started it is on its way: as long as it waits
            limit = max(limit, math.ceil(self.config.daemon.start_timeout_seconds))
        return limit

    async def _idle_watch(self) -> None:
        while True:
            limit = self.idle_limit()
            if limit <= 0:
                return
            await asyncio.sleep(min(limit, 5))
            limit = self.idle_limit()
            if self.runs is not None and self.runs.busy:  # a run in flight is activity
                self._last_client_left = time.monotonic()
                continue
            if self.index.filling:  # so is filling the dense vectors: the fill ends, then the idle clock runs
                self._last_client_left = time.monotonic()
                continue
            if limit > 0 and not self._connections and time.monotonic() - self._last_client_left >= limit:
                logger.info("no client for %ds: stopping", limit)
                self._shutdown.set()
                return

    # -- connections --------------------------------------------------------------------------

    async def _on_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = RpcConnection(reader, writer, name="client")
        self._client_seen = True
        conn.add_handlers(self._handlers_for(conn))
        self._connections[conn] = ClientInfo(client="other", pid=None, connected=_now())
        try:
            await conn.serve()
        finally:
            self._connections.pop(conn, None)
            self._subscribers.discard(conn)
            self._run_followers.discard(conn)
            if not self._connections:
                self._last_client_left = time.monotonic()

    def _handlers_for(self, conn: RpcConnection) -> dict[str, Handler]:
        async def hello(params: dict[str, Any]) -> dict[str, Any]:
            p = HelloParams.model_validate(params)
            self._connections[conn] = ClientInfo(client=p.client, pid=p.pid, connected=_now())
            self._editor_attached = self._editor_attached or p.client in _EDITOR_CLIENTS
            if p.subscribe:
                self._subscribers.add(conn)
            return {"pid": os.getpid(), "version": __version__, "workspace": self.config.workspace, **self._runs_hello}

        async def status(params: dict[str, Any]) -> DaemonStatus:
            return await self.status()

        async def shutdown(params: dict[str, Any]) -> dict[str, Any]:
            asyncio.get_running_loop().call_soon(self._shutdown.set)
            return {"stopping": True}

        async def search(params: dict[str, Any]) -> Any:
            return await self.index.search(SearchParams.model_validate(params))

        async def index_status(params: dict[str, Any]) -> Any:
            return await self.index.status()

        async def reindex(params: dict[str, Any]) -> Any:
            return await self.index.reindex(ReindexParams.model_validate(params).paths)

        handlers: dict[str, Handler] = {
            Methods.HELLO: hello,
            Methods.DAEMON_STATUS: status,
            Methods.SHUTDOWN: shutdown,
            Methods.INDEX_SEARCH: search,
            Methods.INDEX_STATUS: index_status,
            Methods.INDEX_REINDEX: reindex,
        }
        for component in self._components:
            handlers.update(component.handlers())
        handlers.update(self._run_handlers_for(conn))
        return handlers

    # -- runs: progress notifications to the connections that follow runs ---------------------

    def _run_handlers_for(self, conn: RpcConnection) -> dict[str, Handler]:
        if self.runs is None:
            return {}

        async def subscribe(params: dict[str, Any]) -> dict[str, Any]:
            self._run_followers.add(conn)
            return {"subscribed": True}

        return {Methods.RUNS_SUBSCRIBE: subscribe, **self.runs.handlers_for(conn)}

    async def publish_runs(self, method: str, params: Any) -> None:
        for conn in list(self._run_followers):
            with contextlib.suppress(ConnectionError):
                await conn.notify(method, params)

    # -- end of runs ----------------------------------------------------------------------------

    async def broadcast(self, method: str, params: Any) -> None:
        for conn in list(self._subscribers):
            with contextlib.suppress(ConnectionError):
                await conn.notify(method, params)

    async def status(self) -> DaemonStatus:
        return DaemonStatus(
            pid=os.getpid(),
            workspace=self.config.workspace,
            version=__version__,
            started=self._started.isoformat(timespec="seconds"),
            uptime_seconds=(datetime.now(UTC) - self._started).total_seconds(),
            clients=tuple(self._connections.values()),
            watching=self.index.watching,
            busy=self.index.busy,
            index=await self.index.status(),
            servers=tuple(self.intel.servers()) if self.intel is not None else (),
            idle_limit_seconds=self.idle_limit(),
            editor_attached=self._editor_attached,
            trust=trust_notice(self.config),
        )


_EDITOR_CLIENTS = frozenset({"lsp", "acp"})
"""Clients that are editors: once one attached, the daemon keeps the longer idle limit."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
