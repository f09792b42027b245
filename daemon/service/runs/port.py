"""The run service's port: what every front (CLI, ACP, LSP) asks of runs, and ``RunFollow``.

``RunService`` starts, executes, resumes, follows up (review feedback), cancels and inspects runs;
``RunReviewPort`` (its review half) shows a run's change set and accepts (all of it, or the files and
hunks a reviewer kept), rejects or rolls it back.
Every launch answers a ``RunFollow``: the launched run's record and its progress events, from before
the run started (nothing is missed) up to and including its ``run_finished``. A front iterates it and
maps each event onto its protocol; it never subscribes, filters or waits by itself.

The in-process implementation is ``daemon.service.runs.local.LocalRunService``. Fronts hold the port
and never ask which implementation answers; every call is async, so an implementation may answer from
another process.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

from daemon.core.review_models import AcceptResult, AcceptSelection, ChangeSet, CleanupReport, RollbackResult, RunBranch
from daemon.core.run_models import (
    Attachment,
    DecisionEntry,
    ExecutionPlan,
    ExecutionProgress,
    ProgressKind,
    RunMode,
    RunRecord,
)
from daemon.errors import WorkspaceUntrusted

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from daemon.core.run_models import RunCommands
    from daemon.orchestration.agents import FileReader

__all__ = ["RunFollow", "RunLoan", "RunReviewPort", "RunService", "RunStart", "caught_up"]


@dataclass(frozen=True, kw_only=True)
class RunStart:
    """A run to start: the request in the user's words and how to run it."""

    request: str
    workflow: str | None = None
    """A workflow name; None lets the orchestrator choose."""
    mode: RunMode = "code"
    """``code`` edits on a run branch when the plan edits; ``ask`` is read-only."""
    include_uncommitted: bool | None = None
    """The run's branch starts from HEAD plus the user's uncommitted changes (None: the configuration's)."""
    attachments: tuple[Attachment, ...] = ()


@dataclass(frozen=True, kw_only=True)
class RunLoan:
    """What a front lends one run's agents (never persisted): how they read the user's files (an editor's
    unsaved text), more tools (a client's MCP tools) and whether the repository's commands may run
    (None: as the user's trust store says)."""

    file_reader: FileReader | None = None
    extra_tools: tuple[BaseTool, ...] = ()
    trusted: bool | None = None


class RunFollow(AbstractAsyncContextManager["RunFollow"]):
    """A launched run (``record``, as it was when launched) and its progress events up to its end.

    Iterate it for the run's events (it ends after ``run_finished``); ``close`` (or leaving ``async with``)
    stops listening. Built by a ``RunService`` from the events it listened to before the launch.
    """

    def __init__(self, record: RunRecord, events: AsyncIterator[ExecutionProgress], close: Callable[[], None]) -> None:
        self.record = record
        self._events = events
        self._close = close

    @property
    def run_id(self) -> str:
        return self.record.run_id

    async def __aiter__(self) -> AsyncIterator[ExecutionProgress]:
        async for event in self._events:
            if event.run_id != self.record.run_id:
                continue
            yield event
            if event.event is ProgressKind.RUN_FINISHED:
                return

    def close(self) -> None:
        self._close()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


async def caught_up(
    stored: list[ExecutionProgress], live: AsyncIterator[ExecutionProgress], *, ended: bool
) -> AsyncIterator[ExecutionProgress]:
    """A run's events for a follower that joins late: the ``stored`` ones, then the ``live`` ones after them.

    ``live`` must have been listened to before ``stored`` was read, so nothing falls between the two; an
    event in both is yielded once (by its ``seq``). ``ended``: the run had ended when ``stored`` was read
    (nothing more comes, even when no ``run_finished`` was stored, as for a run a crash interrupted).
    """
    last: dict[str, int] = {}
    for event in stored:
        last[event.run_id] = max(last.get(event.run_id, 0), event.seq)
        yield event
    if ended or any(e.event is ProgressKind.RUN_FINISHED for e in stored):
        return
    async for event in live:
        if event.seq <= last.get(event.run_id, 0):
            continue
        yield event


