"""The run service every front holds, and every run operation, declared once: ``RunService``.

Each class attribute below is one run operation (``daemon.service.runs.operation``): its params (whose
constructor is the method's signature), its result, whether it changes something, and its work on the
executing process's ``RunWork`` (``daemon.service.runs.work``), by reference. From these declarations:

- ``runs.accept(run_id, selection=...)`` on an instance is the typed call (pyright checks the arguments
  and the answer), sent through the instance's transport;
- ``HereRuns`` (``daemon.service.runs.local``) runs the work in this process;
- ``DaemonRuns`` (``daemon.service.runs.remote``) sends ``runs/<name>`` to the workspace daemon, and
  ``RunHost`` (``daemon.service.runs.host``) serves every declaration there, validating the params and
  running the same work.

Adding a run operation is one declaration here, its work (a method of ``RunWork``, ``RunReview`` or the
pipeline runtime) and a test; ``tests/unit/service/test_run_operations.py`` checks that every declaration
is served by both transports and the daemon. Fronts hold a ``RunService`` and never ask which transport
answers (``in_daemon`` says, for a front that shows it).
"""

from __future__ import annotations

from daemon.core.review_models import AcceptResult, ChangeSet, CleanupReport, RollbackResult, RunBranch
from daemon.core.run_models import DecisionEntry, ExecutionProgress, RunCommands, RunRecord, RunStatus
from daemon.service.runs.follow import RunFollow, caught_up
from daemon.service.runs.operation import RunLaunch, RunOperation, RunTransport, declared
from daemon.service.runs.params import (
    AcceptParams,
    CleanupParams,
    FeedbackParams,
    LaunchParams,
    ListParams,
    NoParams,
    PlanParams,
    PrepareParams,
    RunDetail,
    RunIdParams,
    RunTrust,
    ShowParams,
    StartParams,
    WaitParams,
)

__all__ = ["OPERATIONS", "RunService"]

LAUNCH_WAIT_S = 3600.0
"""Upper bound for a launch or a plan (selection and planning ask the orchestrator model before it answers)."""


def _wait_bound(p: WaitParams) -> float:
    return LAUNCH_WAIT_S * 24 if p.wait_seconds is None else p.wait_seconds + 30


