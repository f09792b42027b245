"""The daemon-client transport of the ``Workspace`` port: one connection to the workspace daemon.

Fronts that attach to the daemon (``ided mcp --attach``, runs started with a daemon running) use
this: one hot index and one set of language servers for every editor and agent on the workspace.
The connection is opened once and kept (a ``DaemonLink``); a broken one is re-attached (``start``:
spawning a new daemon if the old one died) and the call, which only reads, sent once more. The daemon's
coded errors come back as ``DaemonRefusal``, a ``DaemonError`` with the same code.
``DaemonWorkspace.over(link)`` serves the same port over a link its holder attaches (the LSP
front's session, which attaches in the background and subscribes to the daemon's notifications).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable
from contextlib import asynccontextmanager
from typing import TypeVar

from pydantic import BaseModel

from daemon.config import Config
from daemon.core.intel_models import IntelStatus
from daemon.core.models import SearchFilters, SearchMode, SearchResult
from daemon.service.wire.api import DaemonStatus, Methods, SearchParams
from daemon.service.wire.client import ClientKind, DaemonClient
from daemon.service.wire.link import DaemonLink, Reattaching, ask

__all__ = ["SEARCH_WAIT_S", "DaemonWorkspace"]

R = TypeVar("R", bound=BaseModel)

SEARCH_WAIT_S = 60.0
"""Upper bound for one search through the daemon."""


class DaemonWorkspace:
    """A ``Workspace`` served by the daemon (see the module docstring)."""

    def __init__(self, link: DaemonLink, *, owned: Reattaching | None = None) -> None:
        self._link = link
        self._owned = owned

    @classmethod
    async def attach(cls, config: Config, *, client: ClientKind, start: bool) -> DaemonWorkspace:
        """Attach to the workspace's daemon (``start``: spawn one when none runs; else ``DaemonUnavailable``)."""

        def attach() -> Awaitable[DaemonClient]:
            return DaemonClient.attach(config, client=client, start=start)

        link = Reattaching(config.workspace, attach, await attach())
        return cls(link, owned=link)

    @classmethod
    @asynccontextmanager
    async def attached(cls, config: Config, *, client: ClientKind, start: bool) -> AsyncGenerator[DaemonWorkspace]:
        """``attach``, held for a ``with`` block and closed at its end."""
        workspace = await cls.attach(config, client=client, start=start)
        try:
            yield workspace
        finally:
            await workspace.aclose()

    @classmethod
    def over(cls, link: DaemonLink) -> DaemonWorkspace:
        """The workspace over a link its holder attaches and closes (the LSP front's session)."""
        return cls(link)

    @property
    def serves_intel(self) -> bool:
        return True

    async def aclose(self) -> None:
        if self._owned is not None:
            await self._owned.close()

    async def _call(self, method: str, params: BaseModel | None, result: type[R], *, wait_s: float = 120) -> R:
        answer = await ask(self._link, method, params, wait_s=wait_s, retry=True)
        return result.model_validate(answer)

    async def search(
        self, query: str, *, k: int | None, filters: SearchFilters | None, mode: SearchMode | None = None
    ) -> SearchResult:
        params = SearchParams.of(query, k=k, filters=filters, mode=mode)
        return await self._call(Methods.INDEX_SEARCH, params, SearchResult, wait_s=SEARCH_WAIT_S)

    async def intel(self, method: str, params: BaseModel, result: type[R]) -> R:
        return await self._call(method, params, result)

    async def status(self) -> IntelStatus:
        """The daemon's ``daemon/status``: the index, the language servers and the daemon itself (``daemon``)."""
        return (await self._call(Methods.DAEMON_STATUS, None, DaemonStatus)).intel_status()
