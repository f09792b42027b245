"""``ided mcp`` on stdio behind the JSON-RPC guard every ided front uses (``daemon.core.jsonrpc``).

The MCP SDK's stdio transport validates each line itself and, for one that is not a valid
JSON-RPC message (``params`` that are not an object, a ``jsonrpc`` other than ``"2.0"``, a
``method`` that is not a string, JSON nested too deep...), logs the error and answers nothing, so
the client waits forever (measured with the fuzzer, ``scripts/fuzz_fronts.py``). Here every stdin
line is checked first by the shared decoder; a rejected one gets its JSON-RPC error (-32700,
-32600 or -32602, with the request's id when it is usable) through the SDK's own writer, and only
well-formed messages reach the SDK. The SDK still owns stdout (it points fd 1 at stderr while
serving); stdin is claimed here the same way (fd 0 points at the null device while serving, so a
child process cannot read the wire).
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from typing import IO, Protocol, TypeVar

import anyio
import mcp_types as types
from mcp.server import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from daemon.core.jsonrpc import JsonRpcReject, read_message

__all__ = ["GuardedStdin", "GuardedStdioServer"]

logger = logging.getLogger(__name__)

LifespanT = TypeVar("LifespanT")


class _Replies(Protocol):
    async def send(self, item: SessionMessage, /) -> None: ...


class GuardedStdin:
    """What the SDK's stdio reader iterates: the well-formed lines of stdin; the others are answered."""

    def __init__(self, source: IO[bytes]) -> None:
        self._source = anyio.wrap_file(source)
        self._replies: _Replies | None = None
        self._ready = anyio.Event()
        self.rejected = 0

    def answer_through(self, replies: _Replies) -> None:
        """Send error replies through the SDK's write stream (its writer owns stdout)."""
        self._replies = replies
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for raw in self._source:
            if not raw.strip():
                continue
            try:
                checked = read_message(raw, protocol="MCP", params_array=False)
            except JsonRpcReject as reject:
                await self._answer(reject)
                continue
            if checked is not None:
                yield raw.decode("utf-8")

    async def _answer(self, reject: JsonRpcReject) -> None:
        self.rejected += 1
        logger.warning("rejected an MCP message (%d): %s", reject.code, reject.message)
        await self._ready.wait()
        assert self._replies is not None
        error = types.JSONRPCError(
            jsonrpc="2.0", id=reject.msg_id, error=types.ErrorData(code=reject.code, message=reject.message)
        )
        try:
            await self._replies.send(SessionMessage(error))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.warning("could not answer a malformed message: the transport is closed")


@asynccontextmanager
async def _claimed_stdin() -> AsyncGenerator[IO[bytes]]:
    """A private duplicate of fd 0 to read the wire from, with fd 0 on the null device meanwhile."""
    private = os.dup(0)
    os.set_inheritable(private, False)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        yield os.fdopen(private, "rb", closefd=False)
    finally:
        os.dup2(private, 0)


class GuardedStdioServer(MCPServer[LifespanT]):
    """The SDK's server whose stdio transport reads through :class:`GuardedStdin`."""

    async def run_stdio_async(self) -> None:
        async with _claimed_stdin() as wire:
            stdin = GuardedStdin(wire)
            async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # pyright: ignore[reportArgumentType]
                stdin.answer_through(write_stream)
                await self._lowlevel_server.run(
                    read_stream, write_stream, self._lowlevel_server.create_initialization_options()
                )
