"""The workspaces an ``ided acp`` process serves: per folder, its config, run service and sessions.

A session names its folder (``cwd``); the first session in a folder opens the folder's run service
(``daemon.service.run_service.LocalRunService``: the pipeline runtime and the review), attaches to
the workspace daemon when ``acp.attach_daemon`` is on (starting it when none runs, so retrieval
searches its hot index), and keeps both until the process ends. The attached daemon (or why there is none) stays on the
workspace for ``_ided/status`` (``daemon.acp.status``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

from daemon.acp.sessions import SessionStore
from daemon.config import Config
from daemon.errors import DaemonError
from daemon.service.daemon_client import DaemonClient
from daemon.service.run_port import RunService
from daemon.service.run_service import LocalRunService

__all__ = ["ConfigLoader", "Workspace", "Workspaces"]

logger = logging.getLogger(__name__)

_ATTACH_OFF = "acp.attach_daemon is off"

ConfigLoader = Callable[[Path], Config]
"""Loads the configuration of a folder (the composition root binds the ``--set`` overrides)."""


@dataclass(frozen=True, kw_only=True)
class Workspace:
    root: Path
    config: Config
    runs: RunService
    """The workspace's runs: start, follow, cancel, feedback; diff, accept, reject and rollback."""
    sessions: SessionStore
    daemon: DaemonClient | None = None
    """The workspace daemon this process attached to (``acp.attach_daemon``)."""
    daemon_note: str | None = None
    """Why there is no daemon: attaching is off, or it failed (with the cause)."""


class Workspaces:
    """Opened on first use, closed together by ``aclose``."""

    def __init__(self, load_config: ConfigLoader, *, pinned: Path | None = None) -> None:
        self._load_config = load_config
        self._pinned = pinned
        self._opened: dict[Path, Workspace] = {}
        self._lock = asyncio.Lock()
        self._stack = AsyncExitStack()

    def opened(self) -> list[Workspace]:
        return list(self._opened.values())

    async def open(self, cwd: str) -> Workspace:
        """The workspace of ``cwd`` (or of ``--workspace`` when pinned); ``DaemonError`` when it cannot open."""
        folder = self._pinned or Path(cwd)
        if not folder.is_absolute():
            raise DaemonError(f"cwd must be an absolute path, got '{cwd}'")
        if not folder.is_dir():
            raise DaemonError(f"cwd {folder} is not a folder")
        config = await asyncio.to_thread(self._load_config, folder)
        root = config.workspace_path
        async with self._lock:
            if root in self._opened:
                return self._opened[root]
            daemon, note = await self._attach(config) if config.acp.attach_daemon else (None, _ATTACH_OFF)
            # with models, always worktrees: a code-mode prompt outside a repository gets a clear error
            runs = await self._stack.enter_async_context(LocalRunService.open(config, models_needed=True, client="acp"))
            workspace = Workspace(
                root=root,
                config=config,
                runs=runs,
                sessions=SessionStore(config.state_path),
                daemon=daemon,
                daemon_note=note,
            )
            self._opened[root] = workspace
            logger.info("serving workspace %s", root)
            return workspace

    async def _attach(self, config: Config) -> tuple[DaemonClient | None, str | None]:
        try:
            client = await DaemonClient.attach(config, client="acp", start=True)
        except (DaemonError, OSError) as exc:  # runs still work: retrieval opens the index in this process
            logger.warning("could not attach to the daemon of %s: %s", config.workspace_path, exc)
            return None, f"could not attach to the workspace daemon: {exc}"
        self._stack.push_async_callback(client.close)
        return client, None

    async def aclose(self) -> None:
        await self._stack.aclose()
        self._opened.clear()
