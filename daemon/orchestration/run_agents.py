"""What one run's agents get: the provider over its worktree, the commands it may run, its commits.

``RunAgents`` holds the runtime's agent-side parts (models, commands, the run workspace, default tools)
and what each host lent a run (``RunHost``: an editor's file reader, a client's tools, trust). A run's
search scope (``scopes``, ``daemon.orchestration.run_scope``) replaces the default tools when the
runtime was given an opener: its code-intel and search tools see the run's tree. Commands:
a run gets the user's own; the repository's only when trusted (``CommandSources``); what an untrusted
run withheld is logged (``trust``) and said as a ``thought`` event. A ``lint_and_format`` stage adds the
formatters and linters found for the worktree. ``committer`` turns a stage attempt that changed files
into one commit on the run's branch, logged and added to the run's change set.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from langchain_core.tools import BaseTool

from daemon.core.run_models import DecisionKind, RunCommands, RunRecord
from daemon.core.workflow_schema import StageType
from daemon.orchestration.agents import CommandSources, ToolAgentProvider
from daemon.orchestration.agents.run_workspace import RunWorkspace, plan_edits
from daemon.orchestration.agents.toolchain import detect_toolchain
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.reporter import RunReporter
from daemon.orchestration.run_scope import RunScopeOpener, RunScopes
from daemon.orchestration.run_store import RunStore
from daemon.orchestration.runtime_settings import RunHost
from daemon.orchestration.stage_agents import AgentProvider, LlmAgentProvider
from daemon.orchestration.state import StageResult
from daemon.orchestration.workflow_loader import WorkflowCatalog

__all__ = ["Committer", "RunAgents"]

Committer = Callable[[StageResult], Awaitable[str | None]]


class RunAgents:
    """The agents of every run of one runtime; ``injected``: a provider a test or host passed (it gets no
    tools, no worktree environment and no command trust)."""

    def __init__(
        self,
        *,
        catalog: WorkflowCatalog,
        models: ModelRegistry,
        store: RunStore,
        workspace: RunWorkspace,
        commands: CommandSources,
        default_tools: Sequence[BaseTool] = (),
        injected: AgentProvider | None = None,
        is_cancelled: Callable[[str], Awaitable[bool]],
        run_scopes: RunScopeOpener | None = None,
    ) -> None:
        self._catalog = catalog
        self._models = models
        self._store = store
        self._workspace = workspace
        self.commands = commands
        self._default_tools = tuple(default_tools)
        self._provider: AgentProvider = injected or LlmAgentProvider(models)
        self.injected = injected is not None
        self._is_cancelled = is_cancelled
        self.hosts: dict[str, RunHost] = {}
        self.scopes = RunScopes(run_scopes)

    def run_commands(self, record: RunRecord) -> RunCommands:
        """The commands ``record``'s agents may run, and those withheld (an untrusted repository's)."""
        host = self.hosts.get(record.run_id, RunHost())
        trusted = host.trusted if host.trusted is not None else self.commands.trusted()
        name = record.workflow
        workflow = self._catalog.workflows.get(name) if name is not None else None
        return self.commands.for_run(name, workflow, trusted=trusted)

    def untrusted_commands(self, record: RunRecord) -> RunCommands | None:
        """For a planned code-mode run whose plan edits: its commands, when the user's trust store withholds
        some of them now (a front may ask, then pass ``trusted``); None when there is nothing to ask."""
        plan = record.plan
        if record.mode != "code" or plan is None or not plan_edits(plan) or self.injected:
            return None
        commands = self.run_commands(record)
        return commands if commands.withheld else None

    async def say_withheld(self, record: RunRecord, reporter: RunReporter) -> None:
        """Log and say which repository commands an editing run does not get (nothing when none)."""
        if record.changes is None or self.injected:
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

    async def provider(self, record: RunRecord, reporter: RunReporter) -> AgentProvider:
        """The injected provider, else tool-calling agents over the run's worktree or workspace."""
        if self.injected:
            return self._provider
        host = self.hosts.get(record.run_id, RunHost())
        scope = await self.scopes.get(record.run_id, record.changes)
        tools = tuple(scope.tools) if scope is not None else self._default_tools
        env = self._workspace.environment(
            record.run_id,
            record.changes,
            events=reporter,
            file_reader=host.file_reader,
            extra_tools=(*tools, *host.extra_tools),
            cancelled=lambda: self._is_cancelled(record.run_id),
            commands=await self._workflow_commands(record, reporter),
        )
        return ToolAgentProvider(self._models, env)

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

    def committer(self, run_id: str, *, feedback: str | None = None) -> Committer:
        """Commit a stage attempt's changes on the run's branch (None when it changed nothing)."""

        async def commit(result: StageResult) -> str | None:
            sha = await self._workspace.commit(run_id, result, feedback=feedback)
            if sha is not None:
                await self._store.log(
                    run_id,
                    DecisionKind.COMMIT,
                    f"{result.stage_id} attempt {result.attempt} committed {sha[:10]}",
                    {"stage_id": result.stage_id, "attempt": result.attempt, "commit": sha},
                )
                current = (await self._store.get(run_id)).changes
                if current is not None:
                    await self._store.update(
                        run_id,
                        changes=current.model_copy(update={"commits": (*current.commits, sha), "head_commit": sha}),
                    )
            return sha

        return commit
