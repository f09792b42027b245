"""JSON-RPC 2.0 messages, decoded and checked once for every transport (LSP, ACP, MCP on stdio and
the daemon socket).

Each transport frames bytes (``Content-Length`` headers or newline-delimited lines, both read by
``daemon.core.jsonrpc_framing``) and hands one body to :func:`read_message`, which either returns
a :class:`Message` or raises :class:`JsonRpcReject` carrying the error to answer. It never raises
anything else, whatever the bytes are:

- not UTF-8, not JSON (``NaN``/``Infinity`` included, which JSON does not have): -32700, id null;
- nested deeper than ``max_depth`` levels (default :data:`MAX_NESTING_DEPTH`): -32600, found
  before anything recurses over it, with the request's id when the decoder could read it (the
  decoder's own ``RecursionError`` is caught and answered with id null);
- a string holding a lone surrogate escape (``"\\ud800"``: not Unicode text, which no UTF-8
  writer or pydantic model takes): -32600;
- not a JSON-RPC 2.0 object: -32600, with its id once the id is usable (an integer, or a string
  UTF-8 can carry);
- params that are not an object where the protocol wants one: -32602.

A response whose id is unusable cannot be answered (there is nobody to answer to) and comes back as
None: the transport drops it. What happens next (unknown methods -32601, params that do not fit a
method -32602, handlers that raise -32603) is each transport's dispatch; this module has no I/O.
:class:`RpcError` is the error object they all answer with (:func:`error_reply` builds the reply).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, cast

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_NESTING_DEPTH",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "JsonProblem",
    "JsonRpcReject",
    "Message",
    "MessageId",
    "RpcError",
    "decode_json",
    "error_reply",
    "guarded_json",
    "read_message",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

MAX_NESTING_DEPTH = 128
"""Deepest nesting of arrays and objects a message may have. No message of LSP, ACP, MCP or the
daemon socket comes near it; the limit keeps every later step from recursing out of the stack
(pydantic's JSON parser, which the MCP and ACP SDKs validate with, stops near 200 levels)."""

MessageId = int | str


class RpcError(Exception):
    """A JSON-RPC error: what a reply's ``error`` member holds. Handlers raise it to choose the code;
    a caller gets it back for an error reply."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        """The reply's ``error`` member."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class JsonRpcReject(RpcError):
    """A message to answer with a JSON-RPC error instead of dispatching it."""

    def __init__(self, code: int, message: str, msg_id: MessageId | None = None) -> None:
        super().__init__(code, message)
        self.msg_id = msg_id

    def reply(self) -> dict[str, Any]:
        """The error response to send for it."""
        return error_reply(self.msg_id, self.code, self.message)


@dataclass(frozen=True, kw_only=True)
class Message:
    """One well-formed JSON-RPC 2.0 message. ``raw`` is the decoded object, with ``params: null`` removed."""

    raw: dict[str, Any]
    id: MessageId | None
    method: str | None

    @property
    def kind(self) -> Literal["request", "notification", "response"]:
        if self.method is None:
            return "response"
        return "request" if self.id is not None else "notification"

    @property
    def params(self) -> dict[str, Any] | list[Any] | None:
        return self.raw.get("params")


def error_reply(msg_id: MessageId | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response."""
    return {"jsonrpc": "2.0", "id": msg_id, "error": RpcError(code, message, data).to_json()}


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _depth_exceeds(value: object, limit: int) -> bool:
    """Whether ``value`` nests arrays/objects more than ``limit`` levels deep (iterative: no recursion)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[object]
        if isinstance(item, dict):
            children = cast(dict[str, object], item).values()
        elif isinstance(item, list):
            children = cast(list[object], item)
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))  # pyright: ignore[reportUnknownArgumentType]
    return False


