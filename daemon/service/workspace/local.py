"""The in-process transport of the ``Workspace`` port: this process's index and language servers.

``LocalWorkspace.open(config)`` opens a ``CodeIntelService`` (the index in the background, the
language-server pool; servers start when first asked) and answers every capability by calling the
registry entry's ``work`` on it: the same function the daemon runs for its ``intel/*`` methods.
``LocalWorkspace.open_index(config)`` opens the index alone (a run without a daemon): searches and
status answer, code intelligence does not (``serves_intel`` is False and ``intel`` says why).
``LocalWorkspace.over_index(config, index)`` serves an index the caller opened and closes (a one-shot
command's, ``command_workspace``), the same way. The language-server stack is imported only by ``open``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel

from daemon.config import Config
from daemon.core.intel_models import IntelStatus
from daemon.core.models import SearchFilters, SearchMode, SearchResult
from daemon.errors import LanguageServerError
from daemon.index.shared_index import SharedIndex
from daemon.service.intel.capabilities import BY_METHOD
from daemon.service.intel.trust_notice import trust_notice

if TYPE_CHECKING:
    from daemon.index.workspace_index import WorkspaceIndex
    from daemon.service.intel.code_intel import CodeIntelService

__all__ = ["LocalWorkspace"]

R = TypeVar("R", bound=BaseModel)


class LocalWorkspace:
    """A ``Workspace`` served in this process (see the module docstring)."""

    def __init__(self, config: Config, index: SharedIndex, service: CodeIntelService | None) -> None:
        self._config = config
        self._index = index
        self.service = service

    @classmethod
    @asynccontextmanager
    async def open(
        cls, config: Config, *, background: bool = True, index: WorkspaceIndex | None = None
    ) -> AsyncGenerator[LocalWorkspace]:
        """Open the service (``CodeIntelService.open``'s ``background`` and ``index``); closed on exit."""
        from daemon.service.intel.code_intel import CodeIntelService

        async with CodeIntelService.open(config, background=background, index=index) as service:
            yield cls(config, service.index, service)

    @classmethod
    @asynccontextmanager
    async def open_index(cls, config: Config) -> AsyncGenerator[LocalWorkspace]:
        """The index alone, opened in the background (searches wait for it, bounded); closed on exit."""
        shared = SharedIndex(config, wait_seconds=config.intel.ready_wait_seconds)
        opening = asyncio.create_task(asyncio.to_thread(shared.open, run_pass=False))
        try:
            yield cls(config, shared, None)
        finally:
            with contextlib.suppress(Exception):
                await opening
            await asyncio.to_thread(shared.close)

    @classmethod
    def over_index(cls, config: Config, index: WorkspaceIndex) -> LocalWorkspace:
        """The index ``index`` alone, opened and closed by the caller (read under this handle's lock)."""
        shared = SharedIndex(config, wait_seconds=config.intel.ready_wait_seconds)
        shared.adopt(index)
        return cls(config, shared, None)

    @property
    def serves_intel(self) -> bool:
        return self.service is not None

    async def search(
        self, query: str, *, k: int | None, filters: SearchFilters | None, mode: SearchMode | None = None
    ) -> SearchResult:
        return await asyncio.to_thread(self._index.search, query, k, filters, mode)

    async def intel(self, method: str, params: BaseModel, result: type[R]) -> R:
        capability = BY_METHOD.get(method)
        if capability is None or capability.work is None:
            raise KeyError(f"no code-intel capability is served as {method!r}")
        if self.service is None:
            raise LanguageServerError(
                f"no language servers run for {self._config.workspace} in this process: start the workspace "
                "daemon (`ided daemon --detach`) for code intelligence"
            )
        p = params if isinstance(params, capability.params) else capability.parse(params.model_dump())
        return result.model_validate(await capability.work(self.service, p))

    async def status(self) -> IntelStatus:
        if self.service is not None:
            return await self.service.index_status()
        status, note = await asyncio.to_thread(self._index.status)
        return IntelStatus(
            workspace=str(self._config.workspace_path),
            index=status,
            index_note=note,
            servers=(),
            trust=trust_notice(self._config),
        )

    async def aclose(self) -> None:
        """Nothing of its own: what it holds closes when ``open``'s context exits."""
