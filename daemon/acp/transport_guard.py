"""The ACP transport, guarded: every line is checked before the SDK's connection sees it.

The ACP SDK 0.12.1 reads newline-delimited JSON and hands whatever ``json.loads`` returns to its
connection, whose receive loop dies on anything that is not an object (``[]``, ``1``, ``null``, a
batch: measured), and skips unparseable lines without an answer. ``GuardedNdjsonTransport`` is the
SDK's message-level ``Transport`` (``send``/``receive``/``close``) over stdin/stdout that answers
what is wrong itself and passes on only well-formed JSON-RPC 2.0 objects:

- a line that is not JSON or not UTF-8: -32700 with id null;
- not an object (a batch, a number, null): -32600 with id null;
- a bad ``jsonrpc``/``id``/``method``/``params``: -32600 (with the id when it is usable);
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

__all__ = [
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_LINE_BYTES",
    "PARSE_ERROR",
    "GuardedNdjsonTransport",
    "check_message",
]

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

MAX_LINE_BYTES = 50 * 1024 * 1024
"""Longest accepted line (the SDK's own default buffer limit)."""

_DRAIN_TIMEOUT_S = 30.0


class _Reject(Exception):
    def __init__(self, code: int, message: str, msg_id: int | str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.msg_id = msg_id


def check_message(line: bytes) -> dict[str, Any] | None:
    """The JSON-RPC message on ``line``; None for one to drop silently; ``_Reject`` for one to answer."""
    try:
        obj = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        raise _Reject(PARSE_ERROR, "parse error: the message is not UTF-8") from None
    except ValueError as exc:
        raise _Reject(PARSE_ERROR, f"parse error: {exc}") from None
    if isinstance(obj, list):
        raise _Reject(INVALID_REQUEST, "invalid request: batches are not supported by ACP")
    if not isinstance(obj, dict):
        raise _Reject(INVALID_REQUEST, "invalid request: a message must be a JSON object")
    message: dict[str, Any] = obj  # pyright: ignore[reportUnknownVariableType]
    has_id = "id" in message
    msg_id = message.get("id")
    if has_id and (isinstance(msg_id, bool) or not isinstance(msg_id, int | str)):
        if "method" not in message:
            logger.warning("dropped a response with an unusable id %r", msg_id)
            return None
        raise _Reject(INVALID_REQUEST, "invalid request: id must be an integer or a string")
    reply_id: int | str | None = msg_id if has_id else None  # pyright: ignore[reportAssignmentType]
    if message.get("jsonrpc") != "2.0":
        raise _Reject(INVALID_REQUEST, 'invalid request: "jsonrpc" must be "2.0"', reply_id)
    if "method" not in message:
        if reply_id is None or ("result" in message) == ("error" in message):
            raise _Reject(INVALID_REQUEST, "invalid request: no method, and not a response either", reply_id)
        return message
    method = message["method"]
    if not isinstance(method, str) or not method:
        raise _Reject(INVALID_REQUEST, "invalid request: method must be a non-empty string", reply_id)
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        raise _Reject(INVALID_PARAMS, f"invalid params: params of {method} must be an object", reply_id)
    return message


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
            except _Reject as reject:
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
                    _Reject(INVALID_REQUEST, f"invalid request: a line of {skipped + len(line)} bytes is too long")
                )
                skipped = 0
                continue
            return line

    async def _answer(self, reject: _Reject) -> None:
        self.rejected += 1
        logger.warning("rejected an ACP message (%d): %s", reject.code, reject.message)
        error = {"code": reject.code, "message": reject.message}
        try:
            await self.send({"jsonrpc": "2.0", "id": reject.msg_id, "error": error})
        except (ConnectionError, OSError, TimeoutError):
            logger.warning("could not answer a malformed message: the client is gone")
