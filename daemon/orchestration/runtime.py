"""The runtime API every front calls: prepare, start, wait, resume, cancel and inspect runs; progress events.

A run goes ``planned`` (selection + plan recorded; a dry run stops here) -> ``running`` -> one of
``succeeded``, ``failed``, ``aborted``, ``cancelled``, each with its ``StopDecision``. A ``running``
run whose process died shows as ``interrupted``; ``resume`` continues it from its last LangGraph
checkpoint (or starts a ``planned`` one). ``cancel`` is best effort: no further node starts; the
node in flight finishes. It works across processes: the flag lives in the run store and every node
checks it before it starts.

Open with ``async with PipelineRuntime.open(...) as runtime:``; closing interrupts runs still in
flight (they stay resumable).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import GraphRecursionError

from daemon.config import PipelineConfig
from daemon.errors import ErrorCode, PipelineError
from daemon.orchestration.checkpoints import open_checkpointer
from daemon.orchestration.graph_builder import RunCancelled, RunContext, compile_graph
from daemon.orchestration.llm_providers import HOW_TO_CONFIGURE, ORCHESTRATOR_ROLE, RETRIEVAL_ROLE, ModelRegistry
from daemon.orchestration.plan import ExecutionPlan, assemble_plan
from daemon.orchestration.progress import ExecutionProgress, ProgressBus, ProgressKind, Subscription
from daemon.orchestration.project_profile import ProjectProfile
from daemon.orchestration.reporter import RunReporter
from daemon.orchestration.retriever import Retriever
from daemon.orchestration.run_store import (
    DecisionEntry,
    DecisionKind,
    RunRecord,
    RunStatus,
    RunStore,
    new_run_id,
    process_alive,
)
from daemon.orchestration.selection import Orchestrator
from daemon.orchestration.stage_agents import AgentProvider, LlmAgentProvider
from daemon.orchestration.state import ExecutionState
from daemon.orchestration.stop_decision import (
    StopDecision,
    StopStatus,
    cancelled_stop,
    decide_stop,
    error_stop,
    utc_now,
)
from daemon.orchestration.workflow_loader import WorkflowCatalog

__all__ = ["PipelineRuntime", "RuntimeSettings", "runs_db_path"]

logger = logging.getLogger(__name__)

_STATUS_OF_STOP = {
    StopStatus.SUCCESS: RunStatus.SUCCEEDED,
    StopStatus.FAILURE: RunStatus.FAILED,
    StopStatus.ABORTED: RunStatus.ABORTED,
    StopStatus.CANCELLED: RunStatus.CANCELLED,
}


def runs_db_path(state_dir: Path) -> Path:
    return state_dir / "pipeline" / "runs.sqlite3"


@dataclass(frozen=True, kw_only=True)
class RuntimeSettings:
    max_iterations: int = 50
    stage_timeout_seconds: float = 900.0
    selection_retries: int = 1

    @classmethod
    def from_config(cls, config: PipelineConfig) -> RuntimeSettings:
        return cls(
            max_iterations=config.max_iterations,
            stage_timeout_seconds=config.stage_timeout_seconds,
            selection_retries=config.selection_retries,
        )


class PipelineRuntime:
    def __init__(
        self,
        *,
        catalog: WorkflowCatalog,
        models: ModelRegistry,
        store: RunStore,
        checkpointer: BaseCheckpointSaver[str],
        settings: RuntimeSettings = RuntimeSettings(),
        retriever: Retriever | None = None,
        profile: ProjectProfile | None = None,
        agents: AgentProvider | None = None,
    ) -> None:
        self.catalog = catalog
        self.models = models
        self.store = store
        self.settings = settings
        self.bus = ProgressBus()
        self._checkpointer = checkpointer
        self._retriever = retriever
        self._profile = profile
        self._agents: AgentProvider = agents or LlmAgentProvider(models)
        self._agents_injected = agents is not None
        self._tasks: dict[str, asyncio.Task[RunRecord]] = {}
        self._cancelled: set[str] = set()

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        *,
        catalog: WorkflowCatalog,
        models: ModelRegistry,
        state_dir: Path,
        config: PipelineConfig,
        retriever: Retriever | None = None,
        profile: ProjectProfile | None = None,
        agents: AgentProvider | None = None,
    ) -> AsyncGenerator[PipelineRuntime]:
        store = await asyncio.to_thread(RunStore, runs_db_path(state_dir))
        try:
            async with open_checkpointer(config.checkpoint, state_dir) as saver:
                runtime = cls(
                    catalog=catalog,
                    models=models,
                    store=store,
                    checkpointer=saver,
                    settings=RuntimeSettings.from_config(config),
                    retriever=retriever,
                    profile=profile,
                    agents=agents,
                )
                try:
                    yield runtime
                finally:
                    await runtime.close()
        finally:
            await asyncio.to_thread(store.close)

    # -- preparing ------------------------------------------------------------------------------

    async def prepare(self, request: str, *, workflow: str | None = None) -> RunRecord:
        """Select a workflow, assemble the plan and record the run as ``planned`` (nothing executes)."""
        orchestrator = Orchestrator(self.models.caller(ORCHESTRATOR_ROLE), retries=self.settings.selection_retries)
        selection = await orchestrator.select(request, self.catalog, self._profile, workflow=workflow)
        plan = assemble_plan(self.catalog.get(selection.workflow), selection.stage_decisions, request)
        now = utc_now()
        record = await self.store.create(
            RunRecord(
                run_id=new_run_id(),
                status=RunStatus.PLANNED,
                request=request,
                workflow=selection.workflow,
                created_at=now,
                updated_at=now,
                selection=selection,
                plan=plan,
            )
        )
        rid = record.run_id
        await self.store.log(
            rid,
            DecisionKind.SELECTION,
            f"workflow {selection.workflow} via {selection.path.value}: {selection.rationale}",
            selection.model_dump(mode="json"),
        )
        for d in selection.stage_decisions:
            verdict = "INCLUDE" if d.include else "SKIP"
            await self.store.log(
                rid,
                DecisionKind.STAGE_DECISION,
                f"{d.stage_id}: {verdict} ({d.source.value}): {d.reason}",
                d.model_dump(),
            )
        await self.store.log(
            rid,
            DecisionKind.PLAN,
            f"{len(plan.stages)} stage(s) planned, {len(plan.skipped)} skipped; entry {plan.entry}",
            {
                "routing": {k: v.model_dump() for k, v in plan.routing.items()},
                "skipped": [s.stage_id for s in plan.skipped],
            },
        )
        return record

    def missing_models(self, plan: ExecutionPlan) -> list[str]:
        """Agent roles of ``plan`` that no model serves (empty when agents were injected)."""
        return [] if self._agents_injected else self.models.missing(plan.agent_roles)

    # -- running --------------------------------------------------------------------------------

    async def start(self, request: str, *, workflow: str | None = None) -> RunRecord:
        """Prepare and launch a run in the background; ``wait`` or ``subscribe`` to follow it."""
        record = await self.prepare(request, workflow=workflow)
        return await self._launch(record, resumed=False)

    async def run(self, request: str, *, workflow: str | None = None, wait_seconds: float | None = None) -> RunRecord:
        """Start a run and wait for its end."""
        record = await self.start(request, workflow=workflow)
        return await self.wait(record.run_id, wait_seconds=wait_seconds)

    async def wait(self, run_id: str, *, wait_seconds: float | None = None) -> RunRecord:
        """The run's record once it ended (``TimeoutError`` after ``wait_seconds``)."""
        task = self._tasks.get(run_id)
        if task is not None:
            await asyncio.wait_for(asyncio.shield(task), wait_seconds)
        return await self.get(run_id)

    async def resume(self, run_id: str) -> RunRecord:
        """Continue an interrupted run from its last checkpoint (or execute a planned one)."""
        record = await self.get(run_id)
        if record.status.finished:
            raise PipelineError(f"run {run_id} already ended ({record.status.value}); nothing to resume")
        if run_id in self._tasks or (record.status is RunStatus.RUNNING and record.pid != os.getpid()):
            raise PipelineError(f"run {run_id} is running (pid {record.pid}); cancel it first or wait")
        await self.store.clear_cancel(run_id)
        self._cancelled.discard(run_id)
        return await self._launch(record, resumed=record.status is not RunStatus.PLANNED)

    async def execute(self, run_id: str) -> RunRecord:
        """Launch a ``planned`` run (from ``prepare``) in the background."""
        record = await self.get(run_id)
        if record.status is not RunStatus.PLANNED:
            raise PipelineError(f"run {run_id} is {record.status.value}, not planned; use resume")
        return await self._launch(record, resumed=False)

    async def _launch(self, record: RunRecord, *, resumed: bool) -> RunRecord:
        plan = record.plan
        if plan is None:
            raise PipelineError(f"run {record.run_id} has no plan")
        if missing := self.missing_models(plan):
            raise PipelineError(
                f"no model for the role(s) {', '.join(missing)}; {HOW_TO_CONFIGURE}", code=ErrorCode.MODEL_UNAVAILABLE
            )
        updated = await self.store.update(
            record.run_id,
            status=RunStatus.RUNNING,
            pid=os.getpid(),
            resumed=record.resumed + (1 if resumed else 0),
            cancel_requested=False,
        )
        if resumed:
            await self.store.log(record.run_id, DecisionKind.RESUME, f"resumed (was {record.status.value})")
        self._tasks[record.run_id] = asyncio.create_task(self._execute(updated, plan), name=f"run {record.run_id}")
        return updated

    def _graph_config(self, run_id: str) -> RunnableConfig:
        return {"configurable": {"thread_id": run_id}, "recursion_limit": 2 * self.settings.max_iterations + 10}

    async def _is_cancelled(self, run_id: str) -> bool:
        return run_id in self._cancelled or await self.store.cancel_requested(run_id)

    async def _execute(self, record: RunRecord, plan: ExecutionPlan) -> RunRecord:
        run_id = record.run_id
        graph = compile_graph(plan, self._checkpointer)
        config = self._graph_config(run_id)
        reporter = await RunReporter.resume(run_id=run_id, plan=plan, bus=self.bus, store=self.store)
        context = RunContext(
            agents=self._agents,
            reporter=reporter,
            cancelled=lambda: self._is_cancelled(run_id),
            retriever=self._retriever,
            query_writer=self.models.caller(RETRIEVAL_ROLE),
            max_iterations=self.settings.max_iterations,
            stage_timeout_seconds=self.settings.stage_timeout_seconds,
        )
        has_checkpoint = await self._checkpointer.aget_tuple(config) is not None
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
        await reporter.emit(kind, status="running", summary=f"{plan.workflow}: {len(plan.stages)} stage(s) planned")
        stop: StopDecision
        try:
            # plain JSON input keeps the checkpoints free of pickled objects; LangGraph validates it
            stream = graph.astream(  # pyright: ignore[reportUnknownMemberType]
                cast("ExecutionState | None", graph_input),
                config,
                context=context,
                stream_mode="updates",
                durability="sync",
            )
            async for _ in stream:
                pass
            snapshot = await graph.aget_state(config)
            stop = decide_stop(plan, ExecutionState.model_validate(snapshot.values))
        except RunCancelled:
            stop = cancelled_stop()
        except GraphRecursionError:
            stop = error_stop(f"more than {self.settings.max_iterations} iterations (pipeline.max_iterations)")
        except asyncio.CancelledError:
            await self.store.update(run_id, status=RunStatus.INTERRUPTED, pid=None)
            await reporter.log(DecisionKind.ERROR, "interrupted: the runtime closed while the run was in flight")
            raise
        except Exception as exc:  # the run's boundary: an error ends this run, never the runtime
            logger.exception("run %s failed", run_id)
            stop = error_stop(f"{type(exc).__name__}: {exc}")
        return await self._finish(run_id, stop, reporter)

    async def _finish(self, run_id: str, stop: StopDecision, reporter: RunReporter) -> RunRecord:
        status = _STATUS_OF_STOP[stop.status]
        record = await self.store.update(run_id, status=status, stop=stop, finished_at=utc_now(), pid=None)
        await reporter.log(DecisionKind.STOP, f"{stop.status.value}: {stop.reason}", stop.model_dump(mode="json"))
        await reporter.emit(ProgressKind.RUN_FINISHED, status=status.value, summary=stop.reason, stop=stop)
        self._cancelled.discard(run_id)
        return record

    # -- cancelling and inspecting --------------------------------------------------------------

    async def cancel(self, run_id: str) -> RunRecord:
        """Best effort: no further node starts. A run no process executes is cancelled at once."""
        record = await self.get(run_id)
        if record.status.finished:
            return record
        await self.store.request_cancel(run_id)
        await self.store.log(run_id, DecisionKind.CANCEL, "cancel requested")
        if run_id in self._tasks and not self._tasks[run_id].done():
            self._cancelled.add(run_id)
            return await self.store.get(run_id)
        if record.status is RunStatus.RUNNING:
            return await self.store.get(run_id)  # another process executes it; its next node sees the flag
        stop = cancelled_stop(f"cancelled while {record.status.value}; nothing was running")
        plan = record.plan
        if plan is None:
            raise PipelineError(f"run {run_id} has no plan")
        return await self._finish(
            run_id, stop, await RunReporter.resume(run_id=run_id, plan=plan, bus=self.bus, store=self.store)
        )

    async def get(self, run_id: str) -> RunRecord:
        record = await self.store.get(run_id)
        return self._observed(record)

    def _observed(self, record: RunRecord) -> RunRecord:
        elsewhere = record.run_id not in self._tasks and record.pid != os.getpid()
        if record.status is RunStatus.RUNNING and elsewhere and not process_alive(record.pid):
            return record.model_copy(update={"status": RunStatus.INTERRUPTED})
        return record

    async def list_runs(self, limit: int = 50) -> list[RunRecord]:
        return [self._observed(r) for r in await self.store.list(limit)]

    async def decision_log(self, run_id: str) -> list[DecisionEntry]:
        await self.store.get(run_id)
        return await self.store.decisions(run_id)

    async def events(self, run_id: str) -> list[ExecutionProgress]:
        return await self.store.events(run_id)

    async def state(self, run_id: str) -> ExecutionState | None:
        """The run's last checkpointed execution state (None before its first step)."""
        record = await self.store.get(run_id)
        if record.plan is None:
            return None
        snapshot = await compile_graph(record.plan, self._checkpointer).aget_state(self._graph_config(run_id))
        return ExecutionState.model_validate(snapshot.values) if snapshot.values else None

    def subscribe(self, run_id: str | None = None) -> Subscription:
        """Live progress events of one run (ends after its ``run_finished``) or of all runs."""
        return self.bus.subscribe(run_id)

    async def close(self) -> None:
        tasks = [t for t in self._tasks.values() if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
