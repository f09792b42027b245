"""The daemon-client transport of the ``RunService`` port: runs the workspace daemon executes.

``DaemonRunService.attach(config, client=..., start=...)`` opens one connection to the workspace daemon,
subscribes it to ``runs/progress`` and answers every port call with a ``runs/*`` method
(``daemon.service.runs.api``). Each launch (and ``follow``) listens to the connection's progress events
before it asks the daemon, so a ``RunFollow`` misses none of its run's events; a run launched by any
client of the daemon can be followed, cancelled and reviewed through it.

What a ``RunLoan`` lends that cannot cross the socket (an editor's file reader, a client's tool objects)
stays here at a ``LoanDesk`` (``daemon.service.runs.loans``) while the run is followed: the daemon's
run calls back for it over this connection; ``trusted`` is sent. It attaches only to a daemon whose run settings
and API keys (``run_api.settings_digest``) are this front's, else ``daemon_running``: a run never silently uses
another model or script than the front was configured with. The daemon's coded errors come back as
``DaemonError`` with the same code (``WorkspaceUntrusted`` for ``workspace_untrusted``, ``ConflictError``
with its report for ``change_conflict``). A lost
connection ends every follow with a ``DaemonError``; the next call attaches again (starting the daemon
with ``start``), re-checks its run settings and subscribes anew: a restarted daemon serves the same
service, and its runs (resumable) can be followed again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import BaseModel, TypeAdapter

from daemon.config import Config
from daemon.core.review_models import (
    AcceptResult,
    AcceptSelection,
    ChangeSet,
    CleanupReport,
    ConflictReport,
    RollbackResult,
    RunBranch,
)
from daemon.core.run_models import DecisionEntry, ExecutionPlan, ExecutionProgress, RunRecord, RunStatus
from daemon.errors import ConflictError, DaemonError, ErrorCode, WorkspaceUntrusted
from daemon.service.runs.api import (
    RUN_CHANGES,
    CleanupParams,
    MissingModelsParams,
    RunAcceptParams,
    RunFeedbackParams,
    RunIdParams,
    RunLaunchParams,
    RunListParams,
    RunStartParams,
    RunTrust,
    RunWaitParams,
    commands_adapter,
    settings_digest,
)
from daemon.service.runs.loans import LoanDesk, LoanSpec
from daemon.service.runs.port import RunFollow, RunLoan, RunService, RunStart, caught_up
from daemon.service.wire.api import Methods
from daemon.service.wire.client import ClientKind, DaemonClient
from daemon.service.wire.link import DaemonRefusal, Reattaching, ask

if TYPE_CHECKING:
    from daemon.core.run_models import RunCommands  # LangChain: a front that runs nothing loads none

__all__ = ["DaemonRunService"]

logger = logging.getLogger(__name__)

R = TypeVar("R", bound=BaseModel)

LAUNCH_WAIT_S = 3600.0
"""Upper bound for a launch (selection and planning ask the orchestrator model before it answers)."""

_RECORDS = TypeAdapter(list[RunRecord])
_DECISIONS = TypeAdapter(list[DecisionEntry])
_EVENTS = TypeAdapter(list[ExecutionProgress])
_NAMES = TypeAdapter(list[str])
_LOST = object()


class _Listener:
    """The connection's progress events from the moment it was made, until closed or the connection is lost."""

    def __init__(self, owner: DaemonRunService) -> None:
        self._owner = owner
        self.queue: asyncio.Queue[ExecutionProgress | object] = asyncio.Queue()

    async def events(self) -> AsyncIterator[ExecutionProgress]:
        while True:
            item = await self.queue.get()
            if item is _LOST:
                raise DaemonError(f"lost the connection to the daemon of {self._owner.workspace}")
            yield cast("ExecutionProgress", item)

    def close(self) -> None:
        self._owner.listeners.discard(self)


