"""What the fronts' early ``initialize`` answers share (``daemon.lsp.handshake``, ``daemon.acp.handshake``).

Standard library only: it runs before anything heavy loads. An early handshake reads the client's
first message itself, answers it when it is an ``initialize`` the front can vouch for, and hands
the request (``EarlyAnswer``) and every byte it read but did not consume (``Handshake.pending``)
to the protocol library once that is loaded. ``request_for`` is the JSON-RPC part of the
vouching, the same for both protocols; each front then checks its own params.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from typing import Any, cast

__all__ = ["EarlyAnswer", "Handshake", "request_for", "write_all"]


@dataclass(frozen=True, kw_only=True)
class EarlyAnswer:
    """A request answered early (``initialize``; in ACP also the first ``session/new``), and the result it was given."""

    message: dict[str, Any]
    result: dict[str, Any]

    @property
    def id(self) -> int | str:
        return cast(int | str, self.message["id"])

    def replay_problem(self, result: Any, error: Any) -> tuple[int, str] | None:
        """The log level and message when the protocol library, given the replayed request, answered other
        than this early answer (``result`` as JSON, or ``error``); None when it gave the same answer."""
        method = self.message["method"]
        if error is not None:
            return logging.ERROR, f"the {method} answered early failed when replayed: {error}"
        if result != self.result:
            return logging.WARNING, f"the early {method} answer differed from the one given on replay: {result}"
        return None


@dataclass(frozen=True, kw_only=True)
class Handshake:
    """What an early handshake did: the ``initialize`` it answered (or None), and the bytes read but not handled."""

    early: EarlyAnswer | None
    pending: bytes


def request_for(raw: bytes, method: str) -> dict[str, Any] | None:
    """The message in ``raw`` when it is a JSON-RPC 2.0 request for ``method`` (an integer or string id,
    object params), else None; whether its params fit is the front's to say."""
    try:
        message: Any = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict):
        return None
    message = cast(dict[str, Any], message)
    msg_id = message.get("id")
    if (
        message.get("jsonrpc") != "2.0"
        or message.get("method") != method
        or isinstance(msg_id, bool)
        or not isinstance(msg_id, int | str)
        or not isinstance(message.get("params"), dict)
    ):
        return None
    return message


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to the file descriptor ``fd`` (``os.write`` may write less)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
