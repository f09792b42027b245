"""Code intelligence inside the daemon: the language-server pool and its ``intel/*`` methods.

The methods are derived from the capability registry (``daemon.service.intel.capabilities``): each one
validates the capability's params model and runs its ``work`` on this process's service.

Uses the daemon's own index (no second owner: every use of it runs on the index thread) and
forwards the watcher's changes to the language servers so their answers follow the files on disk.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from daemon.config import Config
from daemon.core.intel_models import LanguageServerStatus
from daemon.service.index.host import IndexHost
from daemon.service.intel.capabilities import CAPABILITIES
from daemon.service.intel.capability import Capability
from daemon.service.intel.code_intel import CodeIntelService
from daemon.service.wire.rpc import Handler

__all__ = ["IntelHost"]


class IntelHost:
    """A daemon component (see ``DaemonComponent``)."""

    def __init__(self, config: Config, index: IndexHost) -> None:
        self._config = config
        self._index = index
        self._stack = contextlib.AsyncExitStack()
        self._service: CodeIntelService | None = None

    async def start(self) -> None:
        self._service = await self._stack.enter_async_context(
            CodeIntelService.open(
                self._config,
                index=self._index.workspace_index,
                run_on_owner=self._index.run_blocking,
                index_generation=lambda: self._index.generation,
            )
        )
        self._index.on_files_changed(self._files_changed)

    async def close(self) -> None:
        await self._stack.aclose()
        self._service = None

    async def _files_changed(self, paths: list[str]) -> None:
        if self._service is not None:
            root = self._config.workspace_path
            await self._service.pool.files_changed([root / p for p in paths])

    def servers(self) -> list[LanguageServerStatus]:
        return list(self._service.pool.statuses()) if self._service is not None else []

    def _svc(self) -> CodeIntelService:
        if self._service is None:
            raise RuntimeError("code intelligence is not started")
        return self._service

    def handlers(self) -> Mapping[str, Handler]:
        """One handler per capability the registry serves as a daemon method (``intel/*``)."""
        return {c.method: self._handler(c) for c in CAPABILITIES if c.method is not None}

    def _handler(self, capability: Capability[Any, Any]) -> Handler:
        work = capability.work
        if work is None:
            raise ValueError(f"capability {capability.name} has a method but nothing to serve it")

        async def handle(params: dict[str, Any]) -> Any:
            parsed = capability.parse(params)
            file = getattr(parsed, "file", None)
            if isinstance(file, str):  # a file an editor or agent has open: its vectors come next
                self._index.prefer([file])
            return await work(self._svc(), parsed)

        return handle
