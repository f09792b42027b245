"""The ``Workspace`` a one-shot command holds (``ided search``, ``ided status``).

``command_workspace(config, command=...)``: when a daemon serves the workspace
(``daemon_or_here`` with ``daemon="running"``, the one place that asks), the command is a thin client of it
(``DaemonWorkspace``, attached as ``cli``, never spawning one); otherwise the index is opened in
this process, locked as ``ided COMMAND`` (``LocalWorkspace.over_index``; no language servers, so
``serves_intel`` is False). Either way the command gets the same port and the same answers;
``status().daemon`` says which process answered.

``prepare`` runs on the index opened here, before the first call, in a worker thread: the command's
own work on an index it holds (``ided search`` indexes a workspace never indexed, lexically, with
its progress bar). A daemon prepares its own index, so ``prepare`` is not called then.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from daemon.config import Config
from daemon.core.ports import Workspace
from daemon.service.workspace.choice import workspace_for

if TYPE_CHECKING:
    from daemon.index.workspace_index import WorkspaceIndex

__all__ = ["Prepare", "command_workspace"]

Prepare = Callable[["WorkspaceIndex"], None]
"""Work on the index this process opened, before the command's first call."""


@asynccontextmanager
async def command_workspace(
    config: Config, *, command: str, prepare: Prepare | None = None
) -> AsyncGenerator[Workspace]:
    """The workspace for ``ided COMMAND`` (see the module docstring); closed on exit.

    ``DaemonError`` (``workspace_busy``, ``state_unwritable``, a daemon's refusal, ...) when neither
    the daemon nor this process can serve it.
    """
    local = functools.partial(_locked_index, config, command, prepare)
    async with workspace_for(config, daemon="running", client="cli", local=local) as found:
        yield found


@asynccontextmanager
async def _locked_index(config: Config, command: str, prepare: Prepare | None) -> AsyncGenerator[Workspace]:
    from daemon.service.index.local import open_local_index
    from daemon.service.workspace.local import LocalWorkspace

    index = await asyncio.to_thread(open_local_index, config, command=command)
    try:
        if prepare is not None:
            await asyncio.to_thread(prepare, index)
        yield LocalWorkspace.over_index(config, index)
    finally:
        await asyncio.to_thread(index.close)
