"""Runs inside the daemon: one ``RunWork`` for the workspace, serving every declared run operation.

A daemon component (``DaemonComponent``). The work opens over the daemon's own ``Workspace``
(``HostedWorkspace``: its index and language servers, no connection to itself) and closes with the
daemon (runs still in flight are interrupted and stay resumable). With a model configured
(``pipeline.models`` or a replay script) and ``pipeline.warm_start`` (the default) it opens in the
background once the first index pass is done, and warms what a run's start needs (``RunWork.warm``: a
compiled graph, the retriever's query model, a spare worktree), so the first run pays none of it;
otherwise on the first ``runs/*`` request (a daemon no one asks for runs loads no models or LangGraph). A
failed open is retried by the next request.

The handlers are derived from the declarations (``daemon.service.runs.service.OPERATIONS``): each
``runs/<name>`` validates the declaration's params, runs its work and answers its result as JSON; a
launch answers the launched run's record. They are made per connection (``handlers_for``): what a
launching front lends its run (an editor's file reader, a client's tools) is borrowed over that
connection (``daemon.service.runs.loans``). Coded errors keep what the client rebuilds them from: a
conflict's report, the command that trusts the workspace, a ``wait`` that ran out.

Every progress event of every run goes to ``publish`` as a ``runs/progress`` notification; the daemon
sends it to the connections that asked with ``runs/subscribe``. A client subscribes before it launches
(or before it reads a run's stored events), so it misses nothing, and filters by run id; so a run
launched by one client can be followed, cancelled and reviewed from another. ``busy`` says whether runs
execute now: the daemon does not stop for idleness while they do.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import BaseModel

from daemon.config import Config
from daemon.core.ports import Workspace
from daemon.errors import ConflictError, WorkspaceUntrusted
from daemon.service.index.host import Publish
from daemon.service.runs.loans import borrowed
from daemon.service.runs.operation import RunLaunch, RunOperation
from daemon.service.runs.params import Lending
from daemon.service.runs.service import OPERATIONS
from daemon.service.wire.api import Methods
from daemon.service.wire.rpc import DOMAIN_ERROR, Handler, RpcConnection, RpcError

if TYPE_CHECKING:
    from daemon.service.runs.work import RunWork

__all__ = ["RunHost"]

logger = logging.getLogger(__name__)

P = TypeVar("P")


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
        self._work: RunWork | None = None
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
            work = await self._runs()
            await work.warm()
        except asyncio.CancelledError:
            raise
        except Exception:  # a failed warm start leaves the first request to open the run service
            logger.warning("runs: the warm start failed; the first run opens the run service", exc_info=True)
            return
        logger.info("runs: warm (%.1f s)", time.perf_counter() - started)

    @property
    def warm(self) -> bool:
        """Whether the warm start has finished (the run service is open and warmed)."""
        return self._warming is not None and self._warming.done() and self._work is not None

    async def close(self) -> None:
        if self._warming is not None:
            self._warming.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._warming
        work, self._work = self._work, None
        if work is not None:
            await self._stack.aclose()  # interrupts the runs in flight; their run_finished events go out first
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump

    @property
    def busy(self) -> bool:
        """Whether a run executes now."""
        return self._work is not None and bool(self._work.in_flight())

    async def _runs(self) -> RunWork:
        async with self._lock:
            if self._work is None:
                from daemon.service.runs.work import RunWork  # LangGraph loads only when runs are asked for

                work = await self._stack.enter_async_context(
                    RunWork.open(
                        self._config, models_needed=True, client="other", workspace=self._workspace, long_lived=True
                    )
                )
                subscription = work.listen()
                self._stack.callback(subscription.close)
                self._pump = asyncio.create_task(self._forward(subscription), name="ided-run-progress")
                self._work = work
                logger.info("runs: the run service is open")
            return self._work

    async def _forward(self, events: Any) -> None:
        async for event in events:
            try:
                await self._publish(Methods.RUNS_PROGRESS, event)
            except Exception:  # a notification that could not go out loses one follower's event, not the run
                logger.exception("runs: could not send a progress event")

    # -- handlers, derived from the declarations ----------------------------------------------------

    def handlers(self) -> Mapping[str, Handler]:
        """None for every connection alike: every run operation is served per connection (``handlers_for``)."""
        return {}

    def handlers_for(self, conn: RpcConnection) -> Mapping[str, Handler]:
        """Every declared run operation as ``runs/<name>``, for one connection."""
        return {op.method: self._handler(op, conn) for op in OPERATIONS.values()}

    def _handler(self, op: RunOperation[..., P, Any] | RunLaunch[..., P], conn: RpcConnection) -> Handler:
        async def handle(raw: dict[str, Any]) -> Any:
            params = _borrowing(op.parse(raw), conn)
            work = await self._runs()
            try:
                answer = await op.work(work, params)
            except ConflictError as exc:  # the report travels with the code (the client rebuilds it)
                report = exc.report.model_dump(mode="json") if isinstance(exc.report, BaseModel) else None
                raise RpcError(DOMAIN_ERROR, str(exc), {"code": exc.code.value, "report": report}) from exc
            except WorkspaceUntrusted as exc:
                data = {"code": exc.code.value, "how_to_trust": exc.how_to_trust}
                raise RpcError(DOMAIN_ERROR, str(exc), data) from exc
            except TimeoutError as exc:
                raise RpcError(DOMAIN_ERROR, str(exc) or f"{op.method} timed out", {"timeout": True}) from exc
            return op.result_adapter.dump_python(answer, mode="json")

        return handle


def _borrowing(params: P, conn: RpcConnection) -> P:
    """``params`` with the loan its front lent (``lent``) borrowed over ``conn``; a loan sent as such is dropped."""
    if not isinstance(params, Lending):
        return params
    return cast("P", dataclasses.replace(params, loan=borrowed(conn, params.lent)))
