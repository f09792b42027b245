"""``ided lsp``: construction, capabilities, and the stdio/TCP entry points.

The server holds no index of its own: after ``initialized`` it attaches to the workspace's daemon
(starting one when none runs), forwards ``ided/*`` requests to it, turns its notifications into
``$/progress`` and ``ided/index/changed``, and detaches on ``shutdown``/``exit``. Capabilities:
``workspaceSymbolProvider`` plus the ``ided/*`` methods listed under
``experimental.ided.methods`` (see docs/lsp.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, BinaryIO, cast

from lsprotocol import types
from pydantic import ValidationError
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdinAsyncReader, StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.workspace import PositionCodec

from daemon import __version__
from daemon.core.ports import Workspace
from daemon.errors import DaemonError
from daemon.lsp import convert
from daemon.lsp.handlers import index, intel, lifecycle, runs
from daemon.lsp.handshake import EarlyAnswer, Handshake
from daemon.lsp.progress import IndexProgressReporter
from daemon.lsp.protocol import IdedProtocol, LspMethods, make_converter
from daemon.lsp.session import ConfigLoader, DaemonSession
from daemon.lsp.transport_guard import GuardedTransport
from daemon.service.wire.api import DaemonStatus, IndexChanged, IndexProgressEvent, Methods
from daemon.service.workspace.remote import DaemonWorkspace

__all__ = ["IdedLanguageServer", "build_server", "serve_stdio", "serve_tcp"]

logger = logging.getLogger(__name__)


class IdedLanguageServer(LanguageServer):
    """The pygls server plus what the handlers share: the daemon session and the ``Workspace`` over it,
    progress, the position mapper."""

    def __init__(self, load_config: ConfigLoader, overrides: Mapping[str, Any], workspace: Path | None) -> None:
        self.converter = make_converter()
        super().__init__(  # pyright: ignore[reportUnknownMemberType]
            name="ided",
            version=__version__,
            text_document_sync_kind=types.TextDocumentSyncKind.None_,
            protocol_cls=IdedProtocol,
            converter_factory=lambda: self.converter,
        )
        self.session = DaemonSession(load_config, overrides, self._on_daemon_notification)
        self.workspace_port: Workspace = DaemonWorkspace.over(self.session)
        """Search and code intelligence, through the port every front holds (the daemon transport, over the session)."""
        self.index_progress = IndexProgressReporter(self, self.daemon_status, self._on_idle)
        self.forced_workspace = workspace
        self.root: Path = workspace or Path.cwd()
        self.mapper = convert.PositionMapper(self.root, PositionCodec())
        self._startup: asyncio.Task[None] | None = None
        self._shown: set[str] = set()
        self._on_stop: list[Callable[[], Awaitable[None]]] = []
        self.standard_intel = False
        """Whether the client turned on textDocument/definition|references|hover (handlers/standard_intel.py)."""

    # -- lifecycle (called by handlers/lifecycle.py) --------------------------------------------

    def set_root(self, root: Path, encoding: types.PositionEncodingKind | str | None) -> None:
        self.root = self.forced_workspace or root
        self.mapper = convert.PositionMapper(self.root, PositionCodec(encoding or types.PositionEncodingKind.Utf16))

    def start_session(self) -> None:
        if self._startup is None:
            self.session.expect_attach()
            self._startup = asyncio.create_task(self._attach(), name="ided-lsp-attach")

    async def _attach(self) -> None:
        await self.index_progress.begin(f"starting the ided daemon for {self.root.name or self.root}")
        try:
            await self.session.attach()
        except Exception as exc:  # a background task's boundary: the user is told, requests get the reason
            if isinstance(exc, DaemonError | OSError):
                logger.warning("attaching to the daemon failed: %s", exc)
            else:
                logger.exception("attaching to the daemon failed")
            self.index_progress.end("the ided daemon is not available")
            self.show(types.MessageType.Error, f"ided: the workspace daemon is not available: {self.session.failure}")
            return
        self.index_progress.report("attached; indexing")
        self.index_progress.watch_until_idle()
        await self._say_trust_notice()

    async def _say_trust_notice(self) -> None:
        """What the daemon left out of its untrusted workspace, once per session (``window/showMessage``)."""
        try:
            status = await self.daemon_status()
        except JsonRpcException:  # the session's calls fail so (wire_errors): the next status says it again
            logger.info("the daemon's status could not be read for its trust notice", exc_info=True)
            return
        if status.trust is not None:
            self.show(types.MessageType.Warning, status.trust.message, once="trust")

    def _on_idle(self, status: DaemonStatus) -> None:
        if not status.index.ready:
            self.show(
                types.MessageType.Warning,
                f"ided: the index of {status.workspace} is not ready: {status.index.reason or 'unknown reason'}",
                once="index-not-ready",
            )

    def on_stop(self, close: Callable[[], Awaitable[None]]) -> None:
        """Have ``close`` awaited when the server stops (a handler's own resources, e.g. its run service)."""
        self._on_stop.append(close)

    async def stop_session(self) -> None:
        if self._startup is not None and not self._startup.done():
            self._startup.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._startup
        for close in self._on_stop:
            try:
                await close()
            except Exception:  # the server stops either way
                logger.exception("closing a handler's resources failed")
        await self.index_progress.close()
        await self.session.close()

    # -- shared by handlers ---------------------------------------------------------------------

    async def daemon_status(self) -> DaemonStatus:
        return await self.session.call(Methods.DAEMON_STATUS, None, DaemonStatus)

    def show(self, kind: types.MessageType, message: str, *, once: str | None = None) -> None:
        """``window/showMessage``; with ``once``, at most one message per key per session."""
        if once is not None:
            if once in self._shown:
                return
            self._shown.add(once)
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def warn_if_indexing(self) -> None:
        if not self.index_progress.idle_seen:
            self.show(
                types.MessageType.Warning,
                "ided: the workspace index is still being built; results may be incomplete",
                once="indexing",
            )

    async def _on_daemon_notification(self, method: str, params: dict[str, Any]) -> None:
        try:
            if method == Methods.INDEX_PROGRESS:
                await self.index_progress.on_event(IndexProgressEvent.model_validate(params))
            elif method == Methods.INDEX_CHANGED:
                changed = IndexChanged.model_validate(params)
                self.protocol.notify(LspMethods.INDEX_CHANGED, convert.index_changed(self.mapper, changed))
        except ValidationError:
            logger.warning("ignored a malformed %s notification from the daemon", method)


def build_server(
    load_config: ConfigLoader, overrides: Mapping[str, Any] | None = None, workspace: Path | None = None
) -> IdedLanguageServer:
    """A ready server: every handler registered, not yet serving."""
    server = IdedLanguageServer(load_config, overrides or {}, workspace)
    lifecycle.register(server)
    index.register(server)
    intel.register(server)
    runs.register(server)
    return server


async def _serve(server: IdedLanguageServer, source: Any, early: EarlyAnswer | None = None) -> int:
    transport = GuardedTransport(server.protocol, server.converter)
    try:
        return await transport.serve(source, early)
    finally:
        await server.stop_session()


class _PendingFirst:
    """stdin with ``pending`` (bytes the handshake read) in front: what pygls' reader reads from, in its threads."""

    def __init__(self, pending: bytes, stdin: BinaryIO) -> None:
        self._pending = pending
        self._stdin = stdin

    def readline(self) -> bytes:
        if not self._pending:
            return self._stdin.readline()
        cut = self._pending.find(b"\n") + 1
        if cut:
            line, self._pending = self._pending[:cut], self._pending[cut:]
            return line
        head, self._pending = self._pending, b""
        return head + self._stdin.readline()

    def read(self, n: int) -> bytes:
        head, self._pending = self._pending[:n], self._pending[n:]
        return head if len(head) == n else head + self._stdin.read(n - len(head))


def serve_stdio(server: IdedLanguageServer, handshake: Handshake | None = None) -> int:
    """Serve one client over stdin/stdout; returns the exit code (0 after shutdown + exit). ``handshake``:
    what ``daemon.lsp.handshake`` already read from stdin (and the ``initialize`` it answered)."""
    stdin = _PendingFirst(handshake.pending, sys.stdin.buffer) if handshake is not None else sys.stdin.buffer
    reader = StdinAsyncReader(cast(BinaryIO, stdin), server.thread_pool)
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    try:
        return asyncio.run(_serve(server, reader, handshake.early if handshake is not None else None))
    except BrokenPipeError:
        logger.warning("the client closed the connection")
        return 1


def serve_tcp(server: IdedLanguageServer, host: str, port: int) -> int:
    """Accept one client on ``host:port`` and serve it; returns the exit code."""

    async def run() -> int:
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        serving = False

        async def on_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal serving
            if serving:  # one client per server, as over stdio
                writer.close()
                return
            serving = True
            server.protocol.set_writer(writer)
            code = await _serve(server, reader)
            writer.close()
            if not done.done():
                done.set_result(code)

        listener = await asyncio.start_server(on_client, host, port)
        addresses = ", ".join(str(sock.getsockname()) for sock in listener.sockets)
        logger.warning("ided lsp listening on %s", addresses)
        async with listener:
            return await done

    return asyncio.run(run())
