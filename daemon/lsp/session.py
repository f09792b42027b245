"""The LSP front's link to its workspace daemon (a ``DaemonLink``): attach once, re-attach, coded errors.

The front holds its workspace as the ``Workspace`` port over this link (``DaemonWorkspace.over``,
``IdedLanguageServer.workspace_port``; pygls keeps ``workspace`` for its documents) for search and code
intelligence; ``call`` asks the daemon itself (``daemon/status``), and ``wire_errors`` turns a failed
call into the JSON-RPC error the client sees.

Attaching may start the daemon (``DaemonClient.attach(start=True)``), which takes seconds, so it
runs in the background after ``initialized``; requests that arrive meanwhile wait for it (bounded).
If the daemon goes away (killed, idle-stopped between two requests), the next call attaches again,
starting a fresh daemon that reopens the persisted index.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Generator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException

from daemon.config import Config
from daemon.core.jsonrpc import METHOD_NOT_FOUND
from daemon.errors import DaemonError
from daemon.service.wire.client import DaemonClient
from daemon.service.wire.link import DaemonRefusal, ask
from daemon.service.wire.rpc import NotificationHandler

__all__ = ["REQUEST_FAILED", "ConfigLoader", "DaemonSession", "wire_errors"]

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)
ConfigLoader = Callable[[Path], Config]

REQUEST_FAILED = -32803  # LSP: the request was valid but the server could not carry it out
_CALL_TIMEOUT_S = 120.0


class DaemonSession:
    """One LSP connection's attachment to the daemon of its workspace."""

    def __init__(
        self, load_config: ConfigLoader, overrides: Mapping[str, Any], on_notification: NotificationHandler
    ) -> None:
        self._load_config = load_config
        self._overrides = dict(overrides)
        self._on_notification = on_notification
        self._client: DaemonClient | None = None
        self._attached: asyncio.Future[DaemonClient] | None = None
        self._lock = asyncio.Lock()
        self.config: Config | None = None
        self._config_error: DaemonError | None = None
        self.failure: str | None = None

    def configure(self, root: Path) -> Config | None:
        """Load the configuration of the workspace at ``root``; a bad one is kept as the attach failure."""
        try:
            self.config = self._load_config(root)
        except DaemonError as exc:
            self.config, self._config_error, self.failure = None, exc, str(exc)
            logger.warning("no configuration for %s: %s", root, exc)
        return self.config

    @property
    def attach_timeout_s(self) -> float:
        return (self.config.daemon.start_timeout_seconds if self.config else 30.0) + 10.0

    def expect_attach(self) -> None:
        """From now on requests wait for :meth:`attach` instead of failing at once (call it synchronously
        before scheduling the attach, so a request right after ``initialized`` waits too)."""
        if self._attached is None:
            self._attached = asyncio.get_running_loop().create_future()

    async def attach(self) -> DaemonClient:
        """Attach (starting the daemon when none runs); the outcome is kept for waiting requests."""
        self.expect_attach()
        assert self._attached is not None
        try:
            client = await self._connect()
        except BaseException as exc:
            self.failure = _describe(exc)
            self._attached.set_exception(JsonRpcException(code=REQUEST_FAILED, message=self.failure))
            self._attached.exception()  # retrieved here: waiting requests re-raise it themselves
            raise
        self._attached.set_result(client)
        return client

    async def _connect(self) -> DaemonClient:
        if self.config is None:
            raise self._config_error or DaemonError("the workspace is not known yet (no initialize request)")
        client = await DaemonClient.attach(
            self.config,
            client="lsp",
            start=True,
            subscribe=True,
            on_notification=self._on_notification,
            overrides=self._overrides,
        )
        self._client = client
        self.failure = None
        logger.info("attached to daemon pid %d for %s", client.daemon_pid, self.config.workspace)
        return client

    async def client(self) -> DaemonClient:
        """The live connection: waits for the first attach; re-attaches once the daemon is gone."""
        if self._attached is None:
            raise JsonRpcException(code=REQUEST_FAILED, message="ided: not attached to a daemon yet (no initialized)")
        try:
            client = await asyncio.wait_for(asyncio.shield(self._attached), self.attach_timeout_s)
        except TimeoutError:
            raise JsonRpcException(
                code=REQUEST_FAILED, message="ided: the workspace daemon did not answer in time"
            ) from None
        current = self._client or client
        if not current.closed:
            return current
        async with self._lock:
            if self._client is not None and not self._client.closed:
                return self._client
            logger.warning("the daemon connection was lost: attaching again")
            try:
                return await self._connect()
            except (DaemonError, OSError) as exc:
                raise JsonRpcException(code=REQUEST_FAILED, message=_describe(exc)) from exc

    @property
    def workspace_name(self) -> str:
        return self.config.workspace if self.config is not None else "this workspace"

    async def call(self, method: str, params: BaseModel | Mapping[str, Any] | None, result: type[M]) -> M:
        """Call the daemon (a call of the daemon's own, not of the workspace: ``daemon/status``); its errors
        become JSON-RPC errors as ``wire_errors`` says. It only reads, so a call whose connection died under
        it (the daemon was killed) is sent once more over a fresh attachment."""
        with wire_errors(method):
            return result.model_validate(await ask(self, method, params, wait_s=_CALL_TIMEOUT_S, retry=True))

    async def close(self) -> None:
        """Detach (the daemon keeps running for its other clients and stops itself when idle)."""
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()


@contextlib.contextmanager
def wire_errors(method: str) -> Generator[None]:
    """What the LSP client is answered when a call to the daemon (``method``) fails.

    The daemon's refusal goes on with its JSON-RPC code, message and data (a method the daemon does not
    have says so); a lost connection, a time-out or an answer of the wrong shape is ``REQUEST_FAILED``.
    Failures to attach are ``REQUEST_FAILED`` already (``DaemonSession.client``).
    """
    try:
        yield
    except DaemonRefusal as refusal:
        error = refusal.error
        if error.code == METHOD_NOT_FOUND:
            message = f"the ided daemon does not provide {method} ({error.message})"
            raise JsonRpcException(code=error.code, message=message) from refusal
        raise JsonRpcException(code=error.code, message=error.message, data=error.data) from refusal
    except (DaemonError, ConnectionError, TimeoutError) as exc:
        raise JsonRpcException(code=REQUEST_FAILED, message=f"ided: {method} failed: {_describe(exc)}") from exc
    except ValidationError as exc:
        message = f"ided: the daemon's answer to {method} is not a {exc.title}"
        raise JsonRpcException(code=REQUEST_FAILED, message=message) from exc


def _describe(exc: BaseException) -> str:
    if isinstance(exc, DaemonError):
        return str(exc)
    if isinstance(exc, asyncio.CancelledError):
        return "attaching was cancelled"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
