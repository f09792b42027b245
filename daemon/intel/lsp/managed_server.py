"""One warm language server for a workspace: lazy start, readiness gate, restart-once, crash-loop stop.

``ManagedServer.run(path, operation)`` is the only way in. It

1. starts the server on first use (spawn + ``initialize``, bounded by ``start_timeout_seconds``),
   shared by every concurrent caller;
2. syncs ``path`` (and the other open documents) with the disk;
3. passes the readiness gate: while the server is starting or reports work-done progress
   (indexing, loading packages), the call waits up to ``ready_wait_seconds`` and then raises
   ``LanguageServerNotReady`` naming what it is doing and for how long, so a half-indexed
   server never answers "no references";
4. runs ``operation`` (requests with ``request_timeout_seconds`` each). Requests are pipelined:
   the server gets them as they come, always after the document text they need.

A request that runs past its timeout is cancelled and the server pinged (a request for a method no
server knows, answered at once by a live one): a server that answers is slow, not hung, so it keeps
running and the call fails with ``language_server_slow``. A server that exits, or answers neither
(a hang: it is killed), is restarted and the operation retried once. More than ``max_restarts``
failures within ``crash_window_seconds`` stop the restarts: calls then fail at once with the last
failure and the server's last stderr lines, until the window has passed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from daemon.config import IntelConfig
from daemon.core.intel_models import LanguageServerState, LanguageServerStatus
from daemon.errors import (
    LanguageServerError,
    LanguageServerNotReady,
    LanguageServerSlow,
    LanguageServerTerminated,
    WorkspaceUntrusted,
)
from daemon.intel.lsp.client import LspClient
from daemon.intel.lsp.documents import DocumentSync, OpenDocument
from daemon.intel.lsp.registry import ServerSpec, exclusion_settings

__all__ = ["ManagedServer", "Operation", "node_options"]

_PING_TIMEOUT_S = 5.0  # a server busy for longer than this after a timed-out request counts as hung

logger = logging.getLogger(__name__)

T = TypeVar("T")

Operation = Callable[[LspClient, OpenDocument | None], Awaitable[T]]
"""What a tool does with a ready server and the synced document (None when the call has no file)."""

# Servers that say in a log message when they have enumerated the workspace's files: before that
# their cross-file answers (references) cover only the open files.
_LOADED_LOG: dict[str, str] = {
    "basedpyright": r"^(Found \d+ source files?|No source files found)",
    "pyright": r"^(Found \d+ source files?|No source files found)",
}

# Servers that start indexing only when the first document is opened: after that first didOpen
# the gate waits this long for their progress report to begin before it trusts an idle server.
_SETTLE_ON_FIRST_OPEN: dict[str, float] = {
    "clangd": 0.5,
    "typescript-language-server": 1.0,
    "gopls": 0.5,
    "rust-analyzer": 1.0,
}


def node_options(ours: str, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The ``NODE_OPTIONS`` a server gets: the inherited ones plus each of ``ours`` whose option they do not set."""
    inherited = environ.get("NODE_OPTIONS", "").split()
    given = {option.split("=", 1)[0] for option in inherited}
    added = [option for option in ours.split() if option.split("=", 1)[0] not in given]
    return {"NODE_OPTIONS": " ".join([*inherited, *added])} if added else {}


