"""What answers the run operations in the process that executes runs: ``RunWork``.

``RunWork.open(config, models_needed=...)`` opens the workspace's pipeline runtime
(``daemon.service.pipeline.opening.open_pipeline``) and its review (``RunReview``) over the same run store and
run branches; closing it interrupts runs still in flight (they stay resumable). ``models_needed=False``
opens a light runtime for listing, showing and cancelling runs (no models, no retriever; runs cannot
start). ``RunWork.reviewing(review)`` answers the review operations alone, with no runtime (the command
line's ``ided runs diff|accept|...``).

Each run operation's declaration (``daemon.service.runs.service.RunService``) names its work here: most
are one call on ``runtime`` or ``review``; the methods below are the ones that do more than that. Both the
in-process transport (``HereRuns``) and the daemon (``RunHost``) run the declarations' work on one of these.
It loads LangGraph and LangChain (through the runtime), so a front imports this module only where runs
execute in its process.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Unpack

from daemon.config import Config
from daemon.core.run_models import ExecutionPlan, RunCommands, RunRecord
from daemon.errors import PipelineError
from daemon.orchestration.progress import Subscription
from daemon.orchestration.runtime import PipelineRuntime
from daemon.orchestration.workflow_loader import WorkflowCatalog
from daemon.service.pipeline.opening import PipelineChoices, open_pipeline
from daemon.service.runs.params import FeedbackParams, RunDetail, RunTrust, ShowParams, StartParams
from daemon.service.runs.review import RunReview
from daemon.vcs.worktrees import RunWorktrees

__all__ = ["RunWork"]


class RunWork:
    """The runs of one workspace, executed in this process by ``runtime`` and reviewed by ``review``."""

    def __init__(self, runtime: PipelineRuntime | None, review: RunReview) -> None:
        self._runtime = runtime
        self.review = review

    @classmethod
    @asynccontextmanager
    async def open(
        cls, config: Config, *, models_needed: bool, **choices: Unpack[PipelineChoices]
    ) -> AsyncGenerator[RunWork]:
        """The work of ``config``'s workspace (``open_pipeline`` and ``PipelineChoices`` say what each argument
        does)."""
        worktrees = RunWorktrees.for_config(config)
        pipeline = open_pipeline(
            config, models_needed=models_needed, worktrees=worktrees if models_needed else None, **choices
        )
        async with pipeline as runtime:
            yield cls(runtime, RunReview(worktrees, runtime.store))

    @classmethod
    def reviewing(cls, review: RunReview) -> RunWork:
        """The review operations over ``review``, with no pipeline runtime (the others refuse)."""
        return cls(None, review)

    @property
    def runtime(self) -> PipelineRuntime:
        if self._runtime is None:
            raise PipelineError("only a run's review is open in this process: the run service is not")
        return self._runtime

    @property
    def catalog(self) -> WorkflowCatalog:
        return self.runtime.catalog

    async def warm(self) -> None:
        """Get ready for the first run before it is asked (``PipelineRuntime.warm``)."""
        await self.runtime.warm()

    def in_flight(self) -> list[str]:
        """The runs this process executes now."""
        return [] if self._runtime is None else self._runtime.in_flight()

    def listen(self, run_id: str | None = None) -> Subscription:
        """Every run's (or ``run_id``'s) live progress events from now on (close it to stop listening)."""
        return self.runtime.subscribe(run_id)

    # -- the work that is more than one call --------------------------------------------------------

    async def start(self, p: StartParams) -> RunRecord:
        loan = p.loan
        return await self.runtime.start(
            p.run.request,
            workflow=p.run.workflow,
            mode=p.run.mode,
            dry_run=p.dry_run,
            include_uncommitted=p.run.include_uncommitted,
            attachments=p.run.attachments,
            file_reader=loan.file_reader if loan is not None else None,
            extra_tools=loan.extra_tools if loan is not None else (),
            trusted=p.trusted,
        )

    async def feedback(self, p: FeedbackParams) -> RunRecord:
        loan = p.loan
        return await self.runtime.follow_up(
            p.run_id,
            p.text,
            file_reader=loan.file_reader if loan is not None else None,
            extra_tools=loan.extra_tools if loan is not None else (),
            trusted=p.trusted,
        )

    async def trust(self) -> RunTrust:
        runtime = self.runtime
        workflows = runtime.catalog.workflows
        refusal = runtime.commands.refusal(workflows)
        return RunTrust(
            refusal=refusal.message if refusal is not None else None,
            needs_trust=runtime.commands.needs_trust(workflows),
            repository_commands=runtime.commands.repository_defined(workflows),
            how_to_trust=runtime.commands.how_to_trust,
        )

    async def untrusted_commands(self, run_id: str) -> RunCommands:
        """The planned run's commands, with those the trust store withholds now (none withheld: ``withheld`` is
        empty)."""
        record = await self.runtime.get(run_id)
        withheld = self.runtime.untrusted_commands(record)
        return withheld if withheld is not None else RunCommands(named={})

    async def missing_models(self, plan: ExecutionPlan) -> list[str]:
        """Agent roles of ``plan`` that no model serves."""
        return self.runtime.missing_models(plan)

    async def show(self, p: ShowParams) -> RunDetail:
        """The run's record, decision log and (``p.events``) progress events, in one answer."""
        runtime = self.runtime
        record = await runtime.get(p.run_id)
        decisions = await runtime.decision_log(p.run_id)
        events = await runtime.events(p.run_id) if p.events else []
        return RunDetail(record=record, decisions=tuple(decisions), events=tuple(events))