class RunReviewPort(Protocol):
    """Review of an editing run's change set; each answer is written to the run's decision log."""

    async def diff(self, run_id: str) -> ChangeSet: ...

    async def accept(self, run_id: str, *, selection: AcceptSelection | None = None) -> AcceptResult:
        """Apply the run to the user's branch: all of it, or (``selection``) exactly what a reviewer kept, as one
        reviewed commit on the run's branch; either way ``rollback`` undoes it."""
        ...

    async def reject(self, run_id: str) -> RunBranch: ...

    async def rollback(self, run_id: str) -> RollbackResult: ...

    async def cleanup(self, *, older_than_days: int | None = None) -> CleanupReport: ...

    async def branch(self, run_id: str) -> RunBranch:
        """The run's branch as it is now (its review state, its repository); nothing is logged."""
        ...

    async def peek(self, run_id: str) -> ChangeSet:
        """The run's change set as it is now, without logging a ``review`` (a replay shows it again)."""
        ...

    async def is_repository(self) -> bool:
        """Whether the workspace is a git repository (runs can have been accepted and rolled back)."""
        ...


class RunService(RunReviewPort, Protocol):
    """Runs of one workspace: launch and follow, cancel, inspect, and review (``RunReviewPort``)."""

    async def prepare(self, run: RunStart) -> RunRecord:
        """Select a workflow and plan; the run is recorded ``planned`` and nothing executes (``execute``
        launches it)."""
        ...

    async def missing_models(self, plan: ExecutionPlan) -> list[str]:
        """Agent roles of ``plan`` that no model serves."""
        ...

    async def untrusted_commands(self, record: RunRecord) -> RunCommands | None:
        """The repository's commands a planned editing run would be refused now (a front may ask), or None."""
        ...

    async def trust_refusal(self) -> WorkspaceUntrusted | None:
        """The refusal for an editing run when the repository defines commands the user has not trusted."""
        ...

    async def needs_trust(self) -> bool:
        """Whether the repository defines commands that run only in a trusted workspace."""
        ...

    async def repository_commands(self) -> dict[str, tuple[str, str]]:
        """The commands the repository defines: name -> (command line, source file)."""
        ...

    async def how_to_trust(self) -> str:
        """The command that trusts the workspace."""
        ...

    async def start(self, run: RunStart, *, dry_run: bool = False, loan: RunLoan | None = None) -> RunFollow:
        """Prepare and launch a run; ``dry_run``: select and plan only (the follow ends at once; the plan
        and the orchestrator's reasoning are in ``events``)."""
        ...

    async def execute(self, run_id: str, *, trusted: bool | None = None) -> RunFollow:
        """Launch a ``planned`` run."""
        ...

    async def resume(self, run_id: str, *, trusted: bool | None = None) -> RunFollow:
        """Continue an interrupted run from its last checkpoint (or execute a planned one)."""
        ...

    async def feedback(self, run_id: str, text: str, *, loan: RunLoan | None = None) -> RunFollow:
        """Answer a run's review feedback: a new attempt of its last editing stage on the same branch."""
        ...

    async def follow(self, run_id: str) -> RunFollow:
        """Follow a run however it was launched (by this front or another): its stored events, then the live
        ones up to its ``run_finished``; a run that already ended yields its stored events only."""
        ...

    async def cancel(self, run_id: str) -> RunRecord:
        """Best effort: no further stage starts."""
        ...

    async def get(self, run_id: str) -> RunRecord: ...

    async def wait(self, run_id: str, *, wait_seconds: float | None = None) -> RunRecord:
        """The run's record once it ended (``TimeoutError`` after ``wait_seconds``)."""
        ...

    async def list_runs(self, limit: int = 50, *, all_workspaces: bool = False) -> list[RunRecord]: ...

    async def decisions(self, run_id: str) -> list[DecisionEntry]: ...

    async def events(self, run_id: str) -> list[ExecutionProgress]: ...
