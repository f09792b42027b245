"""The runtime API every front calls: prepare, start, wait, resume, cancel and inspect runs; progress events.

A run goes ``planned`` (selection + plan recorded; a dry run stops here) -> ``running`` -> one of
``succeeded``, ``failed``, ``aborted``, ``cancelled``, each with its ``StopDecision``. A ``running``
run whose process died shows as ``interrupted``; ``resume`` continues it from its last LangGraph
checkpoint (or starts a ``planned`` one). ``cancel`` is best effort: no further node starts; the
node in flight finishes. It works across processes: the flag lives in the run store and every node
checks it before it starts.

Modes: ``code`` (default) runs whose plan edits files work in their own git worktree on branch
``ided/run/<id>`` (the host passes ``RunWorktrees``), hold the workspace's edit lock while they
execute, commit every stage attempt that changed files, and end with their change set on the record
(``changes``) and a ``review`` event; ``ask`` runs get read-only tools and no worktree. A code run
whose plan edits on a folder that is not a git repository fails at start with ``not_a_repository``.
``follow_up`` answers review feedback with a new attempt of the run's last editing stage on the same
branch. Agents and their tools: ``daemon.orchestration.agents`` (docs/agents.md).

Commands: a run's agents get the user's own commands; the repository's (``.ided.toml``, a workflow
file in the workspace) only when the run is trusted (``CommandSources``: the host says where each
came from and whether the user trusts the workspace; ``start(trusted=...)`` decides for one run,
e.g. after a front asked). What an untrusted run withheld is logged (``trust``) and said as a
``thought`` event before its first stage.

Open with ``async with PipelineRuntime.open(...) as runtime:``; closing interrupts runs still in
flight (they stay resumable).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.errors import GraphRecursionError

from daemon.config import AgentsConfig, PipelineConfig, RunsConfig, VcsConfig
from daemon.errors import DaemonError, ErrorCode, PipelineError
from daemon.orchestration.agents import (
    EDITING_STAGE_TYPES,
    CommandSources,
    FileReader,
    RunCommands,
    ToolAgentProvider,
)
from daemon.orchestration.agents.run_workspace import RunWorkspace, plan_edits
from daemon.orchestration.agents.toolchain import detect_toolchain
from daemon.orchestration.checkpoints import open_checkpointer
from daemon.orchestration.graph_builder import RunCancelled, RunContext, compile_graph
from daemon.orchestration.llm_providers import HOW_TO_CONFIGURE, ORCHESTRATOR_ROLE, RETRIEVAL_ROLE, ModelRegistry
from daemon.orchestration.plan import ExecutionPlan, assemble_plan
from daemon.orchestration.progress import ExecutionProgress, ProgressBus, ProgressKind, Subscription
from daemon.orchestration.project_profile import ProjectProfile
from daemon.orchestration.reporter import RunReporter
from daemon.orchestration.retriever import Retriever, upfront_context
from daemon.orchestration.run_store import (
    DecisionEntry,
    DecisionKind,
    RunMode,
    RunRecord,
    RunStatus,
    RunStore,
    host_name,
    new_run_id,
    process_alive,
)
from daemon.orchestration.run_store_open import open_run_store
from daemon.orchestration.selection import Orchestrator
from daemon.orchestration.sqlite_run_store import runs_db_path
from daemon.orchestration.stage_agents import AgentProvider, AgentTask, LlmAgentProvider, run_stage
from daemon.orchestration.state import Attachment, ExecutionState, StageResult, to_channel_values
from daemon.orchestration.stop_decision import (
    StopDecision,
    StopStatus,
    cancelled_stop,
    decide_stop,
    error_stop,
    utc_now,
)
from daemon.orchestration.workflow_loader import WorkflowCatalog
from daemon.orchestration.workflow_schema import AgentSpec, StageType
from daemon.vcs import RunWorktrees

__all__ = ["PipelineRuntime", "RuntimeSettings", "runs_db_path"]

logger = logging.getLogger(__name__)

_STATUS_OF_STOP = {
    StopStatus.SUCCESS: RunStatus.SUCCEEDED,
    StopStatus.FAILURE: RunStatus.FAILED,
    StopStatus.ABORTED: RunStatus.ABORTED,
    StopStatus.CANCELLED: RunStatus.CANCELLED,
}


@dataclass(frozen=True, kw_only=True)
class RuntimeSettings:
    max_iterations: int = 50
    stage_timeout_seconds: float = 900.0
    selection_retries: int = 1
    agents: AgentsConfig = field(default_factory=AgentsConfig)
    include_uncommitted: bool = False
    """What a run that does not say gets (``vcs.include_uncommitted``)."""

    @classmethod
    def from_config(
        cls, config: PipelineConfig, agents: AgentsConfig | None = None, vcs: VcsConfig | None = None
    ) -> RuntimeSettings:
        return cls(
            max_iterations=config.max_iterations,
            stage_timeout_seconds=config.stage_timeout_seconds,
            selection_retries=config.selection_retries,
            agents=agents or AgentsConfig(),
            include_uncommitted=vcs.include_uncommitted if vcs is not None else False,
        )


@dataclass(frozen=True, kw_only=True)
class _RunHost:
    """What the host lent one run for its agents (not persisted: a resumed run gets what resume is given)."""

    file_reader: FileReader | None = None
    extra_tools: tuple[BaseTool, ...] = ()
    trusted: bool | None = None
    """Whether the repository's commands may run (None: as the user's trust store says)."""


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
        worktrees: RunWorktrees | None = None,
        workspace: Path | None = None,
        default_tools: Sequence[BaseTool] = (),
        commands: CommandSources | None = None,
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
        self.workspace = RunWorkspace(worktrees=worktrees, workspace=workspace, settings=settings.agents)
        self._hosts: dict[str, _RunHost] = {}
        self._default_tools = tuple(default_tools)
        self.commands = commands if commands is not None else CommandSources.given(settings.agents.commands)

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
        worktrees: RunWorktrees | None = None,
        workspace: Path | None = None,
        agents_config: AgentsConfig | None = None,
        default_tools: Sequence[BaseTool] = (),
        runs: RunsConfig | None = None,
        commands: CommandSources | None = None,
        vcs: VcsConfig | None = None,
    ) -> AsyncGenerator[PipelineRuntime]:
        """``worktrees``: the workspace's run branches (code-mode runs edit in worktrees; None: no editing
        runs); ``workspace``: the folder read-only runs read (default: the worktrees' workspace);
        ``agents_config``: commands and limits of the agents (``[agents]``); ``default_tools``: tools every
        run's agents get beside their file and command tools (ided's code-intel tools); ``runs``: where
        records and checkpoints live (``[runs]``; default: SQLite files in ``state_dir``); ``commands``: where
        the commands come from and whether the repository's may run (default: ``agents_config.commands``,
        all the caller's own); ``vcs``: run branches (``include_uncommitted``: what a run that does not say gets)."""
        runs = runs or RunsConfig()
        home = workspace or (worktrees.workspace if worktrees is not None else state_dir)
        async with (
            open_run_store(runs, state_dir=state_dir, workspace=home) as store,
            open_checkpointer(config.checkpoint, state_dir, database_url=runs.database_url) as saver,
        ):
            runtime = cls(
                catalog=catalog,
                models=models,
                store=store,
                checkpointer=saver,
                settings=RuntimeSettings.from_config(config, agents_config, vcs),
                retriever=retriever,
                profile=profile,
                agents=agents,
                worktrees=worktrees,
                workspace=workspace,
                default_tools=default_tools,
                commands=commands,
            )
            try:
                yield runtime
            finally:
                await runtime.close()

    # -- preparing ------------------------------------------------------------------------------

    async def prepare(
        self,
        request: str,
        *,
        workflow: str | None = None,
        mode: RunMode = "code",
        include_uncommitted: bool | None = None,
        attachments: Sequence[Attachment] = (),
        run_id: str | None = None,
    ) -> RunRecord:
        """Select a workflow, assemble the plan and record the run as ``planned`` (nothing executes).

        ``include_uncommitted``: the run's branch starts from HEAD plus the user's uncommitted changes
        (None: ``vcs.include_uncommitted`` of the configuration, ``RuntimeSettings.include_uncommitted``)."""
        orchestrator = Orchestrator(self.models.caller(ORCHESTRATOR_ROLE), retries=self.settings.selection_retries)
        selection = await orchestrator.select(request, self.catalog, self._profile, workflow=workflow)
        plan = assemble_plan(self.catalog.get(selection.workflow), selection.stage_decisions, request)
        now = utc_now()
        record = await self.store.create(
            RunRecord(
                run_id=run_id or new_run_id(),
                status=RunStatus.PLANNED,
                request=request,
                workflow=selection.workflow,
                created_at=now,
                updated_at=now,
                selection=selection,
                plan=plan,
                mode=mode,
                include_uncommitted=(
                    self.settings.include_uncommitted if include_uncommitted is None else include_uncommitted
                ),
                attachments=tuple(attachments),
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

    async def start(
        self,
        request: str,
        *,
        workflow: str | None = None,
        mode: RunMode = "code",
        dry_run: bool = False,
        include_uncommitted: bool | None = None,
        attachments: Sequence[Attachment] = (),
        file_reader: FileReader | None = None,
        extra_tools: Sequence[BaseTool] = (),
        trusted: bool | None = None,
    ) -> RunRecord:
        """Prepare and launch a run in the background; ``wait`` or ``subscribe`` to follow it.

        ``dry_run``: select and plan only (the record stays ``planned``; its plan and the orchestrator's
        reasoning are emitted as ``plan`` and ``thought`` events). ``mode``: ``code`` edits in a worktree
        when the plan edits and the runtime has worktrees; ``ask`` is read-only. ``file_reader``: how agents
        read the user's files (an editor's unsaved text); ``extra_tools``: more tools for every agent
        (ided's code-intel tools, a client's MCP tools); ``trusted``: whether the repository's commands may
        run (None: as the user's trust store says). An editing run takes the workspace's edit lock
        first: ``EditLockHeld`` when another run holds it (nothing is recorded then).
        """
        run_id = new_run_id()
        editing = mode == "code" and self.workspace.can_edit and not dry_run
        if editing:
            await self.workspace.acquire(run_id)
        try:
            record = await self.prepare(
                request,
                workflow=workflow,
                mode=mode,
                include_uncommitted=include_uncommitted,
                attachments=attachments,
                run_id=run_id,
            )
            plan = record.plan
            assert plan is not None
            if dry_run:
                reporter = RunReporter(run_id=run_id, plan=plan, bus=self.bus, store=self.store)
                await self._announce(record, reporter)
                return record
            if editing and plan_edits(plan):
                record = await self._open_worktree(record)
            else:
                await self.workspace.release(run_id)
            self._hosts[run_id] = _RunHost(file_reader=file_reader, extra_tools=tuple(extra_tools), trusted=trusted)
            return await self._launch(record, resumed=False)
        except BaseException:
            await self.workspace.release(run_id)
            self._hosts.pop(run_id, None)
            raise

    async def _open_worktree(self, record: RunRecord) -> RunRecord:
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

    async def _announce(self, record: RunRecord, reporter: RunReporter) -> None:
        """The plan and the orchestrator's reasoning as ``plan`` and ``thought`` events."""
        await reporter.emit_plan()
        selection = record.selection
        if selection is None:
            return
        await reporter.thought(f"Workflow {selection.workflow} ({selection.path.value}): {selection.rationale}")
        for d in selection.stage_decisions:
            await reporter.thought(f"{d.stage_id}: {'include' if d.include else 'skip'} ({d.source.value}): {d.reason}")

    async def run(
        self, request: str, *, workflow: str | None = None, wait_seconds: float | None = None, mode: RunMode = "code"
    ) -> RunRecord:
        """Start a run and wait for its end."""
        record = await self.start(request, workflow=workflow, mode=mode)
        return await self.wait(record.run_id, wait_seconds=wait_seconds)

    async def wait(self, run_id: str, *, wait_seconds: float | None = None) -> RunRecord:
        """The run's record once it ended (``TimeoutError`` after ``wait_seconds``)."""
        task = self._tasks.get(run_id)
        if task is not None:
            await asyncio.wait_for(asyncio.shield(task), wait_seconds)
        return await self.get(run_id)

    async def resume(self, run_id: str, *, trusted: bool | None = None) -> RunRecord:
        """Continue an interrupted run from its last checkpoint (or execute a planned one); ``trusted`` as
        for ``start``."""
        record = await self.get(run_id)
        if record.status.finished:
            raise PipelineError(f"run {run_id} already ended ({record.status.value}); nothing to resume")
        mine = record.pid == os.getpid() and record.host in (None, host_name())
        if run_id in self._tasks or (record.status is RunStatus.RUNNING and not mine):
            where = f" on {record.host}" if record.host and record.host != host_name() else ""
            raise PipelineError(f"run {run_id} is running (pid {record.pid}{where}); cancel it first or wait")
        await self.store.clear_cancel(run_id)
        self._cancelled.discard(run_id)
        editing = record.changes is not None or (
            record.mode == "code" and self.workspace.can_edit and record.plan is not None and plan_edits(record.plan)
        )
        if editing:
            await self.workspace.acquire(run_id)
        try:
            if record.changes is None and editing:
                record = await self._open_worktree(record)
            if trusted is not None:
                self._hosts[run_id] = _RunHost(trusted=trusted)
            return await self._launch(record, resumed=record.status is not RunStatus.PLANNED)
        except BaseException:
            await self.workspace.release(run_id)
            self._hosts.pop(run_id, None)
            raise

    async def execute(self, run_id: str, *, trusted: bool | None = None) -> RunRecord:
        """Launch a ``planned`` run (from ``prepare``) in the background; ``trusted`` as for ``start``."""
        record = await self.get(run_id)
        if record.status is not RunStatus.PLANNED:
            raise PipelineError(f"run {run_id} is {record.status.value}, not planned; use resume")
        return await self.resume(run_id, trusted=trusted)

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
            host=host_name(),
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

    async def _upfront(self, plan: ExecutionPlan, reporter: RunReporter) -> dict[str, Any]:
        """Planning-time context for every planned stage (the retrieval agent's upfront mode), as channel JSON."""
        context = await upfront_context(plan, self._retriever)
        if context:
            counts = {stage_id: len(snippets) for stage_id, snippets in context.items()}
            await reporter.log(
                DecisionKind.ENRICHMENT,
                "upfront retrieval: " + ", ".join(f"{k} {v} piece(s)" for k, v in counts.items()),
                {"mode": "upfront", "pieces": counts},
            )
        return to_channel_values(enriched_context=context)["enriched_context"]

    async def _execute(self, record: RunRecord, plan: ExecutionPlan) -> RunRecord:
        run_id = record.run_id
        graph = compile_graph(plan, self._checkpointer)
        config = self._graph_config(run_id)
        reporter = await RunReporter.resume(run_id=run_id, plan=plan, bus=self.bus, store=self.store)
        context = RunContext(
            agents=await self._provider(record, reporter),
            reporter=reporter,
            cancelled=lambda: self._is_cancelled(run_id),
            retriever=self._retriever,
            query_writer=self.models.caller(RETRIEVAL_ROLE),
            max_iterations=self.settings.max_iterations,
            stage_timeout_seconds=self.settings.stage_timeout_seconds,
            commit=self._committer(run_id) if record.changes is not None else None,
            attachments=record.attachments,
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
        if has_checkpoint:
            await reporter.emit_plan()
        else:
            await self._announce(record, reporter)
        await self._say_withheld(record, reporter)
        stop: StopDecision
        try:
            if graph_input is not None:
                graph_input["enriched_context"] = await self._upfront(plan, reporter)
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
            await self.workspace.release(run_id)
            raise
        except Exception as exc:  # the run's boundary: an error ends this run, never the runtime
            logger.exception("run %s failed", run_id)
            stop = error_stop(f"{type(exc).__name__}: {exc}")
        return await self._finish(run_id, stop, reporter)

    async def _finish(self, run_id: str, stop: StopDecision, reporter: RunReporter) -> RunRecord:
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
        self._hosts.pop(run_id, None)
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
        self._cancelled.discard(run_id)
        return record

    # -- agents and commits -----------------------------------------------------------------------

    def run_commands(self, record: RunRecord) -> RunCommands:
        """The commands ``record``'s agents may run, and those withheld (an untrusted repository's)."""
        host = self._hosts.get(record.run_id, _RunHost())
        trusted = host.trusted if host.trusted is not None else self.commands.trusted()
        name = record.workflow
        workflow = self.catalog.workflows.get(name) if name is not None else None
        return self.commands.for_run(name, workflow, trusted=trusted)

    def untrusted_commands(self, record: RunRecord) -> RunCommands | None:
        """For a planned code-mode run whose plan edits: its commands, when the user's trust store withholds
        some of them now (a front may ask, then pass ``trusted``); None when there is nothing to ask."""
        plan = record.plan
        if record.mode != "code" or plan is None or not plan_edits(plan) or self._agents_injected:
            return None
        commands = self.run_commands(record)
        return commands if commands.withheld else None

    async def _say_withheld(self, record: RunRecord, reporter: RunReporter) -> None:
        """Log and say which repository commands an editing run does not get (nothing when none)."""
        if record.changes is None or self._agents_injected:
            return
        commands = self.run_commands(record)
        if not commands.withheld:
            return
        text = commands.explain()
        await reporter.log(
            DecisionKind.TRUST,
            text,
            {
                "withheld": [{"name": w.name, "command": w.line, "source": w.source} for w in commands.withheld],
                "how_to_trust": commands.how_to_trust,
            },
        )
        await reporter.thought(text)

    async def _provider(self, record: RunRecord, reporter: RunReporter) -> AgentProvider:
        """The injected provider, else tool-calling agents over the run's worktree or workspace."""
        if self._agents_injected:
            return self._agents
        host = self._hosts.get(record.run_id, _RunHost())
        env = self.workspace.environment(
            record.run_id,
            record.changes,
            events=reporter,
            file_reader=host.file_reader,
            extra_tools=(*self._default_tools, *host.extra_tools),
            cancelled=lambda: self._is_cancelled(record.run_id),
            commands=await self._workflow_commands(record, reporter),
        )
        return ToolAgentProvider(self.models, env)

    async def _workflow_commands(self, record: RunRecord, reporter: RunReporter) -> dict[str, str]:
        """The commands the run may run (``run_commands``: the workflow's and the project's, the repository's
        only when trusted), after the formatters and linters found for the worktree when the plan has a
        lint_and_format stage (the named ones win a clash)."""
        named = dict(self.run_commands(record).named)
        plan = record.plan
        if record.changes is None or plan is None:
            return named
        if not any(stage.type is StageType.LINT_AND_FORMAT for stage in plan.stages):
            return named
        toolchain = await asyncio.to_thread(detect_toolchain, Path(record.changes.worktree))
        await reporter.log(
            DecisionKind.PLAN,
            f"lint_and_format toolchain: {toolchain.summary()}",
            {"commands": toolchain.commands, "missing": list(toolchain.missing)},
        )
        return {**toolchain.commands, **named}

    def _committer(self, run_id: str, *, feedback: str | None = None) -> Any:
        async def commit(result: StageResult) -> str | None:
            sha = await self.workspace.commit(run_id, result, feedback=feedback)
            if sha is not None:
                await self.store.log(
                    run_id,
                    DecisionKind.COMMIT,
                    f"{result.stage_id} attempt {result.attempt} committed {sha[:10]}",
                    {"stage_id": result.stage_id, "attempt": result.attempt, "commit": sha},
                )
                current = (await self.store.get(run_id)).changes
                if current is not None:
                    await self.store.update(
                        run_id,
                        changes=current.model_copy(update={"commits": (*current.commits, sha), "head_commit": sha}),
                    )
            return sha

        return commit

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
        here = record.host in (None, host_name())
        elsewhere = record.run_id not in self._tasks and (record.pid != os.getpid() or not here)
        if record.status is RunStatus.RUNNING and elsewhere and not process_alive(record.pid, record.host):
            return record.model_copy(update={"status": RunStatus.INTERRUPTED})
        return record

    async def list_runs(self, limit: int = 50, *, all_workspaces: bool = False) -> list[RunRecord]:
        """Newest first: this workspace's runs, or with ``all_workspaces`` every writer's in the store."""
        return [self._observed(r) for r in await self.store.list(limit, all_workspaces=all_workspaces)]

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

    async def follow_up(
        self,
        run_id: str,
        feedback: str,
        *,
        file_reader: FileReader | None = None,
        extra_tools: Sequence[BaseTool] = (),
        trusted: bool | None = None,
    ) -> RunRecord:
        """Answer review feedback: a new attempt of the run's last editing stage, with the feedback in its
        context, on the same branch; its changes become a new commit and the run ends with a review again.

        Launched in the background like ``start`` (``wait`` or ``subscribe``). The run must have ended,
        have edited (a worktree) and not have been accepted or rejected yet.
        """
        record = await self.get(run_id)
        if not feedback.strip():
            raise PipelineError("feedback is empty: say what to change")
        if not record.status.finished or (run_id in self._tasks and not self._tasks[run_id].done()):
            raise PipelineError(f"run {run_id} is {record.status.value}; feedback is answered once it has ended")
        plan = record.plan
        if record.changes is None or plan is None or not self.workspace.can_edit:
            raise PipelineError(f"run {run_id} made no edits (a read-only run); there is nothing to follow up")
        state = await self.state(run_id)
        stage_id = _last_editing_stage(plan, state)
        if stage_id is None:
            raise PipelineError(f"run {run_id} has no editing stage that ran; there is nothing to follow up")
        await self.workspace.acquire(run_id)
        try:
            branch = await asyncio.to_thread(self.workspace.review_state, run_id)
            if branch != "open":
                raise PipelineError(f"run {run_id} was already {branch.replace('_', ' ')}; start a new run instead")
            await self.store.clear_cancel(run_id)
            self._cancelled.discard(run_id)
            updated = await self.store.update(
                run_id,
                status=RunStatus.RUNNING,
                pid=os.getpid(),
                host=host_name(),
                follow_ups=record.follow_ups + 1,
                stop=None,
            )
        except BaseException:
            await self.workspace.release(run_id)
            raise
        self._hosts[run_id] = _RunHost(file_reader=file_reader, extra_tools=tuple(extra_tools), trusted=trusted)
        previous = tuple(state.stage_results.get(stage_id, ())) if state is not None else ()
        self._tasks[run_id] = asyncio.create_task(
            self._follow_up(updated, plan, stage_id, previous, feedback), name=f"follow-up {run_id}"
        )
        return updated

    async def _follow_up(
        self,
        record: RunRecord,
        plan: ExecutionPlan,
        stage_id: str,
        previous: tuple[StageResult, ...],
        feedback: str,
    ) -> RunRecord:
        run_id = record.run_id
        stage = plan.stage(stage_id)
        attempt = max((r.attempt for r in previous), default=0) + 1
        reporter = await RunReporter.resume(run_id=run_id, plan=plan, bus=self.bus, store=self.store)
        await reporter.log(DecisionKind.FOLLOW_UP, f"feedback for {stage_id} (attempt {attempt}): {feedback}")
        await reporter.emit(ProgressKind.RUN_RESUMED, status="running", summary=f"feedback: {feedback}")
        await reporter.thought(
            f"Feedback goes to {stage.name} (attempt {attempt}) on {record.changes and record.changes.branch}"
        )
        await self._say_withheld(record, reporter)
        stop: StopDecision
        try:
            state = await self.state(run_id) or ExecutionState(run_id=run_id, request=plan.request)
            await reporter.node_started(stage_id, state, attempt=attempt)
            provider = await self._provider(record, reporter)

            def make_task(spec: AgentSpec) -> AgentTask:
                return AgentTask(
                    run_id=run_id,
                    stage=stage,
                    agent=spec,
                    attempt=attempt,
                    workflow_type=plan.workflow_type,
                    previous=previous,
                    request=plan.request,
                    attachments=record.attachments,
                    feedback=feedback,
                )

            result = await run_stage(
                stage, provider, make_task, attempt=attempt, limit_seconds=self.settings.stage_timeout_seconds
            )
            commit = await self._committer(run_id, feedback=feedback)(result)
            result = result.model_copy(update={"commit": commit, "feedback": feedback})
            after = state.model_copy(update={"stage_results": {**state.stage_results, stage_id: [*previous, result]}})
            await reporter.stage_finished(result, after)
            verdict = StopStatus.FAILURE if result.failed else StopStatus.SUCCESS
            stop = StopDecision(
                status=verdict,
                reason=f"follow-up: {stage_id} attempt {attempt} {'failed' if result.failed else 'succeeded'}: "
                f"{result.summary}",
                evidence_refs=(f"run:{run_id}/stage:{stage_id}/attempt:{attempt}",),
            )
        except asyncio.CancelledError:
            await self.store.update(run_id, status=RunStatus.INTERRUPTED, pid=None)
            await self.workspace.release(run_id)
            raise
        except Exception as exc:  # the run's boundary: an error ends this follow-up, never the runtime
            logger.exception("follow-up of run %s failed", run_id)
            stop = error_stop(f"{type(exc).__name__}: {exc}")
        return await self._finish(run_id, stop, reporter)

    async def close(self) -> None:
        tasks = [t for t in self._tasks.values() if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


def _last_editing_stage(plan: ExecutionPlan, state: ExecutionState | None) -> str | None:
    """The editing stage feedback goes to: the last one that committed changes, else the last one that ran."""
    if state is None:
        return None
    ran = [
        (any(r.commit for r in results), results[-1].finished_at, stage.stage_id)
        for stage in plan.stages
        if stage.type in EDITING_STAGE_TYPES and (results := state.stage_results.get(stage.stage_id))
    ]
    return max(ran)[2] if ran else None
