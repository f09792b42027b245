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
flight (they stay resumable). Fronts do not hold the runtime: they hold the run service
(``daemon.service.runs.service``), which holds it.

This module keeps the lifecycle of runs; the seams live beside it: ``run_preparation`` (selection,
plan, the ``planned`` record), ``run_execution`` (``RunEngine``: a run's or a follow-up's graph on the
run's checkpoint thread, and how a run ends), ``run_agents`` (each run's agents, commands, trust and
commits), ``follow_up`` (which runs take feedback, which stage answers it), ``runtime_settings``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypedDict, Unpack

from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver

from daemon.config import AgentsConfig, PipelineConfig, RunsConfig, VcsConfig
from daemon.core.run_models import (
    HOW_TO_CONFIGURE,
    Attachment,
    DecisionEntry,
    DecisionKind,
    ExecutionPlan,
    ExecutionProgress,
    RunCommands,
    RunMode,
    RunRecord,
    RunStatus,
    new_run_id,
)
from daemon.core.tasks import cancel_and_wait
from daemon.errors import ErrorCode, PipelineError
from daemon.orchestration.agents import CommandSources, FileReader
from daemon.orchestration.agents.run_workspace import RunWorkspace, plan_edits
from daemon.orchestration.checkpoints import open_checkpointer
from daemon.orchestration.current_run import run_task, within_run
from daemon.orchestration.follow_up import claim_follow_up
from daemon.orchestration.graph_builder import compile_graph
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.plan import assemble_plan
from daemon.orchestration.progress import ProgressBus, Subscription
from daemon.orchestration.project_profile import ProjectProfile, ProjectProfiler
from daemon.orchestration.reporter import RunReporter
from daemon.orchestration.retriever import AgentRetriever, Retriever
from daemon.orchestration.run_agents import RunAgents
from daemon.orchestration.run_execution import CancelFlags, RunEngine
from daemon.orchestration.run_preparation import announce, prepare_run
from daemon.orchestration.run_scope import RunScopeOpener
from daemon.orchestration.run_store import RunStore, host_name, process_alive
from daemon.orchestration.run_store_open import open_run_store
from daemon.orchestration.runtime_settings import RunHost, RuntimeSettings
from daemon.orchestration.sqlite_run_store import runs_db_path
from daemon.orchestration.stage_agents import AgentProvider
from daemon.orchestration.state import ExecutionState
from daemon.orchestration.stop_decision import cancelled_stop
from daemon.orchestration.workflow_loader import WorkflowCatalog
from daemon.vcs.worktrees import RunWorktrees

__all__ = ["PipelineRuntime", "RuntimeParts", "RuntimeSettings", "runs_db_path"]

DEFAULT_SETTINGS = RuntimeSettings()


class RuntimeParts(TypedDict, total=False):
    """The parts a runtime may be given (``PipelineRuntime.open``); each one left out is None (or empty)."""

    retriever: Retriever | None
    """What retrieval runs through (None: stages get no retrieved context)."""
    profile: ProjectProfile | ProjectProfiler | None
    """What the workspace's project looks like to the orchestrator: a fixed profile, or a ``ProjectProfiler``
    that follows the workspace's file names from run to run (None: not profiled)."""
    agents: AgentProvider | None
    """Agents injected in place of the model-backed ones (tests, benchmarks)."""
    worktrees: RunWorktrees | None
    """The workspace's run branches (code-mode runs edit in worktrees; None: no editing runs)."""
    workspace: Path | None
    """The folder read-only runs read (default: the worktrees' workspace)."""
    default_tools: Sequence[BaseTool]
    """Tools every run's agents get beside their file and command tools (ided's code-intel tools)."""
    commands: CommandSources | None
    """Where the commands come from and whether the repository's may run (default: the agents'
    configured commands, all the caller's own)."""
    run_scopes: RunScopeOpener | None
    """Opens each run's search scope (``daemon.orchestration.run_scope``: its retriever and tools over the
    run's tree; None: every run uses ``retriever`` and ``default_tools``)."""


