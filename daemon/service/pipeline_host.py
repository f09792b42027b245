"""Open the pipeline runtime for a workspace: the one place every front (CLI, LSP, ACP) gets it from.

``open_pipeline(config, models_needed=...)`` builds what a ``PipelineRuntime`` needs for the
workspace in ``config``: the workflow catalog (built-in + the workspace's), the model registry
(from ``[pipeline.models]`` and the API keys in ``env``; a replay script when configured), the
project profile, and the retrieval agent (``daemon.retrieval``) over the workspace index (the
daemon's when one runs, else the index opened in this process), the daemon's language servers and
the run history; the daemon's code intelligence also becomes the agents' code-intel tools.
``models_needed=False`` opens a light runtime for
inspecting, listing and cancelling runs: no models, no profile, no retriever, no worktrees.

``command_sources`` tells the runtime which commands are the user's own and which the repository
brought (its ``.ided.toml``, workflow files in the workspace): those run only while the user trusts
the workspace (``daemon.trust``; docs/configuration.md, "Workspace trust").
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncGenerator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path

from daemon.config import Config
from daemon.core.models import ChunkKind, SearchFilters, SearchResult
from daemon.errors import DaemonError, ErrorCode, WorkflowError
from daemon.orchestration.agents import CommandSources
from daemon.orchestration.llm_providers import RETRIEVAL_ROLE, ModelRegistry
from daemon.orchestration.project_profile import profile_project
from daemon.orchestration.resilience import ResilienceLayer
from daemon.orchestration.retriever import RetrievalQuery, RetrievedSnippet, Retriever
from daemon.orchestration.run_store import RunStore
from daemon.orchestration.run_store_open import connect_run_store
from daemon.orchestration.runtime import PipelineRuntime
from daemon.orchestration.workflow_loader import WorkflowCatalog, workflow_dirs
from daemon.service.agent_tools import CodeIntel, code_intel_tools
from daemon.service.api import Methods, SearchParams
from daemon.service.daemon_client import ClientKind, DaemonClient
from daemon.service.daemon_files import remove_stale
from daemon.service.remote_code_intel import RemoteCodeIntel
from daemon.service.retrieval_sources import agent_retriever, build_retrieval_agent
from daemon.service.workspace_index import WorkspaceIndex
from daemon.trust import TrustStore, how_to_trust
from daemon.vcs import RunWorktrees

__all__ = ["IndexRetriever", "command_sources", "llm_cache_path", "load_catalog", "open_pipeline"]

logger = logging.getLogger(__name__)

SEARCH_WAIT_S = 60.0
"""Upper bound for one search through the daemon."""

CLOSE_WAIT_S = 60.0
"""Upper bound for closing the locally opened index."""


def llm_cache_path(config: Config) -> Path:
    return config.state_path / "pipeline" / "llm_cache.sqlite3"


class IndexRetriever:
    """The pipeline's ``Retriever`` over the workspace index: the daemon's when it runs, else opened here.

    The local index is opened once, on first use, in a dedicated thread that owns it until ``close``.
    """

    def __init__(self, config: Config, *, client: ClientKind = "cli") -> None:
        self._config = config
        self._client: ClientKind = client
        self._remote = remove_stale(config.state_path) is not None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ided-index")
        self._index: WorkspaceIndex | None = None
        self._failed: str | None = None

    def _params(self, query: RetrievalQuery) -> list[SearchParams]:
        source = query.source
        kind = ChunkKind(source.kind) if source is not None and source.kind in ("code", "docs") else None
        globs: Sequence[str | None] = (source.paths[:3] if source is not None and source.paths else None) or [None]
        return [SearchParams(query=query.text, k=query.k, kind=kind, path_glob=g) for g in globs]

    def _local_search(self, params: SearchParams) -> SearchResult | None:
        if self._failed is not None:
            return None
        if self._index is None:
            try:
                self._index = WorkspaceIndex.open(self._config)
            except DaemonError as exc:
                self._failed = str(exc)
                logger.warning("adaptive retrieval has no index: %s", exc)
                return None
        return self._index.search(params.query, k=params.k, filters=params.filters(), mode=params.mode)

    async def _search(self, params: SearchParams) -> SearchResult | None:
        if self._remote:
            client = await DaemonClient.attach(self._config, client=self._client, start=False)
            async with client:
                raw = await client.call(Methods.INDEX_SEARCH, params, wait_s=SEARCH_WAIT_S)
                return SearchResult.model_validate(raw)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._local_search, params)

    async def search(self, query: str, *, k: int, filters: SearchFilters | None) -> SearchResult:
        """The retrieval agent's index port (``IndexSearch``): the daemon's index or the local one."""
        params = SearchParams(
            query=query,
            k=k,
            kind=filters.kind if filters is not None else None,
            language=filters.language if filters is not None else None,
            path_glob=filters.path_glob if filters is not None else None,
        )
        found = await self._search(params)
        if found is None:
            raise DaemonError(f"no workspace index to search: {self._failed}")
        return found

    async def retrieve(self, query: RetrievalQuery) -> list[RetrievedSnippet]:
        snippets: list[RetrievedSnippet] = []
        for params in self._params(query):
            result = await self._search(params)
            if result is None:
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

    def close(self) -> None:
        def shut() -> None:
            if self._index is not None:
                self._index.close()

        self._pool.submit(shut).result(timeout=CLOSE_WAIT_S)
        self._pool.shutdown(wait=True)


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


async def _daemon_intel(config: Config, client: ClientKind) -> RemoteCodeIntel | None:
    """The running daemon's code intelligence, or None when no daemon serves the workspace."""
    if await asyncio.to_thread(remove_stale, config.state_path) is None:
        return None
    try:
        return RemoteCodeIntel(config, await DaemonClient.attach(config, client=client, start=False))
    except (DaemonError, OSError) as exc:
        logger.warning(
            "agents get no code-intel tools: the daemon of %s did not answer: %s", config.workspace_path, exc
        )
        return None


