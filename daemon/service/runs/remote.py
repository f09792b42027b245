"""The daemon transport of the run service: ``DaemonRuns`` sends each run operation to the workspace daemon.

``attach_runs(config, client=..., start=...)`` opens one connection to the workspace daemon, subscribes
it to ``runs/progress`` and answers a ``RunService`` whose every operation is sent as its ``runs/<name>``
method (the declaration's params as JSON, its result validated back with the declaration's type). Each
launch (and ``follow``) listens to the connection's progress events before it asks the daemon, so a
``RunFollow`` misses none of its run's events; a run launched by any client of the daemon can be
followed, cancelled and reviewed through it.

What a ``RunLoan`` lends that cannot cross the socket (an editor's file reader, a client's tool objects)
stays here at a ``LoanDesk`` (``daemon.service.runs.loans``) while the run is followed: the daemon's
run calls back for it over this connection. It attaches only to a daemon whose run settings and API keys
(``settings_digest``) are this front's, else ``daemon_running``: a run never silently uses another model
or script than the front was configured with. The daemon's coded errors come back as ``DaemonError`` with
the same code (``WorkspaceUntrusted`` for ``workspace_untrusted``, ``ConflictError`` with its report for
``change_conflict``, ``TimeoutError`` for a ``wait`` that ran out). A lost connection ends every follow
with a ``DaemonError``; the next call attaches again (starting the daemon with ``start``), re-checks its
run settings and subscribes anew: a restarted daemon serves the same service, and its runs (resumable)
can be followed again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from daemon.config import Config
from daemon.core.review_models import ConflictReport
from daemon.core.run_models import ExecutionProgress
from daemon.errors import ConflictError, DaemonError, ErrorCode, WorkspaceUntrusted
from daemon.service.runs.follow import RunFollow
from daemon.service.runs.loans import LoanDesk
from daemon.service.runs.operation import RunLaunch, RunOperation
from daemon.service.runs.params import Lending
from daemon.service.runs.service import RunService
from daemon.service.runs.settings import settings_digest
from daemon.service.wire.api import Methods
from daemon.service.wire.client import ClientKind, DaemonClient
from daemon.service.wire.link import DaemonRefusal, Reattaching, ask

__all__ = ["DaemonRuns", "attach_runs"]

logger = logging.getLogger(__name__)

P = TypeVar("P")
R = TypeVar("R")

_LOST = object()


class _Listener:
    """The connection's progress events from the moment it was made, until closed or the connection is lost."""

    def __init__(self, owner: DaemonRuns, run_id: str | None) -> None:
        self._owner = owner
        self._run_id = run_id
        self.queue: asyncio.Queue[ExecutionProgress | object] = asyncio.Queue()

    def offer(self, event: ExecutionProgress) -> None:
        if self._run_id is None or event.run_id == self._run_id:
            self.queue.put_nowait(event)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> ExecutionProgress:
        item = await self.queue.get()
        if item is _LOST:
            raise DaemonError(f"lost the connection to the daemon of {self._owner.workspace}")
        return cast("ExecutionProgress", item)

    def close(self) -> None:
        self._owner.listeners.discard(self)


