"""The run service in this process: ``LocalRunService``, the ``RunService`` port over one pipeline runtime.

``LocalRunService.open(config, models_needed=...)`` opens the workspace's pipeline runtime
(``daemon.service.runs.pipeline.open_pipeline``) and its review (``RunReview``) over the same run store
and run branches; closing it interrupts runs still in flight (they stay resumable). Every launch
(``start``, ``execute``, ``resume``, ``feedback``) listens to the runtime's progress before the run
starts and answers a ``RunFollow`` of that run's events up to its ``run_finished``: the one place the
subscribe-launch-filter-until-finished loop lives. ``models_needed=False`` opens a light service for
listing, showing and cancelling runs (no models, no retriever; runs cannot start).

It loads LangGraph and LangChain, so the command line imports this module only where a command runs.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Unpack

from daemon.config import Config
from daemon.core.review_models import AcceptResult, AcceptSelection, ChangeSet, CleanupReport, RollbackResult, RunBranch
from daemon.core.run_models import (
    DecisionEntry,
    ExecutionPlan,
    ExecutionProgress,
    RunCommands,
    RunRecord,
    RunStatus,
)
from daemon.errors import WorkspaceUntrusted
from daemon.orchestration.progress import Subscription
from daemon.orchestration.runtime import PipelineRuntime
from daemon.orchestration.workflow_loader import WorkflowCatalog
from daemon.service.runs.pipeline import PipelineChoices, open_pipeline
from daemon.service.runs.port import RunFollow, RunLoan, RunService, RunStart, caught_up
from daemon.service.runs.review import RunReview
from daemon.vcs.worktrees import RunWorktrees

__all__ = ["LocalRunService"]


class LocalRunService(RunService):
    """The runs of one workspace, executed in this process by ``runtime``; reviewed by ``review``."""

    def __init__(self, runtime: PipelineRuntime, review: RunReview) -> None:
        self._runtime = runtime
        self._review = review

    @classmethod
    @asynccontextmanager
    async def open(
        cls, config: Config, *, models_needed: bool, **choices: Unpack[PipelineChoices]
    ) -> AsyncGenerator[LocalRunService]:
        """The service of ``config``'s workspace (``open_pipeline`` and ``PipelineChoices`` say what each
        argument does)."""
        worktrees = RunWorktrees.for_config(config)
        pipeline = open_pipeline(
            config, models_needed=models_needed, worktrees=worktrees if models_needed else None, **choices
        )
        async with pipeline as runtime:
            yield cls(runtime, RunReview(worktrees, runtime.store))

    async def warm(self) -> None:
        """Get ready for the first run before it is asked (``PipelineRuntime.warm``)."""
        await self._runtime.warm()

    @property
    def catalog(self) -> WorkflowCatalog:
        return self._runtime.catalog

    def in_flight(self) -> list[str]:
        """The runs this process executes now."""
        return self._runtime.in_flight()

    def listen(self) -> Subscription:
        """Every run's live progress events from now on (close it to stop listening)."""
        return self._runtime.subscribe()

    # -- launching and following ------------------------------------------------------------------

    async def _launched(self, launch: Callable[[], Awaitable[RunRecord]]) -> RunFollow:
        subscription = self._runtime.subscribe()  # before the launch: the run's first events are not missed
        try:
            record = await launch()
        except BaseException:
            subscription.close()
            raise
        return RunFollow(record, subscription, subscription.close)

    async def start(self, run: RunStart, *, dry_run: bool = False, loan: RunLoan | None = None) -> RunFollow:
        lent = loan or RunLoan()
        return await self._launched(
            lambda: self._runtime.start(
                run.request,
                workflow=run.workflow,
                mode=run.mode,
                dry_run=dry_run,
                include_uncommitted=run.include_uncommitted,
                attachments=run.attachments,
                file_reader=lent.file_reader,
                extra_tools=lent.extra_tools,
                trusted=lent.trusted,
            )
        )

    async def execute(self, run_id: str, *, trusted: bool | None = None) -> RunFollow:
        return await self._launched(lambda: self._runtime.execute(run_id, trusted=trusted))

    async def resume(self, run_id: str, *, trusted: bool | None = None) -> RunFollow:
        return await self._launched(lambda: self._runtime.resume(run_id, trusted=trusted))

    async def feedback(self, run_id: str, text: str, *, loan: RunLoan | None = None) -> RunFollow:
        lent = loan or RunLoan()
        return await self._launched(
            lambda: self._runtime.follow_up(
                run_id, text, file_reader=lent.file_reader, extra_tools=lent.extra_tools, trusted=lent.trusted
            )
        )

    async def follow(self, run_id: str) -> RunFollow:
        subscription = self._runtime.subscribe(run_id)  # before the stored events are read: nothing falls between
        try:
            record = await self._runtime.get(run_id)
            stored = await self._runtime.events(run_id)
        except BaseException:
            subscription.close()
            raise
        ended = record.status is not RunStatus.RUNNING  # planned, interrupted or ended: nothing runs now
        return RunFollow(record, caught_up(stored, subscription, ended=ended), subscription.close)

    # -- planning and trust -----------------------------------------------------------------------

    async def prepare(self, run: RunStart) -> RunRecord:
        return await self._runtime.prepare(
            run.request,
            workflow=run.workflow,
            mode=run.mode,
            include_uncommitted=run.include_uncommitted,
            attachments=run.attachments,
        )

    async def missing_models(self, plan: ExecutionPlan) -> list[str]:
        return self._runtime.missing_models(plan)

    async def untrusted_commands(self, record: RunRecord) -> RunCommands | None:
        return self._runtime.untrusted_commands(record)

    async def trust_refusal(self) -> WorkspaceUntrusted | None:
        return self._runtime.commands.refusal(self._runtime.catalog.workflows)

    async def needs_trust(self) -> bool:
        return self._runtime.commands.needs_trust(self._runtime.catalog.workflows)

    async def repository_commands(self) -> dict[str, tuple[str, str]]:
        return self._runtime.commands.repository_defined(self._runtime.catalog.workflows)

    async def how_to_trust(self) -> str:
        return self._runtime.commands.how_to_trust

    # -- cancelling and inspecting ----------------------------------------------------------------

    async def cancel(self, run_id: str) -> RunRecord:
        return await self._runtime.cancel(run_id)

    async def get(self, run_id: str) -> RunRecord:
        return await self._runtime.get(run_id)

    async def wait(self, run_id: str, *, wait_seconds: float | None = None) -> RunRecord:
        return await self._runtime.wait(run_id, wait_seconds=wait_seconds)

    async def list_runs(self, limit: int = 50, *, all_workspaces: bool = False) -> list[RunRecord]:
        return await self._runtime.list_runs(limit, all_workspaces=all_workspaces)

    async def decisions(self, run_id: str) -> list[DecisionEntry]:
        return await self._runtime.decision_log(run_id)

    async def events(self, run_id: str) -> list[ExecutionProgress]:
        return await self._runtime.events(run_id)

    # -- review -----------------------------------------------------------------------------------

    async def diff(self, run_id: str) -> ChangeSet:
        return await self._review.diff(run_id)

    async def accept(self, run_id: str, *, selection: AcceptSelection | None = None) -> AcceptResult:
        return await self._review.accept(run_id, selection=selection)

    async def reject(self, run_id: str) -> RunBranch:
        return await self._review.reject(run_id)

    async def rollback(self, run_id: str) -> RollbackResult:
        return await self._review.rollback(run_id)

    async def cleanup(self, *, older_than_days: int | None = None) -> CleanupReport:
        return await self._review.cleanup(older_than_days=older_than_days)

    async def branch(self, run_id: str) -> RunBranch:
        return await self._review.branch(run_id)

    async def peek(self, run_id: str) -> ChangeSet:
        return await self._review.peek(run_id)

    async def is_repository(self) -> bool:
        return await self._review.is_repository()
