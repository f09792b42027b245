"""The LSP transport, guarded: every frame is checked before pygls sees it.

pygls 2.1 reads frames itself and, for a request without ``params`` or whose params fail to
parse, logs and sends nothing (measured; JSON-RPC wants -32602), so a client waits forever. This
loop replaces pygls' reader: ``daemon.core.jsonrpc_framing`` frames each message and
``daemon.core.jsonrpc`` decodes and checks it (the core every transport shares); the loop answers
what is wrong itself, then hands valid messages to the protocol.

- broken framing (no ``Content-Length``, garbage between frames), a body that is not JSON or not
  UTF-8: -32700 with id null, then it resynchronises on the next ``Content-Length`` header;
- JSON nested too deep (``[[[[…``): -32600 with id null;
- not a JSON-RPC 2.0 object (a batch, a number, a bad ``id``/``method``/``params``): -32600;
- a request before ``initialize``: -32002; after ``shutdown`` (other than ``exit``): -32600;
- an unknown method: -32601; params that do not match the method's type: -32602 naming the field;
- a handler that raises is pygls' business (it answers -32603), and nothing above ends the loop.

Only ``exit`` (or end of input) ends it; the exit code is pygls' (0 after ``shutdown``, else 1).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import Any, cast

import cattrs
from lsprotocol import types
from pygls.protocol import JsonRPCNotification, JsonRPCProtocol, JsonRPCRequestMessage

from daemon.core.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    JsonRpcReject,
    Message,
    MessageId,
    error_reply,
)
from daemon.core.jsonrpc_framing import AsyncFrameSource, encode_frame, frames, messages
from daemon.lsp.handshake import EarlyAnswer

__all__ = ["SERVER_NOT_INITIALIZED", "GuardedTransport"]

logger = logging.getLogger(__name__)

SERVER_NOT_INITIALIZED = -32002

_ALWAYS_ALLOWED = {types.INITIALIZE, types.EXIT}


class GuardedTransport:
    """Reads frames, answers the malformed ones, hands the rest to a pygls protocol."""

    def __init__(self, protocol: JsonRPCProtocol, converter: cattrs.Converter) -> None:
        self.protocol = protocol
        self._converter = converter
        self._initialized = False
        self._shutting_down = False
        self._writes: set[asyncio.Future[None]] = set()

    async def serve(self, source: AsyncFrameSource, early: EarlyAnswer | None = None) -> int:
        """Serve until ``exit`` or end of input; returns the process exit code. ``early``: the ``initialize``
        already answered (``daemon.lsp.handshake``), handled first with the protocol's own answer dropped."""
        try:
            if early is not None:
                self._replay(early)
            async for message in messages(frames(source), protocol="LSP"):
                if isinstance(message, JsonRpcReject):
                    self._answer(message)
                else:
                    self._dispatch(message)
        except SystemExit as exc:  # pygls' exit handler
            return exc.code if isinstance(exc.code, int) else 0
        return 0 if self._shutting_down else 1

    # -- one message ----------------------------------------------------------------------------

    def _replay(self, early: EarlyAnswer) -> None:
        """Hand the early-answered ``initialize`` to pygls; client capabilities that do not fit the LSP types
        (the handshake vouched for the rest) are dropped, and the client is told."""
        expect = getattr(self.protocol, "expect_early_answer", None)
        if expect is not None:
            expect(early)
        message: dict[str, Any] = early.message
        try:
            structured = self._structure(message, types.INITIALIZE, JsonRPCRequestMessage)
        except Exception as exc:  # cattrs raises many kinds: all mean the capabilities do not fit
            problem = _explain(exc)
            logger.warning("initialize was answered early but its params do not fit: %s", problem)
            params: dict[str, Any] = {**message["params"], "capabilities": {}}
            message = {**message, "params": params}
            structured = self._structure(message, types.INITIALIZE, JsonRPCRequestMessage)
            self.protocol.notify(
                types.WINDOW_SHOW_MESSAGE,
                types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message=f"ided: the client capabilities sent with initialize do not fit the LSP types "
                    f"({problem}); they are ignored",
                ),
            )
        self._initialized = True
        self.protocol.handle_message(structured)

    def _dispatch(self, checked: Message) -> None:
        message: Any = None
        try:
            message = self._structured(checked)
            if message is not None:
                self.protocol.handle_message(message)
        except JsonRpcReject as reject:
            self._answer(reject)
        except Exception:  # the transport's one catch-all: a message must never end the loop
            logger.exception("handling an LSP message failed")
            msg_id = getattr(message, "id", None)
            if getattr(message, "method", None) is not None and isinstance(msg_id, int | str):
                self._write(error_reply(msg_id, INTERNAL_ERROR, "internal error while handling the request"))

    def _structured(self, checked: Message) -> Any:
        if checked.method is None:
            return self._response(checked.raw, checked.id)
        if checked.id is not None:
            return self._request(checked.raw, checked.method, checked.id)
        return self._notification(checked.raw, checked.method)

    def _request(self, message: dict[str, Any], method: str, msg_id: int | str) -> Any:
        if not self._initialized and method not in _ALWAYS_ALLOWED:
            raise JsonRpcReject(SERVER_NOT_INITIALIZED, f"server not initialized: {method} before initialize", msg_id)
        if self._shutting_down and method not in _ALWAYS_ALLOWED:
            raise JsonRpcReject(INVALID_REQUEST, f"invalid request: {method} after shutdown", msg_id)
        if not self._known(method):
            raise JsonRpcReject(METHOD_NOT_FOUND, f"method not found: {method}", msg_id)
        try:
            structured = self._structure(message, method, JsonRPCRequestMessage)
        except Exception as exc:  # cattrs raises many kinds: all mean the params do not fit
            raise JsonRpcReject(INVALID_PARAMS, f"invalid params for {method}: {_explain(exc)}", msg_id) from None
        if method == types.INITIALIZE:
            self._initialized = True
        elif method == types.SHUTDOWN:
            self._shutting_down = True
        return structured

    def _notification(self, message: dict[str, Any], method: str) -> Any:
        if method != types.EXIT and (not self._initialized and method != types.INITIALIZED):
            logger.warning("dropped notification %s before initialize", method)
            return None
        if self.protocol.get_message_type(method) is None and not self._known(method):
            logger.debug("dropped notification for unknown method %s", method)
            return None
        try:
            return self._structure(message, method, JsonRPCNotification)
        except Exception as exc:
            if "params" not in message:
                try:
                    return self._structure({**message, "params": {}}, method, JsonRPCNotification)
                except Exception:
                    logger.debug("notification %s without params does not fit its type", method)
            logger.warning("dropped notification %s: %s", method, _explain(exc))
            return None

    def _response(self, message: dict[str, Any], reply_id: MessageId | None) -> Any:
        try:
            return self.protocol.structure_message(message)
        except Exception:
            logger.warning("dropped a malformed response to request %s", reply_id)
            return None

    # -- helpers --------------------------------------------------------------------------------

    def _known(self, method: str) -> bool:
        features = cast(dict[str, object], self.protocol.fm.features)  # pyright: ignore[reportUnknownMemberType]
        builtins = cast(dict[str, object], self.protocol.fm.builtin_features)  # pyright: ignore[reportUnknownMemberType]
        return method in features or method in builtins

    def _structure(self, message: dict[str, Any], method: str, fallback: type) -> Any:
        msg_type = self.protocol.get_message_type(method)
        if msg_type is None:
            msg_type = fallback
            message = {"params": None, **message}
        return cast(Any, self._converter.structure(message, msg_type))  # pyright: ignore[reportUnknownMemberType]

    def _answer(self, reject: JsonRpcReject) -> None:
        logger.warning("rejected LSP message (%d): %s", reject.code, reject.message)
        self._write(reject.reply())

    def _write(self, reply: dict[str, Any]) -> None:
        writer = self.protocol.writer
        if writer is None:
            return
        try:
            result = writer.write(encode_frame(reply))
            if inspect.isawaitable(result):
                task = asyncio.ensure_future(result)
                self._writes.add(task)
                task.add_done_callback(self._writes.discard)
        except (OSError, ValueError):
            logger.warning("could not write an error reply: the client is gone")


def _explain(exc: BaseException) -> str:
    if isinstance(exc, cattrs.BaseValidationError):
        return "; ".join(cattrs.transform_error(exc))
    return str(exc) or type(exc).__name__
