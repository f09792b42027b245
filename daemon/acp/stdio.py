"""The ACP agent served on stdio: the wire streams, the SDK's connection, the pipeline preload
(started once the first ``session/new`` or ``session/load`` is answered).

``daemon.acp.__main__`` calls :func:`run` once the handshake (``daemon.acp.handshake``,
``daemon.acp.early_session``) has read the first lines: the bytes it read and did not handle are fed
to the wire's reader first, and the ``initialize`` and ``session/new`` it answered (if any) are
received first by the guarded transport, whose SDK answers to them are dropped; the session created
early is the agent's to adopt. stdout carries the protocol alone: the process keeps a private copy of file descriptor
1 for the wire and points fd 1 and ``sys.stdout`` at stderr, so a stray print (or a library writing
to fd 1) can never corrupt a frame. A configuration that does not load ends the process (code 2)
when nothing was answered yet; after an early ``initialize`` it is served, and each session answers
with the configuration's coded error.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import signal
import sys
from pathlib import Path
from typing import cast

from acp import Agent, run_agent

from daemon.acp.agent import PRELOAD_MODULES, IdedAgent
from daemon.acp.early_session import EarlySession, FolderConfigs
from daemon.acp.handshake import Handshake
from daemon.acp.transport_guard import MAX_LINE_BYTES, GuardedNdjsonTransport
from daemon.config import parse_set_pairs
from daemon.logging_setup import log_as_configured

__all__ = ["run", "serve"]

logger = logging.getLogger(__name__)


class _WriteProtocol(asyncio.Protocol):
    """Flow control for the wire's write pipe (what ``StreamWriter.drain`` waits on)."""

    def __init__(self) -> None:
        self._paused = False
        self._resumed: asyncio.Future[None] | None = None

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        if self._resumed is not None and not self._resumed.done():
            self._resumed.set_result(None)
        self._resumed = None

    def connection_lost(self, exc: Exception | None) -> None:
        self.resume_writing()

    async def _drain_helper(self) -> None:
        if self._paused:
            self._resumed = asyncio.get_running_loop().create_future()
            await self._resumed


async def _wire_streams(pending: bytes) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """stdin as a reader (``pending`` first); a private duplicate of fd 1 as the writer; fd 1 then goes to stderr."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
    if pending:
        reader.feed_data(pending)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    wire = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    protocol = _WriteProtocol()
    transport, _ = await loop.connect_write_pipe(lambda: protocol, wire)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


async def serve(agent: IdedAgent, handshake: Handshake | None = None, session: EarlySession | None = None) -> None:
    reader, writer = await _wire_streams(handshake.pending if handshake is not None else b"")
    early = (handshake.early if handshake is not None else None, session.answered if session is not None else None)
    transport = GuardedNdjsonTransport(reader, writer, early=[a for a in early if a is not None])
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    assert main is not None
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, main.cancel)
    # the pipeline side loads once the first session is answered: loading it sooner would hold the GIL
    # against session/new (a prompt that comes first just waits for this import)
    preload = asyncio.create_task(_preload_after(transport.session_answered))
    try:
        with contextlib.suppress(asyncio.CancelledError):
            # IdedAgent implements the methods it advertises; the SDK answers -32601 for the others.
            # SDK 0.12.1 still routes session/close (stable in ACP since April 2026) as unstable, so it is
            # on; the other unstable methods (session/fork, session/resume) are not implemented: -32601.
            await run_agent(cast(Agent, agent), transport, use_unstable_protocol=True)
        logger.info("the client closed the connection")
    finally:
        if not transport.session_answered.is_set():
            preload.cancel()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await preload
        await asyncio.shield(agent.shutdown())
        with contextlib.suppress(OSError, RuntimeError):
            writer.close()


async def _preload_after(answered: asyncio.Event) -> None:
    await answered.wait()
    await asyncio.get_running_loop().run_in_executor(None, _preload)


def _preload() -> None:
    for name in PRELOAD_MODULES:
        importlib.import_module(name)


def run(workspace: Path | None, settings: list[str], handshake: Handshake | None, session: EarlySession | None) -> int:
    """Serve the agent until the client goes; the exit code."""
    try:
        overrides = parse_set_pairs(settings)
    except ValueError as exc:
        print(f"ided acp: {exc}", file=sys.stderr)
        return 2
    workspace = workspace.resolve() if workspace else None
    if not log_as_configured("ided acp", workspace, overrides) and (handshake is None or handshake.early is None):
        return 2
    agent = IdedAgent(FolderConfigs(overrides, Path.cwd()), workspace=workspace)
    if session is not None:
        agent.expect_early_session(session.record)
    asyncio.run(serve(agent, handshake, session))
    return 0
