"""The daemon's own transport of the ``Workspace`` port: its index host and code intelligence, in process.

A run the daemon executes searches and asks code intelligence through this: the same ``IndexHost`` (one
writer thread) and ``IntelHost`` (one language-server pool) that answer the daemon's clients, with no
connection to itself (a connection would count as a client and keep the daemon from its idle shutdown).
Each code-intel call runs the handler the daemon serves for that ``intel/*`` method.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel

from daemon.core.intel_models import IntelStatus
from daemon.core.models import SearchFilters, SearchMode, SearchResult
from daemon.errors import LanguageServerError
from daemon.service.index.host import IndexHost
from daemon.service.intel.capabilities import INDEX_STATUS
from daemon.service.intel.host import IntelHost
from daemon.service.intel.params import NoParams
from daemon.service.intel.trust_notice import trust_notice
from daemon.service.wire.api import SearchParams

__all__ = ["HostedWorkspace"]

R = TypeVar("R", bound=BaseModel)


class HostedWorkspace:
    """A ``Workspace`` over the daemon's ``IndexHost`` and (when it runs one) ``IntelHost``."""

    def __init__(self, index: IndexHost, intel: IntelHost | None) -> None:
        self._index = index
        self._intel = intel
        self._handlers = dict(intel.handlers()) if intel is not None else {}

    @property
    def serves_intel(self) -> bool:
        return self._intel is not None

    async def search(
        self, query: str, *, k: int | None, filters: SearchFilters | None, mode: SearchMode | None = None
    ) -> SearchResult:
        return await self._index.search(SearchParams.of(query, k=k, filters=filters, mode=mode))

    async def intel(self, method: str, params: BaseModel, result: type[R]) -> R:
        handler = self._handlers.get(method)
        if handler is None:
            if self._intel is None:
                raise LanguageServerError(f"this daemon runs no language servers for {self._index.config.workspace}")
            raise KeyError(f"no code-intel capability is served as {method!r}")
        answer = await handler(params.model_dump(mode="json"))
        return result.model_validate(answer.model_dump(mode="json") if isinstance(answer, BaseModel) else answer)

    async def status(self) -> IntelStatus:
        if INDEX_STATUS.daemon_method in self._handlers:
            return await INDEX_STATUS.run(self, NoParams())
        return IntelStatus(
            workspace=str(self._index.config.workspace_path),
            index=await self._index.status(),
            servers=(),
            trust=trust_notice(self._index.config),
        )

    async def aclose(self) -> None:
        """Nothing of its own: the daemon closes its hosts."""