class RunService:
    """The runs of one workspace: launch and follow, cancel, inspect, trust and review (see the module docstring)."""

    transport: RunTransport

    def __init__(self, transport: RunTransport) -> None:
        self.transport = transport

    # -- launching (each answers a RunFollow) -----------------------------------------------------

    start = RunLaunch(StartParams, work=lambda w, p: w.start(p))
    """Prepare and launch a run; ``dry_run``: select and plan only (the follow ends at once; the plan and the
    orchestrator's reasoning are in ``events``)."""
    execute = RunLaunch(LaunchParams, work=lambda w, p: w.runtime.execute(p.run_id, trusted=p.trusted))
    """Launch a ``planned`` run."""
    resume = RunLaunch(LaunchParams, work=lambda w, p: w.runtime.resume(p.run_id, trusted=p.trusted))
    """Continue an interrupted run from its last checkpoint (or execute a planned one)."""
    feedback = RunLaunch(FeedbackParams, work=lambda w, p: w.feedback(p))
    """Answer a run's review feedback: a new attempt of its last editing stage on the same branch."""

    # -- planning and trust -------------------------------------------------------------------------

    prepare = RunOperation(
        PrepareParams,
        RunRecord,
        work=lambda w, p: w.runtime.prepare(
            p.run.request,
            workflow=p.run.workflow,
            mode=p.run.mode,
            include_uncommitted=p.run.include_uncommitted,
            attachments=p.run.attachments,
        ),
        changes=True,
        wait_s=LAUNCH_WAIT_S,
    )
    """Select a workflow and plan; the run is recorded ``planned`` and nothing executes (``execute``)."""
    missing_models = RunOperation(PlanParams, list[str], work=lambda w, p: w.missing_models(p.plan), changes=False)
    """Agent roles of the plan that no model serves."""
    untrusted_commands = RunOperation(
        RunIdParams, RunCommands, work=lambda w, p: w.untrusted_commands(p.run_id), changes=False
    )
    """A planned run's commands, with those the trust store would withhold now (``withheld``)."""
    trust = RunOperation(NoParams, RunTrust, work=lambda w, _: w.trust(), changes=False)
    """Whether an editing run is refused now, the repository's commands, and how to trust the workspace."""

    # -- cancelling and inspecting ------------------------------------------------------------------

    cancel = RunOperation(RunIdParams, RunRecord, work=lambda w, p: w.runtime.cancel(p.run_id), changes=True)
    """Best effort: no further stage starts."""
    get = RunOperation(RunIdParams, RunRecord, work=lambda w, p: w.runtime.get(p.run_id), changes=False)
    wait = RunOperation(
        WaitParams,
        RunRecord,
        work=lambda w, p: w.runtime.wait(p.run_id, wait_seconds=p.wait_seconds),
        changes=False,
        wait_s=_wait_bound,
    )
    """The run's record once it ended (``TimeoutError`` after ``wait_seconds``)."""
    list_runs = RunOperation(
        ListParams,
        list[RunRecord],
        work=lambda w, p: w.runtime.list_runs(p.limit, all_workspaces=p.all_workspaces),
        changes=False,
    )
    decisions = RunOperation(
        RunIdParams, list[DecisionEntry], work=lambda w, p: w.runtime.decision_log(p.run_id), changes=False
    )
    events = RunOperation(
        RunIdParams, list[ExecutionProgress], work=lambda w, p: w.runtime.events(p.run_id), changes=False
    )
    show = RunOperation(ShowParams, RunDetail, work=lambda w, p: w.show(p), changes=False)
    """The run's record, decision log and (``events=True``) progress events, in one answer."""

    # -- review -------------------------------------------------------------------------------------

    diff = RunOperation(RunIdParams, ChangeSet, work=lambda w, p: w.review.diff(p.run_id), changes=False)
    """The run's change set (every file, both texts, one diff); logged as ``review``."""
    accept = RunOperation(
        AcceptParams,
        AcceptResult,
        work=lambda w, p: w.review.accept(p.run_id, selection=p.selection),
        changes=True,
    )
    """Apply the run to the user's branch: all of it, or (``selection``) exactly what a reviewer kept, as one
    reviewed commit on the run's branch; either way ``rollback`` undoes it."""
    reject = RunOperation(RunIdParams, RunBranch, work=lambda w, p: w.review.reject(p.run_id), changes=True)
    rollback = RunOperation(RunIdParams, RollbackResult, work=lambda w, p: w.review.rollback(p.run_id), changes=True)
    cleanup = RunOperation(
        CleanupParams,
        CleanupReport,
        work=lambda w, p: w.review.cleanup(older_than_days=p.older_than_days),
        changes=True,
    )
    branch = RunOperation(RunIdParams, RunBranch, work=lambda w, p: w.review.branch(p.run_id), changes=False)
    """The run's branch as it is now (its review state, its repository); nothing is logged."""
    peek = RunOperation(RunIdParams, ChangeSet, work=lambda w, p: w.review.peek(p.run_id), changes=False)
    """The run's change set as it is now, without logging a ``review`` (a replay shows it again)."""
    is_repository = RunOperation(NoParams, bool, work=lambda w, _: w.review.is_repository(), changes=False)
    """Whether the workspace is a git repository (runs can have been accepted and rolled back)."""

    # -- composed of the operations above -----------------------------------------------------------

    @property
    def in_daemon(self) -> bool:
        """Whether the workspace daemon executes these runs."""
        return self.transport.in_daemon

    async def follow(self, run_id: str) -> RunFollow:
        """Follow a run however it was launched (by this front or another): its stored events, then the live ones
        up to its ``run_finished``; a run that already ended yields its stored events only."""
        listening = self.transport.listen(run_id)  # before the stored events are read: nothing falls between
        try:
            record = await self.get(run_id)
            stored = await self.events(run_id)
        except BaseException:
            listening.close()
            raise
        ended = record.status is not RunStatus.RUNNING  # planned, interrupted or ended: nothing runs now
        return RunFollow(record, caught_up(stored, aiter(listening), ended=ended), listening.close)

    async def aclose(self) -> None:
        await self.transport.aclose()


OPERATIONS = declared(RunService)
"""Every run operation by name, in declaration order: what the daemon serves as ``runs/<name>``."""
