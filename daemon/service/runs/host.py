"""Runs inside the daemon: one ``LocalRunService`` for the workspace and its ``runs/*`` methods.

A daemon component (``DaemonComponent``). The service opens over the daemon's own ``Workspace``
(``HostedWorkspace``: its index and language servers, no connection to itself) and closes with the
daemon (runs still in flight are interrupted and stay resumable). With a model configured
(``pipeline.models`` or a replay script) and ``pipeline.warm_start`` (the default) it opens in the
background once the first index pass is done, and warms what a run's start needs (``warm``: a compiled
graph, the retriever's query model, a spare worktree), so the first run pays none of it; otherwise on
the first ``runs/*`` request (a daemon no one asks for runs loads no models or LangGraph). A failed open
is retried by the next request.

Every progress event of every run goes to ``publish`` as a ``runs/progress`` notification; the daemon
sends it to the connections that asked with ``runs/subscribe``. A client subscribes before it launches
(or before it reads a run's stored events), so it misses nothing, and filters by run id; so a run
launched by one client can be followed, cancelled and reviewed from another. ``busy`` says whether runs
execute now: the daemon does not stop for idleness while they do. ``runs/start`` and ``runs/feedback``
are served per connection (``launch_handlers``): what the launching front lends the run (an editor's
file reader, a client's tools) is called back for over that connection (``daemon.service.runs.loans``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from daemon.config import Config
from daemon.core.ports import Workspace
from daemon.errors import ConflictError
from daemon.service.index.host import Publish
from daemon.service.runs.api import (
    RUN_PARAMS,
    CleanupParams,
    RunFeedbackParams,
    RunIdParams,
    RunStartParams,
    RunTrust,
    RunWaitParams,
    dumped,
)
from daemon.service.runs.loans import borrowed
from daemon.service.wire.api import Methods
from daemon.service.wire.rpc import DOMAIN_ERROR, Handler, RpcConnection, RpcError

if TYPE_CHECKING:
    from daemon.service.runs.local import LocalRunService
    from daemon.service.runs.port import RunFollow

__all__ = ["RunHost"]

logger = logging.getLogger(__name__)


class RunHost:
    """The daemon's runs (see the module docstring)."""

    def __init__(
        self,
        config: Config,
        workspace: Workspace,
        publish: Publish,
        *,
        ready: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        """``ready``: awaited before a warm start (the daemon's first index pass)."""
        self._config = config
        self._workspace = workspace
        self._publish = publish
        self._ready = ready
        self._warming: asyncio.Task[None] | None = None
        self._stack = contextlib.AsyncExitStack()
        self._lock = asyncio.Lock()
        self._service: LocalRunService | None = None
        self._pump: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """The warm start in the background when it is wanted (see the module docstring)."""
        pipeline = self._config.pipeline
        if pipeline.warm_start and (pipeline.models or pipeline.replay_script):
            self._warming = asyncio.create_task(self._warm(), name="ided-runs-warm")

    async def _warm(self) -> None:
        started = time.perf_counter()
        try:
            if self._ready is not None:
                await self._ready()
            service = await self._runs()
            await service.warm()
        except asyncio.CancelledError:
            raise
        except Exception:  # a failed warm start leaves the first request to open the service
            logger.warning("runs: the warm start failed; the first run opens the run service", exc_info=True)
            return
        logger.info("runs: warm (%.1f s)", time.perf_counter() - started)

    @property
    def warm(self) -> bool:
        """Whether the warm start has finished (the run service is open and warmed)."""
        return self._warming is not None and self._warming.done() and self._service is not None

    async def close(self) -> None:
        if self._warming is not None:
            self._warming.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._warming
        service, self._service = self._service, None
        if service is not None:
            await self._stack.aclose()  # interrupts the runs in flight; their run_finished events go out first
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump

    @property
    def busy(self) -> bool:
        """Whether a run executes now."""
        return self._service is not None and bool(self._service.in_flight())

    async def _runs(self) -> LocalRunService:
        async with self._lock:
            if self._service is None:
                from daemon.service.runs.local import LocalRunService  # LangGraph loads only when runs are asked for

                service = await self._stack.enter_async_context(
                    LocalRunService.open(
                        self._config, models_needed=True, client="other", workspace=self._workspace, long_lived=True
                    )
                )
                subscription = service.listen()
                self._stack.callback(subscription.close)
                self._pump = asyncio.create_task(self._forward(subscription), name="ided-run-progress")
                self._service = service
                logger.info("runs: the run service is open")
            return self._service

    async def _forward(self, events: Any) -> None:
        async for event in events:
            try:
                await self._publish(Methods.RUNS_PROGRESS, event)
            except Exception:  # a notification that could not go out loses one follower's event, not the run
                logger.exception("runs: could not send a progress event")

    # -- handlers -----------------------------------------------------------------------------

    def _on(self, method: str, answer: Callable[[LocalRunService, Any], Awaitable[Any]]) -> tuple[str, Handler]:
        model = RUN_PARAMS[method]

        async def handle(params: dict[str, Any]) -> Any:
            parsed = model.model_validate(params)
            try:
                return await answer(await self._runs(), parsed)
            except ConflictError as exc:  # the report travels with the code (``DaemonRunService`` rebuilds it)
                report = exc.report.model_dump(mode="json") if isinstance(exc.report, BaseModel) else None
                raise RpcError(DOMAIN_ERROR, str(exc), {"code": exc.code.value, "report": report}) from exc

        return method, handle

    def launch_handlers(self, conn: RpcConnection) -> Mapping[str, Handler]:
        """``runs/start`` and ``runs/feedback`` for one connection: what its front lends the run is called
        back for over it (``daemon.service.runs.loans``)."""

        def start(r: LocalRunService, p: RunStartParams) -> Awaitable[Any]:
            loan = borrowed(conn, p.loan, trusted=p.trusted)
            return _launched(r.start(p.run(), dry_run=p.dry_run, loan=loan))

        def feedback(r: LocalRunService, p: RunFeedbackParams) -> Awaitable[Any]:
            return _launched(r.feedback(p.run_id, p.text, loan=borrowed(conn, p.loan, trusted=p.trusted)))

        return dict([self._on(Methods.RUNS_START, start), self._on(Methods.RUNS_FEEDBACK, feedback)])

    def handlers(self) -> Mapping[str, Handler]:
        """Every ``runs/*`` method but the launches that lend (``launch_handlers``)."""
        on = self._on

        async def wait(runs: LocalRunService, p: RunWaitParams) -> Any:
            try:
                return await runs.wait(p.run_id, wait_seconds=p.wait_seconds)
            except TimeoutError:
                return None  # the client raises TimeoutError

        async def trust(runs: LocalRunService, _: BaseModel) -> RunTrust:
            refusal = await runs.trust_refusal()
            return RunTrust(
                refusal=refusal.message if refusal is not None else None,
                needs_trust=await runs.needs_trust(),
                repository_commands=await runs.repository_commands(),
                how_to_trust=await runs.how_to_trust(),
            )

        async def untrusted(runs: LocalRunService, p: RunIdParams) -> Any:
            return dumped(await runs.untrusted_commands(await runs.get(p.run_id)))

        async def cleanup(runs: LocalRunService, p: CleanupParams) -> Any:
            return await runs.cleanup(older_than_days=p.older_than_days)

        async def is_repository(runs: LocalRunService, _: BaseModel) -> Any:
            return {"is_repository": await runs.is_repository()}

        return dict(
            [
                on(Methods.RUNS_PREPARE, lambda r, p: r.prepare(p.run())),
                on(Methods.RUNS_EXECUTE, lambda r, p: _launched(r.execute(p.run_id, trusted=p.trusted))),
                on(Methods.RUNS_RESUME, lambda r, p: _launched(r.resume(p.run_id, trusted=p.trusted))),
                on(Methods.RUNS_CANCEL, lambda r, p: r.cancel(p.run_id)),
                on(Methods.RUNS_GET, lambda r, p: r.get(p.run_id)),
                on(Methods.RUNS_WAIT, wait),
                on(Methods.RUNS_LIST, lambda r, p: r.list_runs(p.limit, all_workspaces=p.all_workspaces)),
                on(Methods.RUNS_DECISIONS, lambda r, p: r.decisions(p.run_id)),
                on(Methods.RUNS_EVENTS, lambda r, p: r.events(p.run_id)),
                on(Methods.RUNS_MISSING_MODELS, lambda r, p: r.missing_models(p.plan)),
                on(Methods.RUNS_UNTRUSTED_COMMANDS, untrusted),
                on(Methods.RUNS_TRUST, trust),
                on(Methods.RUNS_DIFF, lambda r, p: r.diff(p.run_id)),
                on(Methods.RUNS_ACCEPT, lambda r, p: r.accept(p.run_id, selection=p.selection)),
                on(Methods.RUNS_REJECT, lambda r, p: r.reject(p.run_id)),
                on(Methods.RUNS_ROLLBACK, lambda r, p: r.rollback(p.run_id)),
                on(Methods.RUNS_CLEANUP, cleanup),
                on(Methods.RUNS_BRANCH, lambda r, p: r.branch(p.run_id)),
                on(Methods.RUNS_PEEK, lambda r, p: r.peek(p.run_id)),
                on(Methods.RUNS_IS_REPOSITORY, is_repository),
            ]
        )


async def _launched(follow: Awaitable[RunFollow]) -> Any:
    started = await follow
    started.close()  # its events reach clients through runs/progress
    return started.record
