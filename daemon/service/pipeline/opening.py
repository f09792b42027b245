"""Open the pipeline runtime for a workspace: the one place every front (CLI, LSP, ACP) gets it from.

``open_pipeline(config, models_needed=...)`` builds what a ``PipelineRuntime`` needs for the
workspace in ``config``: the workflow catalog (built-in + the workspace's), the model registry
(from ``[pipeline.models]`` and the API keys in ``env``; a replay script when configured), the
project profile (a ``ProjectProfiler``: walked at open, walked again for a run only when a folder changed),
and the retrieval agent (``daemon.retrieval``) over one ``Workspace`` port
(``open_workspace``: the daemon's when one runs, one connection for the whole runtime, else the
index opened in this process) and the run history; when the workspace serves code intelligence it
also becomes the agents' code-intel tools (``agent_tools``, derived from the capability registry).
Inside a run, retrieval and those tools see the run's tree (``daemon.service.pipeline.run_scope``: the run's
changed files laid over the workspace index, dropped when the run ends).
``models_needed=False`` opens a light runtime for inspecting, listing and cancelling runs: no
models, no profile, no retriever, no worktrees.

``command_sources`` tells the runtime which commands are the user's own and which the repository
brought (its ``.ided.toml``, workflow files in the workspace): those run only while the user trusts
the workspace (``daemon.trust``; docs/configuration.md, "Workspace trust").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypedDict, Unpack

from daemon.config import Config
from daemon.core.models import ChunkKind, SearchFilters
from daemon.core.ports import Workspace
from daemon.errors import DaemonError, ErrorCode, WorkflowError
from daemon.orchestration.agents import CommandSources
from daemon.orchestration.llm_providers import RETRIEVAL_ROLE, ModelRegistry
from daemon.orchestration.project_profile import ProjectProfiler
from daemon.orchestration.resilience import ResilienceLayer
from daemon.orchestration.retriever import AgentRetriever, RetrievalQuery, RetrievedSnippet
from daemon.orchestration.run_store import RunStore
from daemon.orchestration.run_store_open import connect_run_store
from daemon.orchestration.runtime import PipelineRuntime
from daemon.orchestration.workflow_loader import WorkflowCatalog, workflow_dirs
from daemon.service.intel.agent_tools import code_intel_tools
from daemon.service.pipeline.retrieval_sources import agent_retriever, build_retrieval_agent
from daemon.service.pipeline.run_scope import RunScopeFactory
from daemon.service.wire.client import ClientKind
from daemon.service.workspace.choice import workspace_for
from daemon.service.workspace.local import LocalWorkspace
from daemon.trust import TrustStore, how_to_trust
from daemon.vcs.worktrees import RunWorktrees

__all__ = [
    "PipelineChoices",
    "WorkspaceRetriever",
    "command_sources",
    "llm_cache_path",
    "load_catalog",
    "open_pipeline",
    "open_workspace",
]

logger = logging.getLogger(__name__)


def llm_cache_path(config: Config) -> Path:
    return config.state_path / "pipeline" / "llm_cache.sqlite3"


class WorkspaceRetriever:
    """The pipeline's ``Retriever`` over the ``Workspace`` port's search (whichever transport it uses)."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    async def retrieve(self, query: RetrievalQuery) -> list[RetrievedSnippet]:
        source = query.source
        kind = ChunkKind(source.kind) if source is not None and source.kind in ("code", "docs") else None
        globs: Sequence[str | None] = (source.paths[:3] if source is not None and source.paths else None) or [None]
        snippets: list[RetrievedSnippet] = []
        for glob in globs:
            filters = SearchFilters(kind=kind, path_glob=glob)
            try:
                result = await self._workspace.search(query.text, k=query.k, filters=filters)
            except DaemonError as exc:
                logger.warning("adaptive retrieval has no index: %s", exc)
                return snippets
            snippets.extend(
                RetrievedSnippet(
                    path=h.chunk.path,
                    start_line=h.chunk.start_line,
                    end_line=h.chunk.end_line,
                    text=h.chunk.text,
                    score=h.score,
                )
                for h in result.hits
            )
        return snippets


def open_workspace(config: Config, client: ClientKind) -> contextlib.AbstractAsyncContextManager[Workspace]:
    """The workspace daemon's ``Workspace`` when one runs (one connection, kept), else the index opened in this
    process in the background (``workspace_for``, ``daemon="running"``)."""
    return workspace_for(config, daemon="running", client=client, local=lambda: LocalWorkspace.open_index(config))


def load_catalog(config: Config) -> WorkflowCatalog:
    """The workspace's workflows; ``WorkflowError`` when not one of them is valid.

    Files with problems are left out (``catalog.problems`` says why); the caller shows them.
    """
    catalog = WorkflowCatalog.load(workflow_dirs(config.workspace_path, config.pipeline.workflow_dirs))
    if not catalog.workflows:
        raise WorkflowError(
            f"no valid workflow found for {config.workspace_path} ({len(catalog.problems)} problem(s); "
            "`ided workflows validate` explains)",
            code=ErrorCode.WORKFLOW_INVALID,
        )
    return catalog


