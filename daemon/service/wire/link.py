"""A link to the workspace daemon that outlives one connection, and the one place a call over it fails.

The daemon's client-side transports (``DaemonWorkspace``, ``DaemonRuns``) and the LSP front's
session hold a ``DaemonLink``: ``client()`` answers the live connection. ``Reattaching`` is the plain
one: it attaches again (its ``attach`` function, which may start a fresh daemon) once the connection it
holds is closed, because the daemon was killed, restarted or stopped itself when idle.

``ask`` sends one request over a link. The daemon's refusal comes back as ``DaemonRefusal``: a
``DaemonError`` with the daemon's code that keeps the JSON-RPC error (numeric code, message, data) for
fronts that pass it on. A connection lost under the call raises ``DaemonError`` ("lost the
connection"); with ``retry`` (calls that only read) it is first sent once more over a fresh attachment.
Either way the next call attaches again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, cast

from pydantic import BaseModel

from daemon.errors import DaemonError, ErrorCode
from daemon.service.wire.client import DaemonClient
from daemon.service.wire.rpc import RpcError

__all__ = ["DaemonLink", "DaemonRefusal", "Reattaching", "ask"]

logger = logging.getLogger(__name__)

_KNOWN_CODES = frozenset(c.value for c in ErrorCode)


class DaemonLink(Protocol):
    """Where the live connection to the workspace daemon comes from."""

    @property
    def workspace_name(self) -> str:
        """The daemon's workspace, as messages name it."""
        ...

    async def client(self) -> DaemonClient:
        """The live connection (attaching again when the previous one is closed)."""
        ...


class DaemonRefusal(DaemonError):
    """The daemon answered a call with an error: its code (``data.code``), message and the JSON-RPC error."""

    def __init__(self, error: RpcError) -> None:
        code = self.data_of(error).get("code")
        known = ErrorCode(code) if isinstance(code, str) and code in _KNOWN_CODES else None
        super().__init__(error.message.split(" [see ", 1)[0], code=known)
        self.error = error

    @property
    def data(self) -> dict[str, Any]:
        """The error's ``data`` object (empty when it has none)."""
        return self.data_of(self.error)

    @staticmethod
    def data_of(error: RpcError) -> dict[str, Any]:
        raw: object = error.data
        return cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}


class Reattaching:
    """A ``DaemonLink`` over ``attach``: it attaches on first use and again once its connection is closed."""

    def __init__(
        self, workspace_name: str, attach: Callable[[], Awaitable[DaemonClient]], client: DaemonClient | None = None
    ) -> None:
        self.workspace_name = workspace_name
        self._attach = attach
        self._client = client
        self._lock = asyncio.Lock()

    @property
    def current(self) -> DaemonClient | None:
        """The connection held now (possibly closed), or None before the first attach."""
        return self._client

    async def client(self) -> DaemonClient:
        current = self._client
        if current is not None and not current.closed:
            return current
        async with self._lock:  # concurrent callers share one new attachment
            if self._client is not None and not self._client.closed:
                return self._client
            if self._client is not None:
                logger.warning("the daemon connection was lost: attaching again")
            self._client = await self._attach()
            return self._client

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()


async def ask(
    link: DaemonLink,
    method: str,
    params: BaseModel | Mapping[str, Any] | None,
    *,
    wait_s: float,
    retry: bool,
) -> Any:
    """``method``'s raw answer over ``link`` (see the module docstring for its errors)."""
    for attempt in (1, 2):
        client = await link.client()
        try:
            return await client.call(method, params, wait_s=wait_s)
        except ConnectionError:
            with contextlib.suppress(Exception):
                await client.close()  # so the link attaches again, now or on the next call
            if not retry or attempt == 2:
                raise DaemonError(f"lost the connection to the daemon of {link.workspace_name}") from None
            logger.warning("the daemon connection broke during %s: sending it again", method)
        except RpcError as exc:
            raise DaemonRefusal(exc) from None
    raise AssertionError("unreachable")
