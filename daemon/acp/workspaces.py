"""The workspaces an ``ided acp`` process serves: per folder, its config, run service and sessions.

A session names its folder (``cwd``); the first session in a folder attaches to the workspace daemon
when ``acp.attach_daemon`` is on (``daemon_or_here`` with ``daemon="start"``: starting it when none runs)
and opens the folder's run service (``open_run_service``): the daemon's (the daemon executes the runs over
its hot index and language servers, and calls back for what a prompt lends them, the editor's file reader
and the client's MCP tools), or, with no daemon or one that runs with other run settings, one in this
process (the pipeline runtime and the review). It
keeps both until the process ends. Both happen in the background, the attach first: ``session/new``
never waits for them. ``Workspace.daemon()`` waits for the attach (the
attached daemon, or why there is none, for ``_ided/status``); ``Workspace.ready()`` waits for the
run service (a prompt, ``session/load``), raising the ``DaemonError`` that kept it from opening;
``Workspace.runs`` is that service once ready. ``Workspace.intel()`` is the daemon's ``Workspace``
port over the same attachment (search and code intelligence for the client, ``daemon.acp.intel``),
re-attached when the daemon went away."""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Awaitable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from daemon.acp.early_session import FolderConfigs
from daemon.acp.sessions import SessionStore
from daemon.config import Config
from daemon.core.ports import Workspace as WorkspacePort
from daemon.core.tasks import cancel_and_wait
from daemon.errors import DaemonError
from daemon.service.runs.opening import open_run_service
from daemon.service.runs.service import RunService
from daemon.service.wire.client import DaemonClient, DaemonUnavailable
from daemon.service.wire.daemon_or_here import daemon_or_here, use_daemon
from daemon.service.wire.link import Reattaching
from daemon.service.workspace.remote import DaemonWorkspace

__all__ = ["Attachment", "Workspace", "Workspaces"]

logger = logging.getLogger(__name__)

_ATTACH_OFF = "acp.attach_daemon is off"


class Attachment(NamedTuple):
    """The workspace daemon this process attached to (``acp.attach_daemon``), or why there is none."""

    client: DaemonClient | None
    note: str | None
    """Why there is no daemon: attaching is off, or it failed (with the cause)."""
    port: WorkspacePort | None = None
    """The daemon's ``Workspace`` port (search, code intelligence) over this attachment."""


@dataclass(frozen=True, kw_only=True)
class Workspace:
    root: Path
    config: Config
    sessions: SessionStore
    attaching: asyncio.Future[Attachment]
    """The attach to the daemon, under way in the background (it never fails: a failure is a note)."""
    opening: asyncio.Future[RunService]
    """The run service, opened in the background once the attach is done."""

    async def daemon(self) -> Attachment:
        """The attachment, once the attach is done."""
        return await asyncio.shield(self.attaching)

    async def ready(self) -> RunService:
        """The run service, once open (``DaemonError`` when it could not open)."""
        return await asyncio.shield(self.opening)

    async def intel(self) -> WorkspacePort:
        """The daemon's search and code intelligence for this folder, once the attach is done;
        ``DaemonUnavailable`` saying why when there is no daemon."""
        attachment = await self.daemon()
        if attachment.port is None:
            raise DaemonUnavailable(
                f"search and code intelligence go through the workspace daemon, and there is none for {self.root}: "
                f"{attachment.note}. Turn acp.attach_daemon on (the default) or start it (`ided daemon --detach`)"
            )
        return attachment.port

    @property
    def runs(self) -> RunService:
        """The runs: start, follow, cancel, feedback; diff, accept, reject and rollback (after ``ready``)."""
        if not self.opening.done():
            raise DaemonError(f"the workspace {self.root} is still opening")
        return self.opening.result()


def _log_failure(opening: asyncio.Task[RunService]) -> None:
    """Log why a run service did not open (the prompts that wait for it get the error itself)."""
    if not opening.cancelled() and (exc := opening.exception()) is not None:
        logger.warning("the run service did not open: %s", exc)


