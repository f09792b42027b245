"""The ``Workspace`` a process holds: the daemon's, or the workspace opened here, as ``daemon_or_here`` decides.

``workspace_for(config, daemon=..., client=..., local=...)``: when the decision
(``daemon.service.wire.daemon_or_here``, the one place that asks) is the daemon, this process is a thin client
of it (``DaemonWorkspace``, attached as ``client``, starting the daemon only for ``daemon="start"``);
otherwise ``local()`` opens the workspace in this process. A daemon that runs but refuses the attachment is
a ``DaemonError``: the index it holds cannot be opened here either, so nothing falls back silently.

Its callers differ only in what "in this process" means: a one-shot command opens the index locked as
``ided COMMAND`` (``command_workspace``); a run opens it in the background (``open_pipeline``); the MCP
server opens its own index and language servers (``ided mcp --standalone``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from daemon.config import Config
from daemon.core.ports import Workspace
from daemon.service.wire.client import ClientKind
from daemon.service.wire.daemon_or_here import DaemonUse, daemon_or_here

__all__ = ["LocalOpener", "workspace_for"]

LocalOpener = Callable[[], AbstractAsyncContextManager[Workspace]]
"""Opens the workspace in this process, when the daemon does not serve it."""


@asynccontextmanager
async def workspace_for(
    config: Config, *, daemon: DaemonUse, client: ClientKind, local: LocalOpener
) -> AsyncGenerator[Workspace]:
    """The daemon's ``Workspace`` or ``local()``'s, as ``daemon_or_here`` decides for ``daemon``; closed on exit."""
    choice = await asyncio.to_thread(daemon_or_here, config, daemon=daemon)
    if choice.daemon:
        from daemon.service.workspace.remote import DaemonWorkspace  # the client's imports only where used

        async with DaemonWorkspace.attached(config, client=client, start=choice.start) as remote:
            yield remote
        return
    async with local() as workspace:
        yield workspace
