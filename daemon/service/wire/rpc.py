"""JSON-RPC 2.0 over a byte stream, newline-delimited: the daemon's local wire.

Both ends use :class:`RpcConnection`: either side may send requests and notifications. Requests
are dispatched concurrently; a handler's exception becomes a JSON-RPC error, never a dead
connection. Lines are read by ``daemon.core.jsonrpc_framing`` and each is decoded and checked by
``daemon.core.jsonrpc`` (the core every transport shares): malformed, too deeply nested or
over-long lines get a -32700/-32600/-32602 error reply and the connection stays up.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from daemon.core.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    JsonRpcReject,
    Message,
    MessageId,
    RpcError,
    error_reply,
)
from daemon.core.jsonrpc_framing import encode_line, lines, messages
from daemon.errors import DaemonError

__all__ = [
    "DOMAIN_ERROR",
    "STREAM_LIMIT",
    "Handler",
    "NotificationHandler",
    "RpcConnection",
    "RpcError",
]

logger = logging.getLogger(__name__)

DOMAIN_ERROR = -32000  # a DaemonError; data.code carries its ErrorCode

STREAM_LIMIT = 64 * 1024 * 1024

Handler = Callable[[dict[str, Any]], Awaitable[Any]]
NotificationHandler = Callable[[str, dict[str, Any]], Awaitable[None]]


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


class RpcConnection:
    """One bidirectional JSON-RPC connection."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        handlers: Mapping[str, Handler] | None = None,
        on_notification: NotificationHandler | None = None,
        name: str = "peer",
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._handlers = dict(handlers or {})
        self._on_notification = on_notification
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._write_lock = asyncio.Lock()
        self._closed = asyncio.Event()
        self.name = name
        self.info: dict[str, Any] = {}

    def add_handlers(self, handlers: Mapping[str, Handler]) -> None:
        self._handlers.update(handlers)

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    async def wait_closed(self) -> None:
        await self._closed.wait()

    # -- sending ------------------------------------------------------------------------------

    async def request(
        self, method: str, params: BaseModel | Mapping[str, Any] | None = None, *, wait_s: float = 60
    ) -> Any:
        if self.closed:
            raise ConnectionError(f"connection to {self.name} is closed")
        msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        try:
            await self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": _jsonable(params) or {}})
            return await asyncio.wait_for(future, wait_s)
        finally:
            self._pending.pop(msg_id, None)

    async def notify(self, method: str, params: BaseModel | Mapping[str, Any] | None = None) -> None:
        if not self.closed:
            await self._send({"jsonrpc": "2.0", "method": method, "params": _jsonable(params) or {}})

    async def _send(self, message: dict[str, Any]) -> None:
        data = encode_line(message)
        async with self._write_lock:
            try:
                self._writer.write(data)
                await self._writer.drain()
            except (ConnectionError, RuntimeError) as exc:
                self._mark_closed()
                raise ConnectionError(f"connection to {self.name} lost") from exc

    # -- receiving ----------------------------------------------------------------------------

    async def serve(self) -> None:
        """Read until EOF, dispatching requests, responses and notifications."""
        try:
            with contextlib.suppress(ConnectionError):
                bodies = lines(self._reader, max_bytes=STREAM_LIMIT)
                async for message in messages(bodies, protocol="the daemon socket", params_array=False):
                    if isinstance(message, JsonRpcReject):
                        await self._send_error(message.msg_id, message)
                    else:
                        await self._dispatch(message)
        finally:
            self._mark_closed()
            for task in list(self._tasks):
                task.cancel()
            with contextlib.suppress(Exception):
                self._writer.close()

    def _mark_closed(self) -> None:
        if not self._closed.is_set():
            self._closed.set()
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError(f"connection to {self.name} closed"))

    async def _dispatch(self, checked: Message) -> None:
        msg = checked.raw
        if checked.method is not None:
            params: dict[str, Any] = msg.get("params", {})
            if checked.id is not None:
                self._spawn(self._handle_request(checked.id, checked.method, params))
            elif self._on_notification is not None:
                self._spawn(self._on_notification(checked.method, params))
            return
        future = self._pending.get(checked.id) if isinstance(checked.id, int) else None
        if future is None or future.done():
            return
        if "error" in msg:
            raw = msg["error"]
            err: dict[str, Any] = raw if isinstance(raw, dict) else {}  # pyright: ignore[reportUnknownVariableType]
            code = err.get("code")
            future.set_exception(
                RpcError(
                    code if isinstance(code, int) else INTERNAL_ERROR, str(err.get("message", "")), err.get("data")
                )
            )
        else:
            future.set_result(msg.get("result"))

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _handle_request(self, msg_id: MessageId, method: str, params: dict[str, Any]) -> None:
        handler = self._handlers.get(method)
        if handler is None:
            await self._send_error(msg_id, RpcError(METHOD_NOT_FOUND, f"method not found: {method}"))
            return
        try:
            result = await handler(params)
        except RpcError as exc:
            await self._send_error(msg_id, exc)
        except ValidationError as exc:
            await self._send_error(msg_id, RpcError(INVALID_PARAMS, f"invalid params for {method}: {exc}"))
        except DaemonError as exc:
            await self._send_error(msg_id, RpcError(DOMAIN_ERROR, str(exc), {"code": exc.code.value}))
        except Exception as exc:  # the connection's one catch-all boundary
            logger.exception("handler for %s failed", method)
            await self._send_error(
                msg_id, RpcError(INTERNAL_ERROR, f"internal error in {method}: {type(exc).__name__}")
            )
        else:
            with contextlib.suppress(ConnectionError):
                await self._send({"jsonrpc": "2.0", "id": msg_id, "result": _jsonable(result)})

    async def _send_error(self, msg_id: MessageId | None, error: RpcError) -> None:
        with contextlib.suppress(ConnectionError):
            await self._send(error_reply(msg_id, error.code, error.message, error.data))

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()
            await self._writer.wait_closed()
        self._mark_closed()
