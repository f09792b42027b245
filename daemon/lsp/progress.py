"""``$/progress`` while the daemon indexes: one work-done progress per busy period.

A period begins when the front attaches (starting a daemon and its first pass is work the user
waits for) and whenever the daemon announces a pass (``index/progress``). It reports the pass's
phase counts as they arrive and the daemon's own account of what it is doing (``busy``: the first
pass, dense embedding), and ends once the daemon is idle. Clients that did not announce
``window.workDoneProgress`` get no progress at all, as the protocol requires.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import cast

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from daemon.service.wire.api import DaemonStatus, IndexProgressEvent

__all__ = ["POLL_INTERVAL_S", "IndexProgressReporter"]

logger = logging.getLogger(__name__)

POLL_INTERVAL_S = 0.5
_TITLE = "ided: indexing"
_tokens = itertools.count(1)

StatusSource = Callable[[], Awaitable[DaemonStatus]]
IdleCallback = Callable[[DaemonStatus], None]


class IndexProgressReporter:
    """Work-done progress for the daemon's busy periods; also tells whether it was ever idle."""

    def __init__(self, server: LanguageServer, status: StatusSource, on_idle: IdleCallback) -> None:
        self._server = server
        self._status = status
        self._on_idle = on_idle
        self._token: str | None = None
        self._opening = asyncio.Lock()
        self._watch: asyncio.Task[None] | None = None
        self.idle_seen = False

    @property
    def active(self) -> bool:
        return self._token is not None

    def _supported(self) -> bool:
        window = self._server.client_capabilities.window
        return bool(window and window.work_done_progress)

    async def begin(self, message: str) -> None:
        """Open a progress (no-op when one is open or the client cannot show it)."""
        async with self._opening:
            if self._token is not None or not self._supported():
                return
            token = f"ided-index-{next(_tokens)}"
            try:
                create = cast(Awaitable[object], self._server.work_done_progress.create_async(token))  # pyright: ignore[reportUnknownMemberType]
                await asyncio.wait_for(create, 10)
            except Exception:  # a client that refuses the token gets no progress; never fatal
                logger.warning("the client did not accept progress token %s", token, exc_info=True)
                return
            self._token = token
            self._server.work_done_progress.begin(
                token, types.WorkDoneProgressBegin(title=_TITLE, message=message, cancellable=False, percentage=0)
            )

    def report(self, message: str, percentage: int | None = None) -> None:
        if self._token is not None:
            self._server.work_done_progress.report(
                self._token, types.WorkDoneProgressReport(message=message, percentage=percentage)
            )

    def end(self, message: str) -> None:
        token, self._token = self._token, None
        if token is not None:
            self._server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))

    # -- driven by the daemon -------------------------------------------------------------------

    async def on_event(self, event: IndexProgressEvent) -> None:
        """An ``index/progress`` notification: open a period if none is open, report the counts."""
        if self._token is None:
            await self.begin(f"{event.phase}…")
            self.watch_until_idle()
        percentage = round(100 * event.done / event.total) if event.total else None
        self.report(f"{event.phase} {event.done}/{event.total}", percentage)

    def watch_until_idle(self) -> None:
        """End the open period once the daemon reports nothing busy (polling its status)."""
        if self._watch is None or self._watch.done():
            self._watch = asyncio.create_task(self._poll(), name="ided-lsp-progress")

    async def _poll(self) -> None:
        last = ""
        while True:
            try:
                current = await self._status()
            except Exception as exc:  # the failing request already told the client why
                self.end(f"stopped: {exc}")
                return
            if current.busy is None:
                index = current.index
                self.idle_seen = True
                self.end(f"{index.files_indexed} files, {index.chunks} chunks indexed")
                self._on_idle(current)
                return
            if current.busy != last:
                last = current.busy
                self.report(current.busy)
            await asyncio.sleep(POLL_INTERVAL_S)

    async def close(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._watch
        self.end("detached")
