"""Where a front gets its run service: the workspace daemon's, or one in this process.

``open_run_service(config, daemon=...)`` is the one factory the fronts call; ``daemon`` is a ``DaemonUse``,
decided by ``daemon_or_here`` (``daemon.service.wire.daemon_or_here``, the one place that decides, for the
workspace too):

- ``daemon="start"``: the daemon's runs, starting the daemon when none runs (``ided run``);
- ``daemon="running"``: the daemon's runs when one runs (an editor front attached to it already);
- ``daemon="never"`` (``ided run --no-daemon``, ACP without ``acp.attach_daemon``): runs in this process.

Either way the front holds a ``RunService`` (``daemon.service.runs.service``) over the daemon transport
(``attach_runs``) or the in-process one (``open_here``). A daemon that cannot be reached, or that runs with
other run settings than this front's (another model, another replay script: ``daemon_running``), leaves the
runs in this process; ``RunServiceOpened.note`` says why, and ``in_daemon`` which one answers. Runs in this
process search the index in this process (or through a running daemon) and their agents get no code
intelligence when no daemon serves it: ``REDUCED_TOOLSET`` is the line a front shows for that.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from daemon.config import Config
from daemon.errors import DaemonError
from daemon.service.runs.service import RunService
from daemon.service.wire.client import ClientKind
from daemon.service.wire.daemon_or_here import DaemonUse, daemon_or_here

if TYPE_CHECKING:
    from daemon.orchestration.workflow_loader import WorkflowCatalog

__all__ = ["REDUCED_TOOLSET", "RunServiceOpened", "open_run_service"]

logger = logging.getLogger(__name__)

REDUCED_TOOLSET = (
    "runs in this process: agents read, list, write and run commands, and search the index; code intelligence "
    "(find_definition, get_references, get_signature, get_ast_node, ...) is served by the workspace daemon only"
)


@dataclass(frozen=True)
class RunServiceOpened:
    """The service a front got, and where its runs execute."""

    service: RunService
    note: str = ""
    """Why the runs are not in the daemon when a daemon was asked for ("" otherwise)."""

    @property
    def in_daemon(self) -> bool:
        return self.service.in_daemon


@asynccontextmanager
async def open_run_service(
    config: Config,
    *,
    daemon: DaemonUse,
    client: ClientKind,
    models_needed: bool = True,
    catalog: WorkflowCatalog | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> AsyncGenerator[RunServiceOpened]:
    """The run service for ``config``'s workspace (see the module docstring); closed on exit.

    ``models_needed=False`` (listing, showing, cancelling) always answers in this process: the run store
    and branches are files every process shares. ``overrides``: the settings a daemon this call starts
    is given (as the front's ``--set``). ``catalog`` and ``env`` are for the in-process service.
    """
    note = ""
    choice = await asyncio.to_thread(daemon_or_here, config, daemon=daemon if models_needed else "never")
    if choice.daemon:
        from daemon.service.runs.remote import attach_runs

        try:
            remote = await attach_runs(config, client=client, start=choice.start, overrides=overrides)
        except (DaemonError, OSError) as exc:
            note = f"the workspace daemon does not take this front's runs: {exc}"
            logger.info("%s", note)
        else:
            try:
                yield RunServiceOpened(remote)
            finally:
                await remote.aclose()
            return
    elif choice.wanted:
        note = f"the workspace daemon does not take this front's runs: {choice.why}"
    from daemon.service.runs.local import open_here  # the pipeline's imports only where it runs

    async with open_here(config, models_needed=models_needed, catalog=catalog, env=env, client=client) as here:
        yield RunServiceOpened(here, note=note)
