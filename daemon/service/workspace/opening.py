"""A ``Workspace`` handle that answers at once while the real one opens in the background.

A front that must answer its client's handshake before the workspace is ready (``ided mcp``'s
``initialize`` never waits for the daemon, the index or a language server) holds an
``OpeningWorkspace``: ``OpeningWorkspace.start(open_workspace)`` enters ``open_workspace()`` (an async
context manager yielding the real ``Workspace``: ``LocalWorkspace.open``, ``DaemonWorkspace``'s
attach) in a background task and keeps it entered until ``aclose``. Each call awaits the opening,
then goes to the real workspace; an opening that failed makes every call raise the same
``DaemonError`` (its code kept; any other exception becomes a ``DaemonError`` naming it).
``serves_intel`` is True until the opening says otherwise (a handle opened without language servers).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel

from daemon.core.ports import Workspace
from daemon.errors import DaemonError

if TYPE_CHECKING:
    from daemon.core.intel_models import IntelStatus
    from daemon.core.models import SearchFilters, SearchMode, SearchResult

__all__ = ["OpeningWorkspace", "WorkspaceOpener"]

logger = logging.getLogger(__name__)

R = TypeVar("R", bound=BaseModel)

WorkspaceOpener = Callable[[], AbstractAsyncContextManager[Workspace]]
"""Opens the real workspace: entered in the background, exited by ``OpeningWorkspace.aclose``."""


class OpeningWorkspace:
    """A ``Workspace`` whose real handle is still opening (see the module docstring)."""

    def __init__(self, opener: WorkspaceOpener) -> None:
        self._opener = opener
        self._opened: asyncio.Future[Workspace] = asyncio.get_running_loop().create_future()
        self._closing = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def start(cls, opener: WorkspaceOpener) -> OpeningWorkspace:
        """Begin opening ``opener()`` in the background; the handle answers calls once it is open."""
        handle = cls(opener)
        handle._task = asyncio.create_task(handle._hold(), name="ided-workspace-open")
        return handle

    async def _hold(self) -> None:
        """Enter the opener, publish the workspace, keep it open until ``aclose`` (enter and exit in one task)."""
        try:
            async with self._opener() as workspace:
                self._opened.set_result(workspace)
                await self._closing.wait()
        except DaemonError as exc:
            logger.error("the workspace did not open [%s]: %s", exc.code.value, exc)
            self._fail(exc)
        except Exception as exc:  # a background task's boundary: every call gets the reason
            logger.exception("the workspace did not open")
            self._fail(DaemonError(f"the workspace did not open: {type(exc).__name__}: {exc}"))

    def _fail(self, error: DaemonError) -> None:
        if not self._opened.done():
            self._opened.set_exception(error)
            self._opened.exception()  # retrieved: no "never retrieved" warning when no call comes

    @property
    def ready(self) -> bool:
        """Whether the opening finished (opened or failed)."""
        return self._opened.done()

    async def workspace(self) -> Workspace:
        """The real workspace, once open; the opening's ``DaemonError`` when it failed."""
        return await asyncio.shield(self._opened)

    @property
    def serves_intel(self) -> bool:
        if self._opened.done() and not self._opened.cancelled() and self._opened.exception() is None:
            return self._opened.result().serves_intel
        return True

    async def search(
        self, query: str, *, k: int | None, filters: SearchFilters | None, mode: SearchMode | None = None
    ) -> SearchResult:
        return await (await self.workspace()).search(query, k=k, filters=filters, mode=mode)

    async def intel(self, method: str, params: BaseModel, result: type[R]) -> R:
        return await (await self.workspace()).intel(method, params, result)

    async def status(self) -> IntelStatus:
        return await (await self.workspace()).status()

    async def aclose(self) -> None:
        """Close the real workspace (or stop opening it)."""
        task = self._task
        if task is None:
            return
        if self._opened.done():
            self._closing.set()
        else:
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        if not self._opened.done():
            self._opened.cancel()
