"""The one answer to "does a daemon serve this workspace?" for a process that needs its ``Workspace``.

``daemon_or_local(config, client=..., local=...)``: when a daemon serves the workspace (or is starting:
it is waited for, up to ``daemon.start_timeout_seconds``; ``daemon_running``), this process is a
thin client of it (``DaemonWorkspace``, attached as ``client``, never spawning one); otherwise
``local()`` opens the workspace in this process. A daemon that runs but refuses the attachment is a
``DaemonError``: the index it holds cannot be opened here either, so nothing falls back silently.

Its callers differ only in what "in this process" means: a one-shot command opens the index locked
as ``ided COMMAND`` (``command_workspace``); a run opens it in the background (``open_pipeline``).
The MCP server decides by its ``--attach`` setting instead (it may start the daemon itself).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from daemon.config import Config
from daemon.core.ports import Workspace
from daemon.service.wire.client import ClientKind
from daemon.service.wire.daemon_or_here import daemon_running

__all__ = ["LocalOpener", "daemon_or_local"]

LocalOpener = Callable[[], AbstractAsyncContextManager[Workspace]]
"""Opens the workspace in this process, when no daemon serves it."""


@asynccontextmanager
async def daemon_or_local(config: Config, *, client: ClientKind, local: LocalOpener) -> AsyncGenerator[Workspace]:
    """The daemon's ``Workspace`` when one serves ``config``'s workspace, else ``local()``'s; closed on exit."""
    if await asyncio.to_thread(daemon_running, config):
        from daemon.service.workspace.remote import DaemonWorkspace  # the client's imports only where used

        async with DaemonWorkspace.attached(config, client=client, start=False) as remote:
            yield remote
        return
    async with local() as workspace:
        yield workspace