@asynccontextmanager
async def open_pipeline(
    config: Config,
    *,
    models_needed: bool,
    catalog: WorkflowCatalog | None = None,
    env: Mapping[str, str] | None = None,
    client: ClientKind = "cli",
    worktrees: RunWorktrees | None = None,
    intel: CodeIntel | None = None,
) -> AsyncGenerator[PipelineRuntime]:
    """A ``PipelineRuntime`` for ``config``'s workspace, closed (runs in flight interrupted) on exit.

    ``catalog``: an already loaded catalog (else ``load_catalog``). ``env``: where API keys are read
    (default: this process's environment; the fronts are the composition roots that may narrow it).
    ``client``: the front, as the daemon's client list shows it when retrieval searches through it.
    ``worktrees``: the workspace's run branches (default with models: ``RunWorktrees.for_config``). In a
    folder that is not a git repository a code-mode run whose plan edits fails at start with
    ``not_a_repository`` (ask-mode runs work). A front may pass its own instance to share it with its
    ``RunReview``.
    ``intel``: the code intelligence agents get as tools (search, definitions, references, signatures);
    default with models: the workspace daemon's when one runs, else none (agents then read and grep
    files only; the ACP and LSP fronts attach to the daemon first, so their runs have it).
    Raises ``DaemonError`` (bad model configuration, no valid workflow).
    """
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
    retriever: IndexRetriever | None = None
    history: RunStore | None = None
    own_intel: RemoteCodeIntel | None = None
    root = config.workspace_path
    try:
        if intel is None and models_needed:
            intel = own_intel = await _daemon_intel(config, client)
        workflows = catalog if catalog is not None else load_catalog(config)
        profile = await asyncio.to_thread(profile_project, config.workspace_path) if models_needed else None
        retriever = IndexRetriever(config, client=client) if models_needed else None
        agent: Retriever | None = retriever
        if retriever is not None:
            history = await asyncio.to_thread(
                connect_run_store, config.runs, state_dir=config.state_path, workspace=config.workspace_path
            )
            agent = agent_retriever(
                build_retrieval_agent(
                    config,
                    index=None,
                    search=retriever,
                    code_intel=intel,
                    run_store=history,
                    model=models.caller(RETRIEVAL_ROLE),
                    env=os.environ if env is None else env,
                )
            )
        if worktrees is None and models_needed:
            worktrees = RunWorktrees.for_config(config)
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
            default_tools=code_intel_tools(intel) if intel is not None else (),
            commands=command_sources(config, workflows, env=env),
            vcs=config.vcs,
        ) as runtime:
            yield runtime
    finally:
        if own_intel is not None:
            await own_intel.aclose()
        if retriever is not None:
            await asyncio.to_thread(retriever.close)
        if history is not None:
            await asyncio.to_thread(history.close)
        layer.close()