class JsonProblem(ValueError):
    """Why a body is not JSON ided takes (``kind``: ``utf8``, ``syntax``, ``depth``, ``surrogate``); ``value`` is
    what was decoded when the problem came after decoding (too deep, a lone surrogate), else None."""

    def __init__(self, kind: Literal["utf8", "syntax", "depth", "surrogate"], message: str, value: Any = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.value = value


def guarded_json(body: bytes | str, *, max_depth: int = MAX_NESTING_DEPTH) -> Any:
    """The JSON value in ``body``, decoded without recursing out of the stack; ``JsonProblem`` for anything
    else: not UTF-8, not JSON (``NaN``/``Infinity`` included), nested deeper than ``max_depth`` (found
    before anything recurses over it; the decoder's own ``RecursionError`` is caught), or a string with a
    lone surrogate escape. The transports' :func:`decode_json` and every file ided reads of its own (OSV
    records, the trust file, dependency manifests) decode through it."""
    try:
        text = body.decode("utf-8") if isinstance(body, bytes) else body
    except UnicodeDecodeError:
        raise JsonProblem("utf8", "not UTF-8") from None
    too_deep = f"JSON nested more than {max_depth} levels deep"
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise JsonProblem("depth", too_deep) from None
    except ValueError as exc:
        raise JsonProblem("syntax", str(exc)) from None
    if _depth_exceeds(value, max_depth):
        raise JsonProblem("depth", too_deep, value)
    if _SURROGATE_ESCAPE.search(text) and not _all_unicode(value):
        raise JsonProblem(
            "surrogate", "a string holds a lone surrogate escape (\\ud800-\\udfff), which is not Unicode text", value
        )
    return value


def decode_json(body: bytes | str, *, max_depth: int = MAX_NESTING_DEPTH) -> Any:
    """The JSON value in ``body``; ``JsonRpcReject`` (-32700, or -32600 when nested too deep) for anything else."""
    try:
        return guarded_json(body, max_depth=max_depth)
    except JsonProblem as problem:
        if problem.kind == "utf8":
            raise JsonRpcReject(PARSE_ERROR, "parse error: the message is not UTF-8") from None
        if problem.kind == "syntax":
            raise JsonRpcReject(PARSE_ERROR, f"parse error: {problem}") from None
        # decoded after all (too deep, a lone surrogate): answer the request by its id
        raise JsonRpcReject(INVALID_REQUEST, f"invalid request: {problem}", _request_id(problem.value)) from None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A ``\\uD800``-``\\uDFFF`` escape: the only way a lone surrogate gets into decoded JSON (UTF-8 bytes cannot
carry one). A valid pair (an escaped emoji) decodes to one code point and passes."""


def _all_unicode(value: object) -> bool:
    """Whether every string (keys included) in ``value`` can be written as UTF-8."""
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not _utf8(item):
                return False
        elif isinstance(item, dict):
            mapping = cast(dict[str, object], item)
            stack.extend(mapping.keys())
            stack.extend(mapping.values())
        elif isinstance(item, list):
            stack.extend(cast(list[object], item))
    return True


def _request_id(value: object) -> MessageId | None:
    """The id of a request object, when it is usable as one; else None."""
    if not isinstance(value, dict) or "method" not in value:
        return None
    msg_id = cast(dict[str, object], value).get("id")
    return msg_id if isinstance(msg_id, int | str) and not isinstance(msg_id, bool) and _utf8(msg_id) else None


def _utf8(msg_id: int | str) -> bool:
    """Whether an id can be echoed on a UTF-8 wire (a string with a lone surrogate, ``"\\ud800"``, cannot)."""
    if isinstance(msg_id, int):
        return True
    try:
        msg_id.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def read_message(
    body: bytes | str,
    *,
    protocol: str,
    params_array: bool = True,
    max_depth: int = MAX_NESTING_DEPTH,
) -> Message | None:
    """The checked message in ``body``; None for a stray response nobody can be answered for.

    ``protocol`` names the protocol in error messages; ``params_array`` says whether params may be
    an array (JSON-RPC allows it, LSP uses it) or must be an object (-32602 otherwise).
    """
    value = decode_json(body, max_depth=max_depth)
    if isinstance(value, list):
        raise JsonRpcReject(INVALID_REQUEST, f"invalid request: batches are not supported by {protocol}")
    if not isinstance(value, dict):
        raise JsonRpcReject(INVALID_REQUEST, "invalid request: a message must be a JSON object")
    raw: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
    has_id = "id" in raw
    msg_id = raw.get("id")
    if has_id and (isinstance(msg_id, bool) or not isinstance(msg_id, int | str) or not _utf8(msg_id)):
        if "method" not in raw:
            return None  # a response with an unusable id: nobody waits for it, nobody to answer
        raise JsonRpcReject(INVALID_REQUEST, "invalid request: id must be an integer or a string (valid Unicode)")
    reply_id: MessageId | None = msg_id if has_id else None  # pyright: ignore[reportAssignmentType]
    if raw.get("jsonrpc") != "2.0":
        raise JsonRpcReject(INVALID_REQUEST, 'invalid request: "jsonrpc" must be "2.0"', reply_id)
    if "method" not in raw:
        if reply_id is None or ("result" in raw) == ("error" in raw):
            raise JsonRpcReject(INVALID_REQUEST, "invalid request: no method, and not a response either", reply_id)
        return Message(raw=raw, id=reply_id, method=None)
    method = raw["method"]
    if not isinstance(method, str) or not method:
        raise JsonRpcReject(INVALID_REQUEST, "invalid request: method must be a non-empty string", reply_id)
    if "params" in raw and raw["params"] is None:  # some clients send null for "no params"
        del raw["params"]
    params = raw.get("params")
    if params is not None:
        if not isinstance(params, dict | list):
            raise JsonRpcReject(
                INVALID_REQUEST, f"invalid request: params of {method} must be an object or an array", reply_id
            )
        if isinstance(params, list) and not params_array:
            raise JsonRpcReject(INVALID_PARAMS, f"invalid params: params of {method} must be an object", reply_id)
    return Message(raw=raw, id=reply_id, method=method)
