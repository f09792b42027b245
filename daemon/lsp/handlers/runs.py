"""``ided/run/*``: start and cancel workflow runs, stream their progress, review their changes.

Every method goes through the connection's run service (``daemon.service.runs.service``), opened on first
use by ``daemon.service.runs.opening.open_run_service``: the workspace daemon's (the server attached to it
at ``initialized``; the runs execute there, with its language servers, and go on when the editor
leaves), else one in the LSP process (no daemon, or one with other run settings); closed when the
server stops: ``start`` launches a run and forwards the events of its ``RunFollow`` as
``ided/run/progress`` notifications until it ends; ``feedback`` answers a run's review through the
service's ``feedback`` (as ``ided runs feedback`` and ACP do) and streams the same way; ``cancel`` and
the review methods are service calls. A conflict on accept/rollback is error -32803 whose ``data``
carries ``{"code": "change_conflict", "report": {...}}``; other refusals carry the ided error code.

LSP cannot ask the user, so a code-mode run in a workspace whose repository defines commands
(``.ided.toml`` ``[agents.commands]``, a workflow file in it) that the user has not trusted is refused
with ``workspace_untrusted`` (``data.how_to_trust``: ``ided trust PATH``); ask-mode and dry runs work.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import attrs
from attrs import AttrsInstance
from lsprotocol import types
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from daemon.config import Config
from daemon.core.review_models import AcceptSelection, ChangeSet, ConflictReport, KeptFile
from daemon.core.run_models import ExecutionPlan, ExecutionProgress, RunRecord
from daemon.errors import ConflictError, DaemonError, WorkspaceUntrusted
from daemon.lsp.protocol import LspMethods
from daemon.lsp.run_protocol import (
    RunAcceptParams,
    RunAcceptResult,
    RunCommitItem,
    RunDiffResult,
    RunFeedbackParams,
    RunFileItem,
    RunGraph,
    RunGraphEdge,
    RunGraphNode,
    RunGraphStage,
    RunIdParams,
    RunProgressParams,
    RunRejectResult,
    RunRollbackResult,
    RunStartParams,
    RunStartResult,
    RunStatusResult,
)
from daemon.lsp.session import REQUEST_FAILED
from daemon.service.pipeline.workflow_catalog import NODE_NAMES, extra_nodes, plan_routes
from daemon.service.runs.follow import RunFollow
from daemon.service.runs.opening import open_run_service
from daemon.service.runs.params import RunStart
from daemon.service.runs.service import RunService

if TYPE_CHECKING:
    from daemon.lsp.server import IdedLanguageServer

__all__ = ["LspRunHost", "register"]

logger = logging.getLogger(__name__)

START_WAIT_S = 300.0
"""Upper bound for ``ided/run/start`` to answer: selection may ask the orchestrator model."""


def _failure(exc: DaemonError) -> JsonRpcException:
    data: dict[str, Any] = {"code": exc.code.value}
    if isinstance(exc, ConflictError) and isinstance(exc.report, ConflictReport):
        data["report"] = exc.report.model_dump(mode="json")
    if isinstance(exc, WorkspaceUntrusted):
        data["how_to_trust"] = exc.how_to_trust
    return JsonRpcException(code=REQUEST_FAILED, message=str(exc), data=data)


def _diff_result(changes: ChangeSet, repo_root: Path) -> RunDiffResult:
    return _wire(
        RunDiffResult,
        changes,
        commits=[_wire(RunCommitItem, c) for c in changes.commits],
        files=[_wire(RunFileItem, f, uri=(repo_root / f.path).as_uri()) for f in changes.files],
    )


def _start_result(record: RunRecord, notes: list[str]) -> RunStartResult:
    """``notes`` plus the plan's: the workflow file's fields in the specification's spelling (mapped, informational)."""
    plan = record.plan
    return RunStartResult(
        run_id=record.run_id,
        status=record.status.value,
        workflow=record.workflow,
        stages=[s.stage_id for s in plan.stages] if plan else [],
        skipped=[s.stage_id for s in plan.skipped] if plan else [],
        notes=[*notes, *(str(n) for n in plan.notes)] if plan else notes,
        graph=_graph(plan) if plan else None,
    )


def _graph(plan: ExecutionPlan) -> RunGraph:
    """The plan's routes (``plan_routes``: a stage's retry of itself, the default, is no edge of its own), with
    the reflector and evaluator as the pipeline's graph has them when the workflow enables them."""
    return RunGraph(
        entry=plan.entry,
        stages=[RunGraphStage(stage_id=s.stage_id, name=s.name) for s in plan.stages],
        skipped=[RunGraphStage(stage_id=s.stage_id, name=s.name, reason=s.reason) for s in plan.skipped],
        edges=[RunGraphEdge(source=r.source, target=r.target, outcome=r.outcome) for r in plan_routes(plan)],
        nodes=[RunGraphNode(node_id=n, name=NODE_NAMES[n]) for n in extra_nodes(plan)],
    )