class ManagedServer:
    """See the module docstring. Not thread-safe: use from the event loop that created it."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        workspace: Path,
        config: IntelConfig,
        exclusions: Callable[[], Sequence[str]] | None = None,
    ) -> None:
        """``exclusions``: globs of what ided skips, asked (in a thread) each time the server starts."""
        self.spec = spec
        self._exclusions = exclusions
        self._workspace = workspace
        self._config = config
        self._client: LspClient | None = None
        self._docs: DocumentSync | None = None
        self._start_task: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._state = LanguageServerState.NOT_STARTED if spec.available else LanguageServerState.UNAVAILABLE
        self._since = time.monotonic()
        self._reason: str | None = spec.reason
        self._crashes: deque[float] = deque()
        self._last_failure: str | None = None
        self._restarts = 0
        self._requests = 0
        self._generation = 0
        self._settled = False

    # -- public ---------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def pid(self) -> int | None:
        client = self._client
        return client.pid if client is not None and client.alive else None

    def status(self) -> LanguageServerStatus:
        state, reason = self._state, self._reason
        client = self._client
        if state is LanguageServerState.READY and client is not None:
            if not client.alive:
                state, reason = LanguageServerState.FAILED, "the process exited; it restarts on the next call"
            elif not client.workspace_loaded.is_set():
                state, reason = LanguageServerState.INDEXING, "loading the workspace"
            elif client.active_progress:
                state, reason = LanguageServerState.INDEXING, _describe_progress(client)
        return LanguageServerStatus(
            name=self.spec.name,
            languages=self.spec.languages,
            state=state,
            command=self.spec.command,
            reason=reason,
            seconds_in_state=round(time.monotonic() - self._since, 3),
            pid=self.pid,
            restarts=self._restarts,
            crashes_recent=len(self._recent_crashes()),
            requests=self._requests,
        )

    def start_soon(self) -> None:
        """Begin starting in the background (prestart); errors surface on the first call."""
        if self.spec.available and self._start_task is None:
            self._begin_start()

    async def run(
        self,
        operation: Operation[T],
        *,
        path: Path | None = None,
        language_id: str | None = None,
        display: str | None = None,
        ready_wait: float | None = None,
    ) -> T:
        """Run ``operation`` on a ready server (see the module docstring for the guarantees)."""
        wait = self._config.ready_wait_seconds if ready_wait is None else ready_wait
        for attempt in (1, 2):
            deadline = time.monotonic() + wait  # a restarted server gets the whole wait again
            client, docs, generation = await self._ready_client(deadline)
            try:
                doc = None
                if path is not None:
                    doc = await docs.sync(path, language_id=language_id or "plaintext", display=display or str(path))
                await self._gate(client, deadline)
                self._requests += 1
                return await operation(client, doc)
            except (TimeoutError, LanguageServerTerminated) as exc:
                if isinstance(exc, TimeoutError) and await client.answers_ping(_PING_TIMEOUT_S):
                    raise self._slow(exc) from exc
                failure = self._failure_text(exc)
                logger.warning("%s failed (%s); attempt %d of 2", self.spec.name, failure, attempt)
                if await self._discard(generation, failure):
                    self._restarts += 1
                if attempt == 2:
                    raise self._failed_twice(failure, exc) from exc
        raise AssertionError("unreachable")

    async def view(self, path: Path, *, language_id: str, display: str) -> tuple[int, int, int] | None:
        """What the server knows now, as a token, with ``path`` synced (and the other open documents
        refreshed) as ``run`` would: it changes whenever the server is told anything that could change
        an answer (a document opened, changed or closed, watched files changed), reports new work, or
        restarts. An answer the server gave after a token was taken holds while the token is the same.

        None while the server is not ready (not started, starting, loading, reporting progress, exited):
        then nothing it answered may be reused. Starts nothing and counts no request.
        """
        client, docs = self._client, self._docs
        if client is None or docs is None or self._state is not LanguageServerState.READY:
            return None
        if not client.alive or client.active_progress or not client.workspace_loaded.is_set():
            return None
        generation = self._generation
        try:
            await docs.sync(path, language_id=language_id, display=display)
        except LanguageServerTerminated:
            return None  # the request that follows restarts it
        if self._client is not client or not client.alive or client.active_progress:
            return None
        return generation, client.notifications_sent, client.progress_seen

    async def aclose(self) -> None:
        task = self._start_task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        client, self._client, self._docs = self._client, None, None
        if client is not None:
            await client.close()
        if self._state is not LanguageServerState.UNAVAILABLE:
            self._set_state(LanguageServerState.NOT_STARTED, None)
        self._start_task = None

    # -- lifecycle ------------------------------------------------------------------------------

    async def _ready_client(self, deadline: float) -> tuple[LspClient, DocumentSync, int]:
        if not self.spec.available:
            if self.spec.how_to_trust is not None:
                raise WorkspaceUntrusted(self._reason or self.spec.name, how_to_trust=self.spec.how_to_trust)
            raise LanguageServerError(self._reason or f"{self.spec.name} is not available")
        client = self._client
        died_idle = client is not None and not client.alive and self._start_task is not None
        if died_idle and client is not None and await self._discard(self._generation, _exit_text(client)):
            self._restarts += 1  # died while idle (or was killed): counted, started afresh below
        self._check_crash_loop()
        task = self._start_task or self._begin_start()
        if not task.done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._not_ready()
            try:
                await asyncio.wait_for(asyncio.shield(task), remaining)
            except TimeoutError:
                raise self._not_ready() from None
            except Exception:
                pass  # reported below from the task's own exception
        exc = task.exception()
        if exc is not None:
            self._start_task = None  # the next call tries again (bounded by the crash window)
            raise exc
        assert self._client is not None and self._docs is not None
        return self._client, self._docs, self._generation

    def _begin_start(self) -> asyncio.Task[None]:
        restarting = self._restarts > 0 or bool(self._crashes)
        self._set_state(LanguageServerState.RESTARTING if restarting else LanguageServerState.STARTING, None)
        self._start_task = asyncio.create_task(self._start(), name=f"lsp-start-{self.spec.name}")
        return self._start_task

    async def _start(self) -> None:
        assert self.spec.command is not None
        settings: Mapping[str, Any] = self.spec.settings
        if self._exclusions is not None:
            try:
                globs = await asyncio.to_thread(self._exclusions)
                settings = exclusion_settings(self.spec.name, settings, globs)
            except Exception:  # the server still starts, analysing everything as before
                logger.warning("listing what %s should not analyse failed", self.spec.name, exc_info=True)
        client = LspClient(name=self.spec.name, settings=settings, loaded_pattern=_LOADED_LOG.get(self.spec.name))
        started = time.monotonic()
        try:
            await client.spawn(
                self.spec.command,
                self.spec.args,
                cwd=self._workspace,
                env={**node_options(self._config.node_options), **self.spec.env},
            )
            await client.initialize_server(self._workspace, timeout_s=self._config.start_timeout_seconds)
        except BaseException as exc:
            await client.close()
            failure = self._failure_text(exc) if isinstance(exc, Exception) else "cancelled"
            if isinstance(exc, Exception):
                self._record_crash(f"start failed: {failure}")
                self._set_state(LanguageServerState.FAILED, f"start failed: {failure}")
            if isinstance(exc, TimeoutError):
                raise LanguageServerError(
                    f"{self.spec.name} did not answer initialize within {self._config.start_timeout_seconds:g} s",
                    cause=exc,
                ) from exc
            if isinstance(exc, LanguageServerError) or not isinstance(exc, Exception):
                raise
            raise LanguageServerError(f"{self.spec.name} failed to start: {failure}", cause=exc) from exc
        self._client = client
        self._docs = DocumentSync(client, max_open=self._config.max_open_documents)
        self._generation += 1
        self._settled = self.spec.name not in _SETTLE_ON_FIRST_OPEN
        self._set_state(LanguageServerState.READY, None)
        logger.info("%s ready in %.2f s (pid %s)", self.spec.name, time.monotonic() - started, client.pid)

    async def _gate(self, client: LspClient, deadline: float) -> None:
        """Wait (until ``deadline``) while the server reports progress; then not-ready."""
        if not self._settled:
            settle_until = time.monotonic() + _SETTLE_ON_FIRST_OPEN.get(self.spec.name, 0.0)
            while True:
                changed = client.progress_changed
                now = time.monotonic()
                if client.progress_seen or not client.alive or now >= settle_until:
                    break
                if now >= deadline:
                    raise self._not_ready()
                await _wait_event(changed, min(settle_until, deadline) - now)
            self._settled = True
        while True:
            changed = client.progress_changed  # taken before the check: no lost wake-up
            busy = client.active_progress or not client.workspace_loaded.is_set()
            if not busy or not client.alive:
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._not_ready()
            await _wait_event(changed, remaining)

    async def _discard(self, generation: int, failure: str) -> bool:
        """Record ``failure``, kill and forget the client of ``generation``.

        False (and nothing recorded) when that client is already gone: concurrent callers that saw
        the same crash count it once.
        """
        async with self._lock:
            if generation != self._generation or self._client is None:
                return False
            self._record_crash(failure)
            client, self._client, self._docs = self._client, None, None
            self._start_task = None
            client.kill()
            await client.close()
            self._set_state(LanguageServerState.FAILED, "restarting after a failure")
            return True

    # -- failures -------------------------------------------------------------------------------

    def _recent_crashes(self) -> deque[float]:
        cutoff = time.monotonic() - self._config.crash_window_seconds
        while self._crashes and self._crashes[0] < cutoff:
            self._crashes.popleft()
        return self._crashes

    def _record_crash(self, failure: str) -> None:
        self._crashes.append(time.monotonic())
        self._last_failure = failure

    def _check_crash_loop(self) -> None:
        crashes = self._recent_crashes()
        if len(crashes) > self._config.max_restarts:
            window = self._config.crash_window_seconds
            self._set_state(
                LanguageServerState.FAILED,
                f"crashed {len(crashes)} times in the last {window:g} s; not restarted again for now "
                f"(last failure: {self._last_failure})",
            )
            raise LanguageServerError(f"{self.spec.name}: {self._reason}")

    def _failure_text(self, exc: BaseException) -> str:
        if isinstance(exc, TimeoutError):
            return (
                f"no answer within {self._config.request_timeout_seconds:g} s and no answer to a ping "
                f"within {_PING_TIMEOUT_S:g} s (treated as hung and killed)"
            )
        return str(exc)

    def _failed_twice(self, failure: str, exc: BaseException) -> LanguageServerError:
        return LanguageServerError(
            f"{self.spec.name} failed twice in a row ({failure}); the call was retried once after a restart",
            cause=exc,
        )

    def _slow(self, exc: BaseException) -> LanguageServerSlow:
        return LanguageServerSlow(
            f"{self.spec.name} did not answer within {self._config.request_timeout_seconds:g} s; the request "
            "was cancelled. The server still answers, so it keeps running (nothing restarted): retry, ask a "
            "narrower question, or raise intel.request_timeout_seconds",
            cause=exc,
        )

    def _not_ready(self) -> LanguageServerNotReady:
        status = self.status()
        state = status.state
        doing = status.reason if status.reason and status.reason != state.value else None
        if state is LanguageServerState.READY:
            doing = "waiting for its first progress report"
        detail = f" ({doing})" if doing else ""
        return LanguageServerNotReady(
            f"{self.spec.name} is not ready: {state.value}{detail} for {status.seconds_in_state:.1f} s; "
            "the answer would be incomplete now, retry in a few seconds"
        )

    def _set_state(self, state: LanguageServerState, reason: str | None) -> None:
        if state is not self._state:
            self._since = time.monotonic()
        self._state = state
        self._reason = reason


def _describe_progress(client: LspClient) -> str:
    parts: list[str] = []
    for progress in list(client.active_progress.values())[:3]:
        text = progress.title
        if progress.message:
            text += f": {progress.message}"
        if progress.percentage is not None:
            text += f" {progress.percentage}%"
        parts.append(text)
    return "; ".join(parts) or "working"


def _exit_text(client: LspClient) -> str:
    code = client.process.returncode if client.process is not None else None
    tail = " | ".join(list(client.stderr_tail)[-3:])
    return f"the process exited (code {code})" + (f"; last stderr: {tail}" if tail else "")


async def _wait_event(event: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), max(0.0, seconds))
