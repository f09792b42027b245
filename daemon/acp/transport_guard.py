"""The ACP transport, guarded: every line is checked before the SDK's connection sees it.

The ACP SDK 0.12.1 reads newline-delimited JSON and hands whatever ``json.loads`` returns to its
connection, whose receive loop dies on anything that is not an object (``[]``, ``1``, ``null``, a
batch: measured), and skips unparseable lines without an answer. ``GuardedNdjsonTransport`` is the
SDK's message-level ``Transport`` (``send``/``receive``/``close``) over stdin/stdout that has
``daemon.core.jsonrpc`` (the decoder every transport shares) check each line, answers what is
wrong itself and passes on only well-formed JSON-RPC 2.0 objects:

- a line that is not JSON or not UTF-8: -32700 with id null;
- JSON nested too deep (``[[[[…``): -32600 with id null;
- not an object (a batch, a number, null): -32600 with id null;
- a bad ``jsonrpc``/``id``/``method``/``params``: -32600 (with the id when it is usable), params
  that are an array rather than an object: -32602;
- a line longer than ``max_line_bytes``: skipped, -32600;
- a response with no pending request shape (no ``result``/``error``, or a bad id): dropped.

Unknown methods (-32601) and params that do not fit (-32602) are the SDK's business; nothing
above ends the loop. End of input is end of stream.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from daemon.core.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, JsonRpcReject, read_message

__all__ = [
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_LINE_BYTES",
    "PARSE_ERROR",
    "GuardedNdjsonTransport",
    "check_message",
]

logger = logging.getLogger(__name__)

MAX_LINE_BYTES = 50 * 1024 * 1024
"""Longest accepted line (the SDK's own default buffer limit)."""

_DRAIN_TIMEOUT_S = 30.0


def check_message(line: bytes) -> dict[str, Any] | None:
    """The JSON-RPC message on ``line``; None for one to drop silently; ``JsonRpcReject`` for one to answer."""
    checked = read_message(line, protocol="ACP", params_array=False)
    if checked is None:
        logger.warning("dropped a response with an unusable id")
        return None
    return checked.raw


class GuardedNdjsonTransport:
    """The SDK's ``Transport`` over an asyncio reader/writer pair (stdin/stdout), with a guard."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._max_line_bytes = max_line_bytes
        self._write_lock = asyncio.Lock()
        self._closed = False
        self.rejected = 0

    async def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
        async with self._write_lock:
            if self._closed:
                raise ConnectionError("the ACP transport is closed")
            self._writer.write(data)
            await asyncio.wait_for(self._writer.drain(), _DRAIN_TIMEOUT_S)

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._read_line()
            if line is None:
                return None
            if not line.strip():
                continue
            try:
                message = check_message(line)
            except JsonRpcReject as reject:
                await self._answer(reject)
                continue
            if message is not None:
                return message

    async def close(self) -> None:
        async with self._write_lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._writer.close()
            except (OSError, RuntimeError):
                logger.debug("closing stdout failed; the client is gone")

    async def _read_line(self) -> bytes | None:
        """One line; None at end of input. Over-long lines are skipped and answered."""
        skipped = 0
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:
                return exc.partial if exc.partial and not skipped else None
            except asyncio.LimitOverrunError as exc:
                skipped += len(await self._reader.readexactly(exc.consumed))
                continue
            if skipped or len(line) > self._max_line_bytes:
                await self._answer(
                    JsonRpcReject(
                        INVALID_REQUEST, f"invalid request: a line of {skipped + len(line)} bytes is too long"
                    )
                )
                skipped = 0
                continue
            return line

    async def _answer(self, reject: JsonRpcReject) -> None:
        self.rejected += 1
        logger.warning("rejected an ACP message (%d): %s", reject.code, reject.message)
        try:
            await self.send(reject.reply())
        except (ConnectionError, OSError, TimeoutError):
            logger.warning("could not answer a malformed message: the client is gone")