class LspRunHost:
    """The LSP connection's run service (opened on first use, closed when the server stops) and the tasks
    that forward the progress of the runs it launched."""

    def __init__(self, server: IdedLanguageServer) -> None:
        self._server = server
        self._tasks: set[asyncio.Task[None]] = set()
        self._opened: asyncio.Task[RunService] | None = None
        self._stack = contextlib.AsyncExitStack()
        server.on_stop(self.aclose)

    def config(self) -> Config:
        config = self._server.session.config
        if config is None:
            reason = self._server.session.failure or "no initialize request yet"
            raise JsonRpcException(code=REQUEST_FAILED, message=f"ided: no workspace configuration ({reason})")
        return config

    async def service(self) -> RunService:
        """The workspace's run service; ided errors become JSON-RPC errors carrying their code (a failed
        open is tried again by the next request)."""
        config = self.config()
        if self._opened is None or (self._opened.done() and self._opened.exception() is not None):
            self._opened = asyncio.create_task(self._open(config), name="ided-lsp-runs-open")
        try:
            return await asyncio.shield(self._opened)
        except DaemonError as exc:
            raise _failure(exc) from exc

    async def _open(self, config: Config) -> RunService:
        try:
            await self._server.session.client()  # the attach at `initialized` (which starts the daemon) first
        except JsonRpcException as exc:
            logger.info("no workspace daemon for runs: %s", exc)
        opened = await self._stack.enter_async_context(open_run_service(config, daemon="running", client="lsp"))
        if not opened.in_daemon:
            logger.info("runs execute in the LSP process: %s", opened.note)
        return opened.service

    async def aclose(self) -> None:
        """Stop forwarding and close the service (runs in this process are interrupted and stay resumable; the
        daemon's go on)."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._stack.aclose()

    async def start(self, params: RunStartParams) -> RunStartResult:
        if params.mode not in ("ask", "code"):
            raise JsonRpcInvalidParams(
                f"invalid params for {LspMethods.RUN_START}: mode: 'ask' or 'code', got {params.mode!r}"
            )
        runs = await self.service()

        async def launch() -> RunFollow:
            if params.mode == "code" and not params.dry_run:
                await _refuse_untrusted(runs)
            return await runs.start(
                RunStart(
                    request=params.request,
                    workflow=params.workflow,
                    mode="ask" if params.mode == "ask" else "code",
                    include_uncommitted=params.include_uncommitted,
                ),
                dry_run=params.dry_run,
            )

        return await self._launch(launch, follow=not params.dry_run)

    async def feedback(self, params: RunFeedbackParams) -> RunStartResult:
        """The service's ``feedback`` (as ``ided runs feedback`` and ACP): progress streams as for ``start``."""
        if not params.text.strip():
            raise JsonRpcInvalidParams(f"invalid params for {LspMethods.RUN_FEEDBACK}: text: say what to change")
        runs = await self.service()

        async def launch() -> RunFollow:
            await _refuse_untrusted(runs)
            return await runs.feedback(params.run_id, params.text)

        return await self._launch(launch, follow=True)

    async def _launch(self, launch: Callable[[], Awaitable[RunFollow]], *, follow: bool) -> RunStartResult:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[RunStartResult] = loop.create_future()
        # The run's notifications go out after this request's response: the server writes the response in a
        # done-callback of the request's task registered before this one, so this one fires after it.
        answered: asyncio.Future[None] = loop.create_future()
        request = asyncio.current_task()
        if request is None:
            answered.set_result(None)
        else:
            request.add_done_callback(lambda _: answered.done() or answered.set_result(None))
        task = asyncio.create_task(self._drive(launch, ready, answered, follow=follow), name="ided-lsp-run")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        try:
            return await asyncio.wait_for(asyncio.shield(ready), START_WAIT_S)
        except DaemonError as exc:
            raise _failure(exc) from exc
        except TimeoutError:
            raise JsonRpcException(code=REQUEST_FAILED, message="ided: the run did not start in time") from None

    async def _drive(
        self,
        launch: Callable[[], Awaitable[RunFollow]],
        ready: asyncio.Future[RunStartResult],
        answered: asyncio.Future[None],
        *,
        follow: bool,
    ) -> None:
        try:
            async with await launch() as run:
                ready.set_result(_start_result(run.record, []))
                if follow:
                    await answered  # the client knows the run before its first progress notification
                    async for event in run:
                        self._notify(event)
        except DaemonError as exc:
            if not ready.done():
                ready.set_exception(exc)
            else:
                logger.warning("run failed after it started: %s", exc)
                self._server.show(types.MessageType.Error, f"ided: run failed: {exc}")
        except Exception:  # a background task's boundary: the client is told, the server stays up
            logger.exception("a run started over LSP failed")
            if not ready.done():
                ready.set_exception(DaemonError("the run failed to start (see the ided log)"))

    def _notify(self, event: ExecutionProgress) -> None:
        params = RunProgressParams(
            run_id=event.run_id, seq=event.seq, kind=event.event.value, event=event.model_dump(mode="json")
        )
        self._server.protocol.notify(LspMethods.RUN_PROGRESS, params)

    async def cancel(self, params: RunIdParams) -> RunStatusResult:
        runs = await self.service()
        try:
            record = await runs.cancel(params.run_id)
        except DaemonError as exc:
            raise _failure(exc) from exc
        return RunStatusResult(run_id=record.run_id, status=record.status.value, cancel_requested=True)

    @contextlib.asynccontextmanager
    async def review(self) -> AsyncGenerator[RunService]:
        """The run service for a review request; ided errors become JSON-RPC errors carrying their code."""
        runs = await self.service()
        try:
            yield runs
        except DaemonError as exc:
            raise _failure(exc) from exc


