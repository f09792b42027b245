"""The early ``initialize`` answer: ``ided acp`` answers the client's first request before it loads
the ACP SDK, the configuration or anything of the pipeline.

Standard library only. :func:`answer_initialize` reads the first line from stdin (file descriptor
0, unbuffered) and, when it is an ``initialize`` request whose params it can vouch for, writes the
answer ``IdedAgent.initialize`` gives (the agent's capabilities and info do not depend on the
client; the protocol version is the lower of the client's and ours) and returns the request, so
the agent gets it once loaded (the SDK's own answer to that id is dropped by
``daemon.acp.transport_guard.GuardedNdjsonTransport``).

It vouches for: a JSON-RPC 2.0 request with an integer or string id, ``params`` an object with
an integer ``protocolVersion`` of at least 1, and ``clientCapabilities``/``clientInfo`` absent or of
the shapes the schema gives them (``fs`` read/write flags, ``terminal``, ``name``/``version``/``title``
strings, ``_meta`` objects). Anything else (another method, odd params, a line that is not JSON,
end of input) is left alone: every byte read is handed back in :attr:`Handshake.pending` and the
guarded transport serves it as it always does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any, cast

from daemon import __version__
from daemon.core.early_handshake import EarlyAnswer, Handshake, request_for, write_all

__all__ = [
    "PROTOCOL_VERSION",
    "EarlyAnswer",
    "Handshake",
    "answer",
    "answer_initialize",
    "initialize_result",
    "read_line",
]

PROTOCOL_VERSION = 1
"""The ACP version this agent speaks (the SDK's ``acp.PROTOCOL_VERSION``; a test keeps them equal)."""

_MAX_LINE_BYTES = 16 * 1024 * 1024
_READ_CHUNK = 64 * 1024


def initialize_result(params: dict[str, Any]) -> dict[str, Any]:
    """The ``InitializeResponse`` (as JSON) ``IdedAgent.initialize`` gives for ``params``."""
    return {
        "protocolVersion": min(cast(int, params["protocolVersion"]), PROTOCOL_VERSION),
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": False},
            "sessionCapabilities": {"list": {}, "close": {}},
        },
        "authMethods": [],
        "agentInfo": {"name": "ided", "title": "ided workflow pipeline", "version": __version__},
    }


def answer_initialize(read_fd: int = 0, write_fd: int = 1) -> Handshake:
    """Read the first line from ``read_fd``; answer it on ``write_fd`` when it is an ``initialize`` this
    module vouches for. Returns what was answered and the bytes read but not consumed."""
    data = read_line(read_fd, b"")
    end = data.find(b"\n")
    message = _vouched(data[:end]) if end >= 0 else None
    if message is None:
        return Handshake(early=None, pending=data)
    result = initialize_result(cast(dict[str, Any], message["params"]))
    answer(write_fd, message, result)
    return Handshake(early=EarlyAnswer(message=message, result=result), pending=data[end + 1 :])


def read_line(read_fd: int, data: bytes) -> bytes:
    """``data`` and what is read from ``read_fd`` until it holds a whole line (a newline), or input ends,
    or it grows past the longest line the handshake reads."""
    while b"\n" not in data and len(data) <= _MAX_LINE_BYTES:
        chunk = os.read(read_fd, _READ_CHUNK)
        if not chunk:
            break
        data += chunk
    return data


def answer(write_fd: int, message: dict[str, Any], result: dict[str, Any]) -> None:
    """Write the JSON-RPC answer ``result`` to the request ``message`` as one line."""
    reply = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}, separators=(",", ":"))
    write_all(write_fd, reply.encode() + b"\n")


def _vouched(line: bytes) -> dict[str, Any] | None:
    message = request_for(line, "initialize")
    return message if message is not None and _params_fit(cast(dict[str, Any], message["params"])) else None


def _params_fit(params: dict[str, Any]) -> bool:
    version = params.get("protocolVersion")
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version < 1 << 16:
        return False
    if set(params) - {"protocolVersion", "clientCapabilities", "clientInfo", "_meta"}:
        return False
    return (
        _meta_fits(params)
        and _absent_or(params.get("clientCapabilities"), _capabilities)
        and _absent_or(params.get("clientInfo"), _client_info)
    )


def _capabilities(value: dict[str, Any]) -> bool:
    if set(value) - {"fs", "terminal", "_meta"} or not _meta_fits(value):
        return False
    if not isinstance(value.get("terminal", False), bool | None):
        return False
    return _absent_or(value.get("fs"), _fs)


def _fs(value: dict[str, Any]) -> bool:
    if set(value) - {"readTextFile", "writeTextFile", "_meta"} or not _meta_fits(value):
        return False
    return all(isinstance(value.get(flag, False), bool) for flag in ("readTextFile", "writeTextFile"))


def _client_info(value: dict[str, Any]) -> bool:
    if set(value) - {"name", "version", "title", "_meta"} or not _meta_fits(value):
        return False
    return (
        isinstance(value.get("name"), str)
        and isinstance(value.get("version"), str)
        and isinstance(value.get("title", ""), str | None)
    )


def _meta_fits(value: dict[str, Any]) -> bool:
    return isinstance(value.get("_meta", {}), dict | None)


def _absent_or(value: Any, check: Callable[[dict[str, Any]], bool]) -> bool:
    """``value`` is None, or an object that passes ``check``."""
    if value is None:
        return True
    return isinstance(value, dict) and check(cast(dict[str, Any], value))
