"""JSON-RPC framing, shared by every transport: newline-delimited lines (ACP and the daemon socket)
and ``Content-Length`` frames (LSP).

Reading yields message bodies for ``daemon.core.jsonrpc.read_message`` to decode, and a
:class:`~daemon.core.jsonrpc.JsonRpcReject` (id null) for each run of bytes that is not a message
(the transport answers it as it answers a bad body; reading goes on):

- :func:`lines`: one body per non-blank line; a line longer than ``max_bytes`` (or than the
  reader's buffer limit) is skipped whole: -32600;
- :func:`frames`: one body per ``Content-Length`` frame (other headers ignored, names matched
  without case); a header block without ``Content-Length`` or bytes between frames: -32700, then
  it resynchronises on the next header; a frame larger than :data:`MAX_FRAME_BYTES` is read past:
  -32600.

Both end at end of input (a frame cut short by it yields nothing). :func:`messages` turns either
stream into checked messages (``read_message``), each a :class:`~daemon.core.jsonrpc.Message` or
the reject to answer. Writing is :func:`encode_line` and :func:`encode_frame`. This module reads
and encodes bytes; it opens nothing itself.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Mapping
from typing import Any, Protocol

from daemon.core.jsonrpc import INVALID_REQUEST, PARSE_ERROR, JsonRpcReject, Message, read_message

__all__ = [
    "MAX_FRAME_BYTES",
    "AsyncFrameSource",
    "encode_frame",
    "encode_line",
    "frames",
    "lines",
    "messages",
]

logger = logging.getLogger(__name__)

MAX_FRAME_BYTES = 64 * 1024 * 1024
"""Largest ``Content-Length`` body accepted."""

_READ_CHUNK = 1024 * 1024
_CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)", re.IGNORECASE)
_HEADER = re.compile(rb"^[A-Za-z][A-Za-z0-9-]*[ \t]*:.*$")


class AsyncFrameSource(Protocol):
    """What :func:`frames` reads from: pygls' stdin reader or an ``asyncio.StreamReader``."""

    def readline(self) -> Awaitable[bytes]: ...

    def readexactly(self, n: int) -> Awaitable[bytes]: ...


def encode_line(message: Mapping[str, Any], *, ensure_ascii: bool = True) -> bytes:
    """``message`` as one compact JSON line, newline included."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=ensure_ascii).encode("utf-8") + b"\n"


def encode_frame(message: Mapping[str, Any]) -> bytes:
    """``message`` as one ``Content-Length`` frame."""
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def lines(reader: asyncio.StreamReader, *, max_bytes: int) -> AsyncIterator[bytes | JsonRpcReject]:
    """The non-blank lines of ``reader``, and a JsonRpcReject (id null) for each over-long one, until end of input."""
    skipped = 0
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # end of input: the last line may lack its newline
            if exc.partial.strip() and not skipped:
                yield exc.partial
            return
        except asyncio.LimitOverrunError as exc:  # longer than the reader's buffer: read past it
            skipped += len(await reader.readexactly(exc.consumed))
            continue
        if skipped or len(line) > max_bytes:
            yield JsonRpcReject(INVALID_REQUEST, f"invalid request: a line of {skipped + len(line)} bytes is too long")
            skipped = 0
        elif line.strip():
            yield line


async def _read_body(source: AsyncFrameSource, length: int) -> bytes | None:
    """Exactly ``length`` bytes, read in bounded chunks; None at end of input."""
    parts: list[bytes] = []
    remaining = length
    while remaining > 0:
        try:
            chunk = await source.readexactly(min(remaining, _READ_CHUNK))
        except EOFError:  # asyncio.IncompleteReadError
            return None
        if not chunk:
            return None
        parts.append(chunk)
        remaining -= len(chunk)
    return b"".join(parts)


async def frames(source: AsyncFrameSource) -> AsyncIterator[bytes | JsonRpcReject]:
    """Frame bodies, and a JsonRpcReject (id null) for each run of bytes that is not a frame, until end of input."""
    length: int | None = None
    junk = False
    while True:
        line = await source.readline()
        if not line:
            return
        stripped = line.strip()
        if not stripped:  # end of a header block
            if junk:
                junk = False
                yield JsonRpcReject(PARSE_ERROR, "parse error: bytes outside a frame were skipped")
            if length is None:
                continue
            size, length = length, None
            if size > MAX_FRAME_BYTES:
                if await _read_body(source, size) is None:
                    return
                yield JsonRpcReject(INVALID_REQUEST, f"invalid request: {size} bytes exceed {MAX_FRAME_BYTES}")
                continue
            body = await _read_body(source, size)
            if body is None:
                return
            yield body
            continue
        match = _CONTENT_LENGTH.search(stripped)
        if match:
            if match.start() > 0:
                junk = True  # bytes glued before the header (a body longer than its Content-Length)
            length = int(match.group(1))
        elif not _HEADER.match(stripped):
            junk = True


async def messages(
    bodies: AsyncIterator[bytes | JsonRpcReject], *, protocol: str, params_array: bool = True
) -> AsyncIterator[Message | JsonRpcReject]:
    """Each body of ``bodies`` checked by ``read_message``: the message, or the reject to answer.

    A response whose id is unusable is dropped (logged): nobody waits for it, nobody can be answered.
    """
    async for body in bodies:
        if isinstance(body, JsonRpcReject):
            yield body
            continue
        try:
            message = read_message(body, protocol=protocol, params_array=params_array)
        except JsonRpcReject as reject:
            yield reject
            continue
        if message is None:
            logger.warning("dropped a response with an unusable id (%s)", protocol)
        else:
            yield message
