"""The ACP transport, guarded: every line is checked before the SDK's connection sees it.

The ACP SDK 0.12.1 reads newline-delimited JSON and hands whatever ``json.loads`` returns to its
connection, whose receive loop dies on anything that is not an object (``[]``, ``1``, ``null``, a
batch: measured), and skips unparseable lines without an answer. ``GuardedNdjsonTransport`` is the
SDK's message-level ``Transport`` (``send``/``receive``/``close``) over stdin/stdout that reads
lines with ``daemon.core.jsonrpc_framing`` and has ``daemon.core.jsonrpc`` check each one (the core
every transport shares), answers what is wrong itself and passes on only well-formed JSON-RPC 2.0
objects:

- a line that is not JSON or not UTF-8: -32700 with id null;
- JSON nested too deep (``[[[[…``): -32600 with id null;
- not an object (a batch, a number, null): -32600 with id null;
- a bad ``jsonrpc``/``id``/``method``/``params``: -32600 (with the id when it is usable), params
  that are an array rather than an object: -32602;
- a line longer than ``max_line_bytes``: skipped, -32600;
- a response with no pending request shape (no ``result``/``error``, or a bad id): dropped.

Unknown methods (-32601) and params that do not fit (-32602) are the SDK's business; nothing
above ends the loop. End of input is end of stream. The ``initialize`` and ``session/new`` answered
before the SDK loaded (``daemon.acp.handshake``, ``daemon.acp.early_session``) are received first;
the SDK's answer to each is dropped (a warning is logged if it differs from the one sent), and the
next message is received only once it came.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

from daemon.acp.handshake import EarlyAnswer
from daemon.core.jsonrpc import JsonRpcReject, Message
from daemon.core.jsonrpc_framing import encode_line, lines, messages

__all__ = ["MAX_LINE_BYTES", "GuardedNdjsonTransport"]

logger = logging.getLogger(__name__)

MAX_LINE_BYTES = 50 * 1024 * 1024
"""Longest accepted line (the SDK's own default buffer limit)."""

_DRAIN_TIMEOUT_S = 30.0
_SESSION_METHODS = frozenset({"session/new", "session/load"})


class GuardedNdjsonTransport:
    """The SDK's ``Transport`` over an asyncio reader/writer pair (stdin/stdout), with a guard."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        max_line_bytes: int = MAX_LINE_BYTES,
        early: Sequence[EarlyAnswer] = (),
    ) -> None:
        self._reader = reader
        self._replay = list(early)
        """Requests answered before the SDK loaded (``daemon.acp.handshake``, ``daemon.acp.early_session``),
        received first, in order."""
        self._awaiting: EarlyAnswer | None = None
        """The one received whose SDK answer has not come yet: that answer is not sent again, and nothing
        more is received until it came (the agent has, say, the session before the client's next request)."""
        self._answered = asyncio.Event()
        self._answered.set()
        """Set while nothing is awaited."""
        self.session_answered = asyncio.Event()
        """Set once the answer to a ``session/new`` or ``session/load`` has been sent."""
        self._session_requests: set[int | str] = set()
        self._writer = writer
        self._messages: AsyncIterator[Message | JsonRpcReject] = messages(
            lines(reader, max_bytes=max_line_bytes), protocol="ACP", params_array=False
        )
        self._write_lock = asyncio.Lock()
        self._closed = False
        self.rejected = 0

    async def send(self, message: dict[str, Any]) -> None:
        msg_id = message.get("id")
        early = self._awaiting
        if early is not None and "method" not in message and msg_id == early.id:
            self._drop_early_answer(early, message)
        else:
            data = encode_line(message, ensure_ascii=False)
            async with self._write_lock:
                if self._closed:
                    raise ConnectionError("the ACP transport is closed")
                self._writer.write(data)
                await asyncio.wait_for(self._writer.drain(), _DRAIN_TIMEOUT_S)
        if self._session_requests and "method" not in message and msg_id in self._session_requests:
            self._session_requests.clear()
            self.session_answered.set()

    async def receive(self) -> dict[str, Any] | None:
        await self._answered.wait()
        if self._replay:
            early = self._awaiting = self._replay.pop(0)
            self._answered.clear()
            self._note_session_request(early.message.get("method"), early.id)
            return early.message
        async for message in self._messages:
            if isinstance(message, JsonRpcReject):
                await self._answer(message)
            else:
                self._note_session_request(message.method, message.id)
                return message.raw
        return None

    async def close(self) -> None:
        async with self._write_lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._writer.close()
            except (OSError, RuntimeError):
                logger.debug("closing stdout failed; the client is gone")

    def _note_session_request(self, method: object, msg_id: int | str | None) -> None:
        if method in _SESSION_METHODS and msg_id is not None and not self.session_answered.is_set():
            self._session_requests.add(msg_id)

    def _drop_early_answer(self, early: EarlyAnswer, message: dict[str, Any]) -> None:
        self._awaiting = None
        self._answered.set()
        problem = early.replay_problem(message.get("result"), message.get("error"))
        if problem is not None:
            logger.log(*problem)

    async def _answer(self, reject: JsonRpcReject) -> None:
        self.rejected += 1
        logger.warning("rejected an ACP message (%d): %s", reject.code, reject.message)
        try:
            await self.send(reject.reply())
        except (ConnectionError, OSError, TimeoutError):
            logger.warning("could not answer a malformed message: the client is gone")
