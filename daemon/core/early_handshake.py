"""What the fronts' early ``initialize`` answers share (``daemon.lsp.handshake``, ``daemon.acp.handshake``).

Standard library only: it runs before anything heavy loads. An early handshake reads the client's
first message itself, answers it when it is an ``initialize`` the front can vouch for, and hands
the request (``EarlyInitialize``) and every byte it read but did not consume (``Handshake.pending``)
to the protocol library once that is loaded. ``initialize_request`` is the JSON-RPC part of the
vouching, the same for both protocols; each front then checks its own params.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from typing import Any, cast

__all__ = ["EarlyInitialize", "Handshake", "initialize_request", "write_all"]


@dataclass(frozen=True, kw_only=True)
class EarlyInitialize:
    """The ``initialize`` request answered early, and the result it was given."""

    message: dict[str, Any]
    result: dict[str, Any]

    @property
    def id(self) -> int | str:
        return cast(int | str, self.message["id"])

    def replay_problem(self, result: Any, error: Any) -> tuple[int, str] | None:
        """The log level and message when the protocol library, given the replayed request, answered other
        than this early answer (``result`` as JSON, or ``error``); None when it gave the same answer."""
        if error is not None:
            return logging.ERROR, f"the initialize answered early failed when replayed: {error}"
        if result != self.result:
            return logging.WARNING, f"the early initialize answer differed from the one given on replay: {result}"
        return None


@dataclass(frozen=True, kw_only=True)
class Handshake:
    """What an early handshake did: the request it answered (or None), and the bytes read but not handled."""

    early: EarlyInitialize | None
    pending: bytes


def initialize_request(raw: bytes) -> dict[str, Any] | None:
    """The message in ``raw`` when it is a JSON-RPC 2.0 ``initialize`` request (an integer or string id,
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
        or message.get("method") != "initialize"
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