class Workspaces:
    """Opened on first use, closed together by ``aclose``."""

    def __init__(self, configs: FolderConfigs, *, pinned: Path | None = None) -> None:
        self._configs = configs
        self._pinned = pinned
        self._opened: dict[Path, Workspace] = {}
        self._lock = asyncio.Lock()
        self._stack = AsyncExitStack()
        self._background: list[asyncio.Future[Any]] = []

    def opened(self) -> list[Workspace]:
        return list(self._opened.values())

    async def open(self, cwd: str) -> Workspace:
        """The workspace of ``cwd`` (or of ``--workspace`` when pinned); ``DaemonError`` when it cannot open."""
        folder = self._pinned or Path(cwd)
        if not folder.is_absolute():
            raise DaemonError(f"cwd must be an absolute path, got '{cwd}'")
        if not folder.is_dir():
            raise DaemonError(f"cwd {folder} is not a folder")
        config = await asyncio.to_thread(self._configs.load, folder)
        root = config.workspace_path
        async with self._lock:
            if root in self._opened:
                return self._opened[root]
            attaching = self._start_attach(config)
            opening = asyncio.create_task(self._open_runs(config, attaching), name=f"acp open {root}")
            opening.add_done_callback(_log_failure)
            self._background.append(opening)
            workspace = Workspace(
                root=root,
                config=config,
                sessions=SessionStore(config.state_path),
                attaching=attaching,
                opening=opening,
            )
            self._opened[root] = workspace
            logger.info("serving workspace %s", root)
            return workspace

    def _start_attach(self, config: Config) -> asyncio.Future[Attachment]:
        choice = daemon_or_here(config, daemon=use_daemon(config.acp.attach_daemon))  # start or never: no wait
        if not choice.daemon:
            off: asyncio.Future[Attachment] = asyncio.get_running_loop().create_future()
            off.set_result(Attachment(None, _ATTACH_OFF))
            return off
        task = asyncio.create_task(self._attach(config, start=choice.start), name=f"acp attach {config.workspace_path}")
        self._background.append(task)
        return task

    async def _open_runs(self, config: Config, attaching: asyncio.Future[Attachment]) -> RunService:
        attachment = await asyncio.shield(attaching)
        if attachment.client is None:
            # the pipeline (LangGraph, agents, git) loads here, in a thread: session/new never waits for it
            await asyncio.to_thread(importlib.import_module, "daemon.service.runs.local")
        # the daemon's runs when attached (what a prompt lends them is called back for), else this process's;
        # with models, always worktrees: a code-mode prompt outside a repository gets a clear error
        daemon = "running" if attachment.client is not None else "never"
        opened = await self._stack.enter_async_context(open_run_service(config, daemon=daemon, client="acp"))
        if opened.note:
            logger.warning("runs execute in this process: %s", opened.note)
        return opened.service

    async def _attach(self, config: Config, *, start: bool) -> Attachment:
        try:
            client = await DaemonClient.attach(config, client="acp", start=start, overrides=self._configs.overrides)
        except (DaemonError, OSError) as exc:  # runs still work: retrieval opens the index in this process
            logger.warning("could not attach to the daemon of %s: %s", config.workspace_path, exc)
            return Attachment(None, f"could not attach to the workspace daemon: {exc}")
        overrides = self._configs.overrides

        def attach_again() -> Awaitable[DaemonClient]:
            return DaemonClient.attach(config, client="acp", start=start, overrides=overrides)

        link = Reattaching(config.workspace, attach_again, client)
        self._stack.push_async_callback(link.close)  # closes the connection it holds: this one, or a later one
        return Attachment(client, None, DaemonWorkspace.over(link))

    async def aclose(self) -> None:
        await cancel_and_wait(self._background)
        self._background.clear()
        await self._stack.aclose()
        self._opened.clear()