def register(server: IdedLanguageServer) -> None:
    host = LspRunHost(server)

    @server.feature(LspMethods.RUN_START)
    async def start(params: RunStartParams) -> RunStartResult:
        return await host.start(params)

    @server.feature(LspMethods.RUN_FEEDBACK)
    async def feedback(params: RunFeedbackParams) -> RunStartResult:
        return await host.feedback(params)

    @server.feature(LspMethods.RUN_CANCEL)
    async def cancel(params: RunIdParams) -> RunStatusResult:
        return await host.cancel(params)

    @server.feature(LspMethods.RUN_DIFF)
    async def diff(params: RunIdParams) -> RunDiffResult:
        async with host.review() as review:
            changes = await review.diff(params.run_id)
            branch = await review.branch(params.run_id)
        return _diff_result(changes, branch.repo_root)

    @server.feature(LspMethods.RUN_ACCEPT)
    async def accept(params: RunAcceptParams) -> RunAcceptResult:
        async with host.review() as review:
            done = await review.accept(params.run_id, selection=_selection(params))
        return _wire(RunAcceptResult, done)

    @server.feature(LspMethods.RUN_REJECT)
    async def reject(params: RunIdParams) -> RunRejectResult:
        async with host.review() as review:
            branch = await review.reject(params.run_id)
        return RunRejectResult(run_id=branch.run_id, branch=branch.branch, review=branch.review)

    @server.feature(LspMethods.RUN_ROLLBACK)
    async def rollback(params: RunIdParams) -> RunRollbackResult:
        async with host.review() as review:
            done = await review.rollback(params.run_id)
        return _wire(RunRollbackResult, done)


def _selection(params: RunAcceptParams) -> AcceptSelection | None:
    """``keep`` as the service's selection (None: the whole run); an empty or malformed one is invalid params."""
    if params.keep is None:
        return None
    try:
        return AcceptSelection(
            files=tuple(
                KeptFile(path=k.path, hunks=None if k.hunks is None else tuple(k.hunks), text=k.text)
                for k in params.keep
            )
        )
    except ValidationError as exc:
        raise JsonRpcInvalidParams(f"invalid params for {LspMethods.RUN_ACCEPT}: keep: {exc}") from exc


W = TypeVar("W", bound=AttrsInstance)


def _wire(wire: type[W], model: BaseModel, **given: object) -> W:
    """``model`` as the LSP wire type ``wire``: each of its fields from the model's field of that name (tuples as
    lists), unless ``given``."""
    fields = {f.name: getattr(model, f.name) for f in attrs.fields(wire) if f.name not in given}
    listed = {name: list(cast("tuple[object, ...]", v)) if isinstance(v, tuple) else v for name, v in fields.items()}
    return wire(**listed, **given)


async def _refuse_untrusted(runs: RunService) -> None:
    """LSP cannot ask: an editing run in a workspace whose own commands are not trusted is refused
    (``workspace_untrusted``, with how to trust), before anything starts."""
    refusal = (await runs.trust()).refused()
    if refusal is not None:
        raise refusal