class DaemonRunService(RunService):
    """A ``RunService`` the workspace daemon answers (see the module docstring)."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self._link: Reattaching | None = None
        self.listeners: set[_Listener] = set()
        self._watches: set[asyncio.Task[None]] = set()
        self._how_to_trust: str | None = None
        self._desk = LoanDesk()

    @classmethod
    async def attach(
        cls, config: Config, *, client: ClientKind, start: bool, overrides: Mapping[str, Any] | None = None
    ) -> DaemonRunService:
        """Attach to the workspace's daemon (``start``: spawn one, given ``overrides``, when none runs; else
        ``DaemonUnavailable``); a call after the connection was lost attaches the same way again."""
        service = cls(config)

        async def attach() -> DaemonClient:
            return await service._subscribed(
                await DaemonClient.attach(
                    config, client=client, start=start, on_notification=service._notified, overrides=overrides
                )
            )

        service._link = Reattaching(config.workspace, attach, await attach())
        return service

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
        """The pid of the daemon that runs the runs (0 before ``attach``)."""
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
            listener.queue.put_nowait(event)

    async def _lost(self, connection: DaemonClient) -> None:
        await connection.wait_closed()
        for listener in list(self.listeners):
            listener.queue.put_nowait(_LOST)

    def _listen(self) -> _Listener:
        listener = _Listener(self)
        self.listeners.add(listener)
        return listener

    async def _raw(self, method: str, params: BaseModel | None = None, *, wait_s: float = 120) -> Any:
        if self._link is None:
            raise DaemonError(f"not attached to the daemon of {self._config.workspace}")
        try:
            return await ask(self._link, method, params, wait_s=wait_s, retry=method not in RUN_CHANGES)
        except DaemonRefusal as refusal:
            raise await self._error(refusal) from None

    async def _error(self, refusal: DaemonRefusal) -> DaemonError:
        if refusal.code is ErrorCode.WORKSPACE_UNTRUSTED:
            return WorkspaceUntrusted(refusal.message, how_to_trust=await self.how_to_trust())
        report = refusal.data.get("report")
        if refusal.code is ErrorCode.CHANGE_CONFLICT and isinstance(report, dict):
            return ConflictError(refusal.message, report=ConflictReport.model_validate(report))
        return refusal

    async def _call(self, method: str, params: BaseModel | None, result: type[R], *, wait_s: float = 120) -> R:
        return result.model_validate(await self._raw(method, params, wait_s=wait_s))

    async def _launch(self, method: str, params: BaseModel, loan: LoanSpec | None = None) -> RunFollow:
        listener = self._listen()  # before the launch: the run's first events are not missed

        def close() -> None:
            listener.close()
            self._desk.give_back(loan)

        try:
            record = await self._call(method, params, RunRecord, wait_s=LAUNCH_WAIT_S)
        except BaseException:
            close()
            raise
        return RunFollow(record, listener.events(), close)

    # -- launching and following ------------------------------------------------------------------

    async def start(self, run: RunStart, *, dry_run: bool = False, loan: RunLoan | None = None) -> RunFollow:
        trusted = loan.trusted if loan is not None else None
        lent = self._desk.lend(loan)
        params = RunStartParams.of(run, dry_run=dry_run, trusted=trusted, loan=lent)
        return await self._launch(Methods.RUNS_START, params, lent)

    async def execute(self, run_id: str, *, trusted: bool | None = None) -> RunFollow:
        return await self._launch(Methods.RUNS_EXECUTE, RunLaunchParams(run_id=run_id, trusted=trusted))

    async def resume(self, run_id: str, *, trusted: bool | None = None) -> RunFollow:
        return await self._launch(Methods.RUNS_RESUME, RunLaunchParams(run_id=run_id, trusted=trusted))

    async def feedback(self, run_id: str, text: str, *, loan: RunLoan | None = None) -> RunFollow:
        trusted = loan.trusted if loan is not None else None
        lent = self._desk.lend(loan)
        params = RunFeedbackParams(run_id=run_id, text=text, trusted=trusted, loan=lent)
        return await self._launch(Methods.RUNS_FEEDBACK, params, lent)

    async def follow(self, run_id: str) -> RunFollow:
        listener = self._listen()  # before the stored events are read: nothing falls between
        try:
            record = await self.get(run_id)
            stored = await self.events(run_id)
        except BaseException:
            listener.close()
            raise
        ended = record.status is not RunStatus.RUNNING
        return RunFollow(record, caught_up(stored, listener.events(), ended=ended), listener.close)

    # -- planning and trust -----------------------------------------------------------------------

    async def prepare(self, run: RunStart) -> RunRecord:
        return await self._call(Methods.RUNS_PREPARE, RunStartParams.of(run), RunRecord, wait_s=LAUNCH_WAIT_S)

    async def missing_models(self, plan: ExecutionPlan) -> list[str]:
        return _NAMES.validate_python(await self._raw(Methods.RUNS_MISSING_MODELS, MissingModelsParams(plan=plan)))

    async def untrusted_commands(self, record: RunRecord) -> RunCommands | None:
        answer = await self._raw(Methods.RUNS_UNTRUSTED_COMMANDS, RunIdParams(run_id=record.run_id))
        return commands_adapter().validate_python(answer)

    async def _trust(self) -> RunTrust:
        trust = await self._call(Methods.RUNS_TRUST, None, RunTrust)
        self._how_to_trust = trust.how_to_trust
        return trust

    async def trust_refusal(self) -> WorkspaceUntrusted | None:
        return (await self._trust()).refused()

    async def needs_trust(self) -> bool:
        return (await self._trust()).needs_trust

    async def repository_commands(self) -> dict[str, tuple[str, str]]:
        return (await self._trust()).repository_commands

    async def how_to_trust(self) -> str:
        if self._how_to_trust is None:
            return (await self._trust()).how_to_trust
        return self._how_to_trust

    # -- cancelling and inspecting ----------------------------------------------------------------

    async def cancel(self, run_id: str) -> RunRecord:
        return await self._call(Methods.RUNS_CANCEL, RunIdParams(run_id=run_id), RunRecord)

    async def get(self, run_id: str) -> RunRecord:
        return await self._call(Methods.RUNS_GET, RunIdParams(run_id=run_id), RunRecord)

    async def wait(self, run_id: str, *, wait_seconds: float | None = None) -> RunRecord:
        bound = LAUNCH_WAIT_S * 24 if wait_seconds is None else wait_seconds + 30
        answer = await self._raw(
            Methods.RUNS_WAIT, RunWaitParams(run_id=run_id, wait_seconds=wait_seconds), wait_s=bound
        )
        if answer is None:
            raise TimeoutError(f"run {run_id} did not end within {wait_seconds}s")
        return RunRecord.model_validate(answer)

    async def list_runs(self, limit: int = 50, *, all_workspaces: bool = False) -> list[RunRecord]:
        params = RunListParams(limit=limit, all_workspaces=all_workspaces)
        return _RECORDS.validate_python(await self._raw(Methods.RUNS_LIST, params))

    async def decisions(self, run_id: str) -> list[DecisionEntry]:
        return _DECISIONS.validate_python(await self._raw(Methods.RUNS_DECISIONS, RunIdParams(run_id=run_id)))

    async def events(self, run_id: str) -> list[ExecutionProgress]:
        return _EVENTS.validate_python(await self._raw(Methods.RUNS_EVENTS, RunIdParams(run_id=run_id)))

    # -- review -----------------------------------------------------------------------------------

    async def diff(self, run_id: str) -> ChangeSet:
        return await self._call(Methods.RUNS_DIFF, RunIdParams(run_id=run_id), ChangeSet)

    async def accept(self, run_id: str, *, selection: AcceptSelection | None = None) -> AcceptResult:
        return await self._call(Methods.RUNS_ACCEPT, RunAcceptParams(run_id=run_id, selection=selection), AcceptResult)

    async def reject(self, run_id: str) -> RunBranch:
        return await self._call(Methods.RUNS_REJECT, RunIdParams(run_id=run_id), RunBranch)

    async def rollback(self, run_id: str) -> RollbackResult:
        return await self._call(Methods.RUNS_ROLLBACK, RunIdParams(run_id=run_id), RollbackResult)

    async def cleanup(self, *, older_than_days: int | None = None) -> CleanupReport:
        return await self._call(Methods.RUNS_CLEANUP, CleanupParams(older_than_days=older_than_days), CleanupReport)

    async def branch(self, run_id: str) -> RunBranch:
        return await self._call(Methods.RUNS_BRANCH, RunIdParams(run_id=run_id), RunBranch)

    async def peek(self, run_id: str) -> ChangeSet:
        return await self._call(Methods.RUNS_PEEK, RunIdParams(run_id=run_id), ChangeSet)

    async def is_repository(self) -> bool:
        return bool((await self._raw(Methods.RUNS_IS_REPOSITORY))["is_repository"])