def command_sources(
    config: Config, catalog: WorkflowCatalog, *, env: Mapping[str, str] | None = None
) -> CommandSources:
    """Which of ``config``'s and ``catalog``'s commands the repository brought, and the user's trust in it.

    Repository content: the workspace's ``.ided.toml`` and every workflow file under the workspace or
    under a ``pipeline.workflow_dirs`` entry that the ``.ided.toml`` names. Trust is read from the
    user's trust file (``env``: where its location is read; default this process's) at each run.
    """
    root = config.workspace_path.resolve()
    project = config.project
    repo_dirs = [(Path(d) if Path(d).is_absolute() else root / d).resolve() for d in project.workflow_dirs if d.strip()]

    def from_repository(source: str) -> bool:
        path = Path(source).resolve()
        return path.is_relative_to(root) or any(path.is_relative_to(d) for d in repo_dirs)

    store = TrustStore.default(env)
    return CommandSources(
        own=project.own_commands if project.own_commands is not None else dict(config.agents.commands),
        repository=project.commands,
        repository_file=project.file or str(root / ".ided.toml"),
        repository_workflows={
            name: source for name, source in catalog.sources.items() if source != "<memory>" and from_repository(source)
        },
        trusted=lambda: store.trusted(root),
        how_to_trust=how_to_trust(root),
    )


class PipelineChoices(TypedDict, total=False):
    """What a front may choose when it opens the pipeline (``open_pipeline``, ``RunWork.open``)."""

    catalog: WorkflowCatalog | None
    """An already loaded catalog (else ``load_catalog``)."""
    env: Mapping[str, str] | None
    """Where API keys are read (default: this process's environment; the fronts are the composition roots
    that may narrow it)."""
    client: ClientKind
    """The front, as the daemon's client list shows it when retrieval searches through it (default ``cli``)."""
    long_lived: bool
    """The host outlives its runs (the daemon's run service): a spare worktree is kept ready for the next editing
    run (``vcs.spare_worktree``) and ``warm`` is worth calling."""
    workspace: Workspace | None
    """The ``Workspace`` retrieval searches and, when it serves code intelligence, the agents' code-intel
    tools answer through (search, definitions, references, signatures); default with models:
    ``open_workspace`` — the workspace daemon's when one runs (the ACP and LSP fronts attach to it first,
    so their runs have it), else the index in this process (agents then read and grep files only)."""


@asynccontextmanager
async def open_pipeline(
    config: Config,
    *,
    models_needed: bool,
    worktrees: RunWorktrees | None = None,
    **choices: Unpack[PipelineChoices],
) -> AsyncGenerator[PipelineRuntime]:
    """A ``PipelineRuntime`` for ``config``'s workspace, closed (runs in flight interrupted) on exit.

    ``choices``: see ``PipelineChoices``. ``worktrees``: the workspace's run branches (default with
    models: ``RunWorktrees.for_config``). In a folder that is not a git repository a code-mode run whose
    plan edits fails at start with ``not_a_repository`` (ask-mode runs work). A front may pass its own
    instance to share it with its ``RunReview``.
    Raises ``DaemonError`` (bad model configuration, no valid workflow).
    """
    catalog, env, workspace = choices.get("catalog"), choices.get("env"), choices.get("workspace")
    client: ClientKind = choices.get("client", "cli")
    pipeline = config.pipeline
    layer = ResilienceLayer(pipeline.resilience, cache_path=llm_cache_path(config) if models_needed else None)
    try:
        models = (
            ModelRegistry.from_config(
                pipeline, env=os.environ if env is None else env, layer=layer, workspace=config.workspace_path
            )
            if models_needed
            else ModelRegistry.none(layer)
        )
    except DaemonError:
        layer.close()
        raise
    history: RunStore | None = None
    root = config.workspace_path
    async with contextlib.AsyncExitStack() as stack:
        try:
            if workspace is None and models_needed:
                workspace = await stack.enter_async_context(open_workspace(config, client))
            workflows = catalog if catalog is not None else load_catalog(config)
            profile = ProjectProfiler(config.workspace_path) if models_needed else None
            if profile is not None:
                await asyncio.to_thread(profile.current)  # walked now; each run only checks its folders
            agent: AgentRetriever | None = None
            if workspace is not None and models_needed:
                history = await asyncio.to_thread(
                    connect_run_store, config.runs, state_dir=config.state_path, workspace=config.workspace_path
                )
                agent = agent_retriever(
                    build_retrieval_agent(
                        config,
                        index=None,
                        search=workspace,
                        code_intel=workspace if workspace.serves_intel else None,
                        run_store=history,
                        model=models.caller(RETRIEVAL_ROLE),
                        env=os.environ if env is None else env,
                    )
                )
            if worktrees is None and models_needed:
                worktrees = RunWorktrees.for_config(config)
            tools = code_intel_tools(workspace) if workspace is not None and workspace.serves_intel else ()
            scopes = (
                RunScopeFactory(config, workspace=workspace, agent=agent.agent, worktrees=worktrees)
                if workspace is not None and agent is not None
                else None
            )
            async with PipelineRuntime.open(
                catalog=workflows,
                models=models,
                state_dir=config.state_path,
                config=pipeline,
                retriever=agent,
                profile=profile,
                worktrees=worktrees,
                workspace=root,
                agents_config=config.agents,
                runs=config.runs,
                default_tools=tools,
                commands=command_sources(config, workflows, env=env),
                vcs=config.vcs,
                long_lived=choices.get("long_lived", False),
                run_scopes=scopes,
            ) as runtime:
                yield runtime
        finally:
            if history is not None:
                await asyncio.to_thread(history.close)
            layer.close()
