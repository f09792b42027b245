"""The workspace's language servers: one warm ``ManagedServer`` per language group, routed by file.

``async with LanguageServerPool(workspace, config.intel) as pool:`` resolves the servers once
(found on ``intel.search_path``/``PATH`` or not, with the install hint), starts none of them
until asked (``pool.prestart(languages)`` or the first call for a file of that language), and
closes all of them on exit. Several servers run at once in a polyglot workspace; each request is
routed by the language of its file.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Self, TypeVar

from lsprotocol import types as lsp

from daemon.config import IntelConfig
from daemon.core.intel_models import LanguageServerStatus
from daemon.errors import InvalidToolInput
from daemon.intel.lsp.client import LspClient
from daemon.intel.lsp.documents import OpenDocument
from daemon.intel.lsp.managed_server import ManagedServer, Operation
from daemon.intel.lsp.registry import lsp_language_id, resolve_servers

__all__ = ["LanguageServerPool"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


class LanguageServerPool:
    """See the module docstring."""

    def __init__(
        self,
        workspace: Path,
        config: IntelConfig,
        *,
        refused: Mapping[str, tuple[str, str]] | None = None,
        exclusions: Callable[[], Sequence[str]] | None = None,
        trusted: bool = False,
    ) -> None:
        """``refused``: language -> (why, how to trust) for servers an untrusted repository chose;
        ``exclusions``: globs of what ided skips, which servers that can are told not to analyse;
        ``trusted``: whether the user trusts the workspace (untrusted, nothing it ships is run)."""
        self.workspace = workspace.resolve()
        self.config = config
        self._servers: list[ManagedServer] = [
            ManagedServer(spec, workspace=self.workspace, config=config, exclusions=exclusions)
            for spec in resolve_servers(config, self.workspace, refused, trusted=trusted)
        ]
        self._by_language: dict[str, ManagedServer] = {}
        self._announced: set[Path] = set()
        for server in self._servers:
            for language in server.spec.languages:
                self._by_language.setdefault(language, server)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    @property
    def languages(self) -> frozenset[str]:
        """Languages that have a server group (installed or not)."""
        return frozenset(self._by_language)

    def server_for(self, language: str) -> ManagedServer:
        """The server of ``language``; ``InvalidToolInput`` when ided knows no language server for it."""
        server = self._by_language.get(language)
        if server is None:
            known = ", ".join(sorted(self._by_language))
            raise InvalidToolInput(f"no language server is known for {language!r} files (supported: {known})")
        return server

    def running(self) -> list[ManagedServer]:
        """Servers that have been started (and may be serving)."""
        return [s for s in self._servers if s.pid is not None]

    def statuses(self) -> list[LanguageServerStatus]:
        return [server.status() for server in self._servers]

    def prestart(self, languages: Iterable[str]) -> list[str]:
        """Start the servers of ``languages`` in the background; returns the names started."""
        started: list[str] = []
        for language in languages:
            server = self._by_language.get(language)
            if server is not None and server.spec.available and server.name not in started:
                server.start_soon()
                started.append(server.name)
        return started

    async def run(
        self,
        language: str,
        operation: Operation[T],
        *,
        path: Path | None = None,
        display: str | None = None,
        ready_wait: float | None = None,
    ) -> T:
        """Run ``operation`` on the server of ``language`` with ``path`` synced (see ``ManagedServer.run``)."""
        server = self.server_for(language)
        language_id = lsp_language_id(path.name, language) if path is not None else None
        return await server.run(operation, path=path, language_id=language_id, display=display, ready_wait=ready_wait)

    async def view(self, language: str, path: Path, *, display: str) -> tuple[str, int, int, int] | None:
        """The token of what ``language``'s server knows now, ``path`` synced (see ``ManagedServer.view``),
        with the server's name; None while it is not ready."""
        server = self.server_for(language)
        token = await server.view(path, language_id=lsp_language_id(path.name, language), display=display)
        return None if token is None else (server.name, *token)

    async def files_changed(self, paths: Iterable[Path]) -> None:
        """Tell the running servers that files changed on disk (for a watcher: open documents are re-synced).

        A path gone is ``Deleted``; a path this pool was not told about before is ``Created`` (the
        watcher does not say which paths are new, and pyright and basedpyright add a file to their
        program only on ``Created``: a new module's call sites would be missing from references);
        after that it is ``Changed``.
        """
        changes: list[lsp.FileEvent] = []
        for path in paths:
            resolved = path.resolve()
            if not resolved.exists():
                kind = lsp.FileChangeType.Deleted
                self._announced.discard(resolved)
            elif resolved in self._announced:
                kind = lsp.FileChangeType.Changed
            else:
                kind = lsp.FileChangeType.Created
                self._announced.add(resolved)
            changes.append(lsp.FileEvent(uri=resolved.as_uri(), type=kind))
        if not changes:
            return

        async def notify(client: LspClient, _doc: OpenDocument | None) -> None:
            client.notify(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, lsp.DidChangeWatchedFilesParams(changes=changes))

        for server in self.running():
            with contextlib.suppress(Exception):
                await server.run(notify, ready_wait=0)

    async def aclose(self) -> None:
        results = await asyncio.gather(*(s.aclose() for s in self._servers), return_exceptions=True)
        for server, result in zip(self._servers, results, strict=True):
            if isinstance(result, BaseException):
                logger.warning("closing %s failed: %s", server.name, result)