class DaemonRuns:
    """The ``RunTransport`` over one connection to the workspace daemon (see the module docstring)."""

    in_daemon = True

    def __init__(self, config: Config) -> None:
        self._config = config
        self._link: Reattaching | None = None
        self.listeners: set[_Listener] = set()
        self._watches: set[asyncio.Task[None]] = set()
        self._desk = LoanDesk()

    async def attach(self, *, client: ClientKind, start: bool, overrides: Mapping[str, Any] | None) -> None:
        """Attach to the workspace's daemon (see ``attach_runs``)."""
        config = self._config

        async def attach() -> DaemonClient:
            return await self._subscribed(
                await DaemonClient.attach(
                    config, client=client, start=start, on_notification=self._notified, overrides=overrides
                )
            )

        self._link = Reattaching(config.workspace, attach, await attach())

    async def _subscribed(self, connection: DaemonClient) -> DaemonClient:
        """``connection`` once its daemon runs with this front's run settings and sends it the runs' progress."""
        try:
            theirs = connection.hello.get("runs_settings")
            if theirs != settings_digest(self._config):
                raise DaemonError(
                    f"the daemon of {self._config.workspace} (pid {connection.daemon_pid}) runs with other run "
                    "settings (pipeline, agents, runs, vcs, retrieval) or other API keys in its environment than "
                    "this front: `ided stop` stops it",
                    code=ErrorCode.DAEMON_RUNNING,
                )
            connection.add_handlers(self._desk.handlers())
            await connection.call(Methods.RUNS_SUBSCRIBE)
        except BaseException:
            await connection.close()
            raise
        watch = asyncio.create_task(self._lost(connection), name="ided-runs-connection")
        self._watches.add(watch)
        watch.add_done_callback(self._watches.discard)
        return connection

    @property
    def workspace(self) -> str:
        return self._config.workspace

    @property
    def daemon_pid(self) -> int:
        """The pid of the daemon that runs the runs (0 before it attached)."""
        current = self._link.current if self._link is not None else None
        return current.daemon_pid if current is not None else 0

    async def aclose(self) -> None:
        for watch in list(self._watches):
            watch.cancel()
        if self._link is not None:
            await self._link.close()

    async def _notified(self, method: str, params: dict[str, Any]) -> None:
        if method != Methods.RUNS_PROGRESS:
            return
        event = ExecutionProgress.model_validate(params)
        for listener in list(self.listeners):
            listener.offer(event)

    async def _lost(self, connection: DaemonClient) -> None:
        await connection.wait_closed()
        for listener in list(self.listeners):
            listener.queue.put_nowait(_LOST)

    # -- the transport ---------------------------------------------------------------------------

    def listen(self, run_id: str | None = None) -> _Listener:
        listener = _Listener(self, run_id)
        self.listeners.add(listener)
        return listener

    async def call(self, op: RunOperation[..., P, R], params: P) -> R:
        return op.result_adapter.validate_python(await self._ask(op.method, op.dump(params), op, params))

    async def launch(self, op: RunLaunch[..., P], params: P) -> RunFollow:
        listener = self.listen()  # before the launch: the run's first events are not missed
        wire = op.dump(params)  # a lent loan is left out: its objects stay at the desk, what they are is sent
        lent = self._desk.lend(params.loan) if isinstance(params, Lending) else None
        if lent is not None:
            wire["lent"] = lent.model_dump(mode="json")

        def close() -> None:
            listener.close()
            self._desk.give_back(lent)

        try:
            record = op.result_adapter.validate_python(await self._ask(op.method, wire, op, params))
        except BaseException:
            close()
            raise
        return RunFollow(record, listener, close)

    async def _ask(
        self, method: str, wire: dict[str, Any], op: RunOperation[..., P, Any] | RunLaunch[..., P], params: P
    ) -> Any:
        if self._link is None:
            raise DaemonError(f"not attached to the daemon of {self._config.workspace}")
        try:
            return await ask(self._link, method, wire, wait_s=op.wait_s(params), retry=not op.changes)
        except DaemonRefusal as refusal:
            raise _error(refusal) from None


def _error(refusal: DaemonRefusal) -> Exception:
    """The daemon's refusal as the error the work raised there."""
    data = refusal.data
    if refusal.code is ErrorCode.WORKSPACE_UNTRUSTED:
        return WorkspaceUntrusted(refusal.message, how_to_trust=str(data.get("how_to_trust", "ided trust")))
    report = data.get("report")
    if refusal.code is ErrorCode.CHANGE_CONFLICT and isinstance(report, dict):
        return ConflictError(refusal.message, report=ConflictReport.model_validate(report))
    if data.get("timeout") is True:
        return TimeoutError(refusal.message)
    return refusal


async def attach_runs(
    config: Config, *, client: ClientKind, start: bool, overrides: Mapping[str, Any] | None = None
) -> RunService:
    """The run service the workspace's daemon answers (``start``: spawn one, given ``overrides``, when none runs;
    else ``DaemonUnavailable``); a call after the connection was lost attaches the same way again. Close it
    with ``aclose``."""
    transport = DaemonRuns(config)
    await transport.attach(client=client, start=start, overrides=overrides)
    return RunService(transport)
