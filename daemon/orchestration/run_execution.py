"""Executing runs: a run's (or a follow-up's) LangGraph graph on the run's thread, and how a run ends.

``RunEngine.execute`` compiles the plan's graph, gives it the run's dependencies as the LangGraph runtime
context (``RunContext``: agents, reporter, cancellation, retriever — the run's own search scope's when the
runtime has one, ``daemon.orchestration.run_scope``, dropped in ``finish`` — the commit of a stage attempt) and
invokes it on the run's checkpoint thread (a fresh run gets its initial state and the upfront retrieval
context; a resumed one continues from its last checkpoint); the last checkpointed state decides the stop
(``decide_stop``). ``follow_up`` invokes the follow-up graph (``compile_follow_up_graph``: one attempt of
the stage the feedback goes to, then of the test stages after it, on the same thread) with the feedback
in the context. ``finish`` records
the stop, reads the change set of an editing run, releases the edit lock and emits ``review`` and
``run_finished``. ``CancelFlags``: a cancel asked in this process or in the run store (another process).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import GraphRecursionError

from daemon.core.run_models import (
    DecisionKind,
    ExecutionPlan,
    ProgressKind,
    RunRecord,
    RunStatus,
    StopDecision,
    StopStatus,
    utc_now,
)
from daemon.errors import DaemonError
from daemon.orchestration.agents.run_workspace import RunWorkspace
from daemon.orchestration.consistency import RunDiffs
from daemon.orchestration.graph_builder import (
    compile_follow_up_graph,
    compile_graph,
    follow_up_stages,
)
from daemon.orchestration.llm_providers import EVALUATOR_ROLE, REFLECTOR_ROLE, RETRIEVAL_ROLE, ModelRegistry
from daemon.orchestration.progress import ProgressBus
from daemon.orchestration.reporter import RunReporter
from daemon.orchestration.retriever import Retriever, upfront_context
from daemon.orchestration.run_agents import RunAgents
from daemon.orchestration.run_context import RunCancelled, RunContext
from daemon.orchestration.run_preparation import announce
from daemon.orchestration.run_store import RunStore
from daemon.orchestration.runtime_settings import RuntimeSettings
from daemon.orchestration.state import ExecutionState, to_channel_values
from daemon.orchestration.stop_decision import cancelled_stop, decide_stop, error_stop

__all__ = ["CancelFlags", "RunEngine"]

logger = logging.getLogger(__name__)

_STATUS_OF_STOP = {
    StopStatus.SUCCESS: RunStatus.SUCCEEDED,
    StopStatus.FAILURE: RunStatus.FAILED,
    StopStatus.ABORTED: RunStatus.ABORTED,
    StopStatus.CANCELLED: RunStatus.CANCELLED,
}


@dataclass(kw_only=True)
class CancelFlags:
    """Runs cancelled in this process (``local``), else as the run store says (a cancel from elsewhere)."""

    store: RunStore
    local: set[str] = field(default_factory=set[str])

    async def requested(self, run_id: str) -> bool:
        return run_id in self.local or await self.store.cancel_requested(run_id)


@dataclass(kw_only=True)
class RunEngine:
    """Runs the graphs of one runtime's runs and ends them."""

    store: RunStore
    bus: ProgressBus
    checkpointer: BaseCheckpointSaver[str]
    workspace: RunWorkspace
    agents: RunAgents
    models: ModelRegistry
    settings: RuntimeSettings
    retriever: Retriever | None
    flags: CancelFlags
    background: set[asyncio.Task[None]] = field(default_factory=set[asyncio.Task[None]])
    """Work a run's end leaves behind (the next spare worktree), cancelled when the runtime closes."""

    def graph_config(self, run_id: str) -> RunnableConfig:
        return {"configurable": {"thread_id": run_id}, "recursion_limit": 2 * self.settings.max_iterations + 10}

    async def state(self, plan: ExecutionPlan, run_id: str) -> ExecutionState | None:
        """The run's last checkpointed execution state (None before its first step)."""
        snapshot = await compile_graph(plan, self.checkpointer).aget_state(self.graph_config(run_id))
        return ExecutionState.model_validate(snapshot.values) if snapshot.values else None

    async def open_worktree(self, record: RunRecord) -> RunRecord:
        """The run's branch and worktree; a failure (not a git repository, detached HEAD) fails the run."""
        run_id = record.run_id
        try:
            changes = await self.workspace.create(run_id, include_uncommitted=record.include_uncommitted)
        except DaemonError as exc:
            await self.store.log(run_id, DecisionKind.ERROR, exc.message, {"code": exc.code.value})
            await self.store.update(
                run_id, status=RunStatus.FAILED, error=exc.message, stop=error_stop(exc.message), finished_at=utc_now()
            )
            raise
        await self.store.log(
            run_id,
            DecisionKind.WORKTREE,
            f"branch {changes.branch} from {changes.base_commit[:10]} in {changes.worktree}",
            changes.model_dump(mode="json"),
        )
        return await self.store.update(run_id, changes=changes)

    async def _retriever(self, record: RunRecord) -> Retriever | None:
        """The run's own retriever (its search scope: the run's tree, not its own notes), else the runtime's."""
        scope = await self.agents.scopes.get(record.run_id, record.changes)
        return scope.retriever if scope is not None else self.retriever

    async def _context(self, record: RunRecord, reporter: RunReporter, *, feedback: str | None = None) -> RunContext:
        run_id = record.run_id
        return RunContext(
            agents=await self.agents.provider(record, reporter),
            reporter=reporter,
            cancelled=lambda: self.flags.requested(run_id),
            retriever=await self._retriever(record),
            query_writer=self.models.caller(RETRIEVAL_ROLE),
            max_iterations=self.settings.max_iterations,
            stage_timeout_seconds=self.settings.stage_timeout_seconds,
            commit=self.agents.committer(run_id, feedback=feedback) if record.changes is not None else None,
            attachments=record.attachments,
            feedback=feedback,
            diffs=RunDiffs(Path(record.changes.worktree), start=record.changes.base_commit) if record.changes else None,
            reflector=self.models.caller(REFLECTOR_ROLE),
            evaluator=self.models.caller(EVALUATOR_ROLE),
        )

    async def _upfront(self, plan: ExecutionPlan, reporter: RunReporter, retriever: Retriever | None) -> dict[str, Any]:
        """Planning-time context for every planned stage (the retrieval agent's upfront mode), as channel JSON."""
        found = await upfront_context(plan, retriever)
        context = found.snippets
        if context:
            counts = {stage_id: len(snippets) for stage_id, snippets in context.items()}
            slowest = sorted(found.sources.items(), key=lambda item: item[1], reverse=True)[:3]
            timing = f" in {found.seconds:.2f} s" + (
                " (" + ", ".join(f"{name} {seconds:.2f} s" for name, seconds in slowest) + ")" if slowest else ""
            )
            await reporter.log(
                DecisionKind.ENRICHMENT,
                "upfront retrieval: " + ", ".join(f"{k} {v} piece(s)" for k, v in counts.items()) + timing,
                {"mode": "upfront", "pieces": counts, "seconds": found.seconds, "source_seconds": found.sources},
            )
        return to_channel_values(enriched_context=context)["enriched_context"]

    async def _new_run_upfront(self, record: RunRecord, plan: ExecutionPlan, reporter: RunReporter) -> dict[str, Any]:
        """A new run's upfront retrieval (``_upfront``) through the run's scope, its tree taken as checked out
        meanwhile: no agent has written in it yet (``RunScope.as_checked_out``)."""
        scope = await self.agents.scopes.get(record.run_id, record.changes)
        if scope is not None:
            scope.as_checked_out(True)
        try:
            return await self._upfront(plan, reporter, scope.retriever if scope is not None else self.retriever)
        finally:
            if scope is not None:
                scope.as_checked_out(False)

    async def _interrupted(self, run_id: str, reporter: RunReporter | None) -> None:
        await self.store.update(run_id, status=RunStatus.INTERRUPTED, pid=None)
        await self.agents.scopes.drop(run_id)
        if reporter is not None:
            await reporter.log(DecisionKind.ERROR, "interrupted: the runtime closed while the run was in flight")
        await self.workspace.release(run_id)

    async def execute(self, record: RunRecord, plan: ExecutionPlan) -> RunRecord:
        run_id = record.run_id
        graph = compile_graph(plan, self.checkpointer)
        config = self.graph_config(run_id)
        reporter = await RunReporter.resume(run_id=run_id, plan=plan, bus=self.bus, store=self.store)
        has_checkpoint = await self.checkpointer.aget_tuple(config) is not None
        # a new run's upfront retrieval starts at once: the agents' tools (the toolchain's walk of the tree)
        # and the run's announcements are made while it searches
        upfront = None if has_checkpoint else asyncio.create_task(self._new_run_upfront(record, plan, reporter))
        try:
            context = await self._context(record, reporter)
            graph_input: dict[str, Any] | None = None
            if not has_checkpoint:
                graph_input = ExecutionState(
                    run_id=run_id,
                    request=plan.request,
                    workflow_name=plan.workflow,
                    workflow_type=plan.workflow_type.value,
                    routing_table=dict(plan.routing),
                    retrieval_context=plan.retrieval_strategy,
                ).model_dump(mode="json")
            kind = ProgressKind.RUN_RESUMED if has_checkpoint else ProgressKind.RUN_STARTED
            summary = f"{plan.workflow}: {len(plan.stages)} stage(s) planned"
            await reporter.emit(kind, status="running", summary=summary)
            if has_checkpoint:
                await reporter.emit_plan()
            else:
                await announce(record, reporter)
            await self.agents.say_withheld(record, reporter)
        except BaseException:
            if upfront is not None:
                upfront.cancel()
                await asyncio.gather(upfront, return_exceptions=True)
            raise
        stop: StopDecision
        try:
            if graph_input is not None and upfront is not None:
                graph_input["enriched_context"] = await upfront
            # plain JSON input keeps the checkpoints free of pickled objects; LangGraph validates it
            await graph.ainvoke(  # pyright: ignore[reportUnknownMemberType]
                cast("ExecutionState | None", graph_input), config, context=context, durability="sync"
            )
            snapshot = await graph.aget_state(config)
            stop = decide_stop(plan, ExecutionState.model_validate(snapshot.values))
        except RunCancelled:
            stop = cancelled_stop()
        except GraphRecursionError:
            stop = error_stop(f"more than {self.settings.max_iterations} iterations (pipeline.max_iterations)")
        except asyncio.CancelledError:
            await self._interrupted(run_id, reporter)
            raise
        except Exception as exc:  # the run's boundary: an error ends this run, never the runtime
            logger.exception("run %s failed", run_id)
            stop = error_stop(f"{type(exc).__name__}: {exc}")
        return await self.finish(run_id, stop, reporter)

    async def follow_up(self, record: RunRecord, plan: ExecutionPlan, stage_id: str, feedback: str) -> RunRecord:
        """One attempt of ``stage_id`` answering ``feedback``, then of each test stage after it, through the
        follow-up graph on the run's thread."""
        run_id = record.run_id
        stage = plan.stage(stage_id)
        stages = follow_up_stages(plan, stage_id)
        config = self.graph_config(run_id)
        state = await self.state(plan, run_id) or ExecutionState(run_id=run_id, request=plan.request)
        attempt = state.attempts.get(stage_id, 0) + 1
        reporter = await RunReporter.resume(run_id=run_id, plan=plan, bus=self.bus, store=self.store)
        await reporter.log(DecisionKind.FOLLOW_UP, f"feedback for {stage_id} (attempt {attempt}): {feedback}")
        await reporter.emit(ProgressKind.RUN_RESUMED, status="running", summary=f"feedback: {feedback}")
        tests = f", then the tests: {', '.join(stages[1:])}" if len(stages) > 1 else ""
        await reporter.thought(
            f"Feedback goes to {stage.name} (attempt {attempt}) on {record.changes and record.changes.branch}{tests}"
        )
        await self.agents.say_withheld(record, reporter)
        stop: StopDecision
        try:
            graph = compile_follow_up_graph(plan, stage_id, self.checkpointer)
            context = await self._context(record, reporter, feedback=feedback)
            await graph.ainvoke(  # pyright: ignore[reportUnknownMemberType]
                cast("ExecutionState", state.model_dump(mode="json")), config, context=context, durability="sync"
            )
            after = ExecutionState.model_validate((await graph.aget_state(config)).values)
            stop = _follow_up_stop(run_id, stages, state, after)
        except RunCancelled:
            stop = cancelled_stop()
        except asyncio.CancelledError:
            await self._interrupted(run_id, None)
            raise
        except Exception as exc:  # the run's boundary: an error ends this follow-up, never the runtime
            logger.exception("follow-up of run %s failed", run_id)
            stop = error_stop(f"{type(exc).__name__}: {exc}")
        return await self.finish(run_id, stop, reporter)

    async def finish(self, run_id: str, stop: StopDecision, reporter: RunReporter) -> RunRecord:
        status = _STATUS_OF_STOP[stop.status]
        changes = (await self.store.get(run_id)).changes
        if changes is not None and self.workspace.can_edit:
            try:
                changes = await self.workspace.changes(run_id, changes)
            except DaemonError as exc:
                await reporter.log(DecisionKind.ERROR, f"the change set could not be read: {exc.message}")
        record = await self.store.update(
            run_id, status=status, stop=stop, finished_at=utc_now(), pid=None, changes=changes
        )
        await self.workspace.release(run_id)  # before the review: accepting needs the lock free
        if changes is not None and self.settings.spare_worktree:  # the next run takes this one over
            task = asyncio.create_task(self.workspace.prepare_spare(), name="ided-spare-worktree")
            self.background.add(task)
            task.add_done_callback(self.background.discard)
        self.agents.hosts.pop(run_id, None)
        await self.agents.scopes.drop(run_id)  # the run's overlay is dropped with the run
        await reporter.log(DecisionKind.STOP, f"{stop.status.value}: {stop.reason}", stop.model_dump(mode="json"))
        if changes is not None and not changes.empty:
            await reporter.log(
                DecisionKind.REVIEW,
                f"{len(changes.files)} file(s) changed in {len(changes.commits)} commit(s) on {changes.branch}; "
                "awaiting review",
                {"branch": changes.branch, "commits": list(changes.commits), "files": [f.path for f in changes.files]},
            )
            await reporter.review(changes)
        await reporter.emit(ProgressKind.RUN_FINISHED, status=status.value, summary=stop.reason, stop=stop)
        self.flags.local.discard(run_id)
        return record


def _follow_up_stop(run_id: str, stages: list[str], before: ExecutionState, after: ExecutionState) -> StopDecision:
    """The follow-up's verdict: success when the stage that took the feedback and every test stage after it
    succeeded in this follow-up; a stage left out because one before it failed is named."""
    said: list[str] = []
    refs: list[str] = []
    failed = False
    for sid in stages:
        result = after.last_result(sid)
        if result is None or after.attempts.get(sid, 0) == before.attempts.get(sid, 0):
            if sid == stages[0]:
                raise RuntimeError(f"the follow-up of {sid} recorded no result")
            said.append(f"{sid} not run")
            continue
        failed = failed or result.failed
        said.append(f"{sid} attempt {result.attempt} {'failed' if result.failed else 'succeeded'}: {result.summary}")
        refs.append(f"run:{run_id}/stage:{sid}/attempt:{result.attempt}")
    return StopDecision(
        status=StopStatus.FAILURE if failed else StopStatus.SUCCESS,
        reason="follow-up: " + "; ".join(said),
        evidence_refs=tuple(refs),
    )