class PipelineRuntime:
    def __init__(
        self,
        *,
        catalog: WorkflowCatalog,
        models: ModelRegistry,
        store: RunStore,
        checkpointer: BaseCheckpointSaver[str],
        settings: RuntimeSettings = DEFAULT_SETTINGS,
        **parts: Unpack[RuntimeParts],
    ) -> None:
        self.catalog = catalog
        self.models = models
        self.store = store
        self.settings = settings
        self.bus = ProgressBus()
        self.profile = parts.get("profile")
        self._tasks: dict[str, asyncio.Task[RunRecord]] = {}
        self.workspace = RunWorkspace(
            worktrees=parts.get("worktrees"), workspace=parts.get("workspace"), settings=settings.agents
        )
        self._flags = CancelFlags(store=store)
        commands = parts.get("commands")
        self._agents = RunAgents(
            catalog=catalog,
            models=models,
            store=store,
            workspace=self.workspace,
            commands=commands if commands is not None else CommandSources.given(settings.agents.commands),
            default_tools=parts.get("default_tools", ()),
            injected=parts.get("agents"),
            is_cancelled=self._flags.requested,
            run_scopes=parts.get("run_scopes"),
        )
        self._engine = RunEngine(
            store=store,
            bus=self.bus,
            checkpointer=checkpointer,
            workspace=self.workspace,
            agents=self._agents,
            models=models,
            settings=settings,
            retriever=parts.get("retriever"),
            flags=self._flags,
        )

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        *,
        catalog: WorkflowCatalog,
        models: ModelRegistry,
        state_dir: Path,
        config: PipelineConfig,
        agents_config: AgentsConfig | None = None,
        runs: RunsConfig | None = None,
        vcs: VcsConfig | None = None,
        long_lived: bool = False,
        **parts: Unpack[RuntimeParts],
    ) -> AsyncGenerator[PipelineRuntime]:
        """``parts``: see ``RuntimeParts``. ``agents_config``: commands and limits of the agents (``[agents]``);
        ``runs``: where records and checkpoints live (``[runs]``; default: SQLite files in ``state_dir``);
        ``vcs``: run branches (``include_uncommitted``: what a run that does not say gets); ``long_lived``: the
        host outlives its runs (a daemon: a spare worktree is kept ready, ``vcs.spare_worktree``)."""
        runs = runs or RunsConfig()
        worktrees = parts.get("worktrees")
        home = parts.get("workspace") or (worktrees.workspace if worktrees is not None else state_dir)
        async with (
            open_run_store(runs, state_dir=state_dir, workspace=home) as store,
            open_checkpointer(config.checkpoint, state_dir, database_url=runs.database_url) as saver,
        ):
            settings = RuntimeSettings.from_config(config, agents_config, vcs, long_lived=long_lived)
            runtime = cls(catalog=catalog, models=models, store=store, checkpointer=saver, settings=settings, **parts)
            try:
                yield runtime
            finally:
                await runtime.close()

    @property
    def commands(self) -> CommandSources:
        """Where the runs' commands come from and whether the repository's may run."""
        return self._agents.commands

    # -- preparing ------------------------------------------------------------------------------

    prepare = prepare_run
    """Select a workflow, assemble the plan and record the run as ``planned`` (``prepare_run``)."""

    def missing_models(self, plan: ExecutionPlan) -> list[str]:
        """Agent roles of ``plan`` that no model serves (empty when agents were injected)."""
        return [] if self._agents.injected else self.models.missing(plan.agent_roles)

    def run_commands(self, record: RunRecord) -> RunCommands:
        """The commands ``record``'s agents may run, and those withheld (an untrusted repository's)."""
        return self._agents.run_commands(record)

    def untrusted_commands(self, record: RunRecord) -> RunCommands | None:
        """For a planned editing run: its commands when the trust store withholds some now, else None."""
        return self._agents.untrusted_commands(record)

    async def warm(self) -> None:
        """Get ready for the first run before it is asked (a daemon's warm start): one workflow graph compiled
        (LangGraph's schemas), the retriever warmed (``RetrievalAgent.warm``), and a spare worktree checked out
        when the runtime keeps one."""
        workflow = next(iter(self.catalog.workflows.values()), None)
        if workflow is not None:
            plan = assemble_plan(workflow, [], "warm up")
            await asyncio.to_thread(compile_graph, plan)
        retriever = self._engine.retriever
        if isinstance(retriever, AgentRetriever):
            await retriever.agent.warm()
        if self.settings.spare_worktree:
            await self.workspace.prepare_spare()

    async def settled(self) -> None:
        """Wait for the work ended runs left behind (the next spare worktree)."""
        await asyncio.gather(*self._engine.background, return_exceptions=True)

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
            with within_run(run_id):
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
                await announce(record, RunReporter(run_id=run_id, plan=plan, bus=self.bus, store=self.store))
                return record
            if editing and plan_edits(plan):
                record = await self._engine.open_worktree(record)
            else:
                await self.workspace.release(run_id)
            self._agents.hosts[run_id] = RunHost(
                file_reader=file_reader, extra_tools=tuple(extra_tools), trusted=trusted
            )
            return await self._launch(record, resumed=False)
        except BaseException:
            await self.workspace.release(run_id)
            self._agents.hosts.pop(run_id, None)
            raise

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
        self._flags.local.discard(run_id)
        editing = record.changes is not None or (
            record.mode == "code" and self.workspace.can_edit and record.plan is not None and plan_edits(record.plan)
        )
        if editing:
            await self.workspace.acquire(run_id)
        try:
            if record.changes is None and editing:
                record = await self._engine.open_worktree(record)
            if trusted is not None:
                self._agents.hosts[run_id] = RunHost(trusted=trusted)
            return await self._launch(record, resumed=record.status is not RunStatus.PLANNED)
        except BaseException:
            await self.workspace.release(run_id)
            self._agents.hosts.pop(run_id, None)
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
        self._tasks[record.run_id] = run_task(
            self._engine.execute(updated, plan), record.run_id, name=f"run {record.run_id}"
        )
        return updated

    def in_flight(self) -> list[str]:
        """The runs this runtime executes now."""
        return [run_id for run_id, task in self._tasks.items() if not task.done()]

    def _in_flight(self, run_id: str) -> bool:
        return run_id in self._tasks and not self._tasks[run_id].done()

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
        have edited (a worktree) and not have been accepted or rejected yet (``claim_follow_up``).
        """
        record = await self.get(run_id)
        state = await self.state(run_id) if record.plan is not None else None
        claimed = await claim_follow_up(
            record,
            feedback,
            state=state,
            in_flight=self._in_flight(run_id),
            store=self.store,
            workspace=self.workspace,
        )
        self._flags.local.discard(run_id)
        self._agents.hosts[run_id] = RunHost(file_reader=file_reader, extra_tools=tuple(extra_tools), trusted=trusted)
        self._tasks[run_id] = run_task(
            self._engine.follow_up(claimed.record, claimed.plan, claimed.stage_id, feedback),
            run_id,
            name=f"follow-up {run_id}",
        )
        return claimed.record

    # -- cancelling and inspecting --------------------------------------------------------------

    async def cancel(self, run_id: str) -> RunRecord:
        """Best effort: no further node starts. A run no process executes is cancelled at once."""
        record = await self.get(run_id)
        if record.status.finished:
            return record
        await self.store.request_cancel(run_id)
        await self.store.log(run_id, DecisionKind.CANCEL, "cancel requested")
        if self._in_flight(run_id):
            self._flags.local.add(run_id)
            return await self.store.get(run_id)
        if record.status is RunStatus.RUNNING:
            return await self.store.get(run_id)  # another process executes it; its next node sees the flag
        stop = cancelled_stop(f"cancelled while {record.status.value}; nothing was running")
        plan = record.plan
        if plan is None:
            raise PipelineError(f"run {run_id} has no plan")
        return await self._engine.finish(
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
        return await self._engine.state(record.plan, run_id)

    def subscribe(self, run_id: str | None = None) -> Subscription:
        """Live progress events of one run (ends after its ``run_finished``) or of all runs."""
        return self.bus.subscribe(run_id)

    async def close(self) -> None:
        await cancel_and_wait(t for t in self._tasks.values() if not t.done())
        await cancel_and_wait(list(self._engine.background))
        await self._agents.scopes.aclose()
