"""The retrieval agent's ports over the service layer: the workspace index, code intelligence, run history.

``build_retrieval_agent`` is the composition point: give it what the front already holds (the
workspace index, the code-intel service, the run store, the retrieval model) and it wires the
agent with the ``[retrieval]`` configuration, the web/advisory providers and the tokenizer.
``agent_retriever`` wraps that agent as the pipeline's ``Retriever`` so the ``adaptive_retrieval``
node runs it in adaptive mode.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from daemon.config import Config
from daemon.core.ports import Workspace
from daemon.errors import ConfigError, DaemonError
from daemon.index.workspace_index import WorkspaceIndex
from daemon.orchestration.retriever import AgentRetriever
from daemon.orchestration.run_store import RunStore
from daemon.retrieval.agent import AgentParts, RetrievalAgent
from daemon.retrieval.indexed_paths import IndexedPaths
from daemon.retrieval.library_docs import LibraryShelf
from daemon.retrieval.osv_mirror import OsvMirror
from daemon.retrieval.ports import BlockingIndexSearch, CodeFact, DecisionNote, IndexSearch, QueryModel
from daemon.retrieval.providers import AdvisoryProvider, OsvAdvisories, web_provider
from daemon.retrieval.tokens import load_token_counter
from daemon.retrieval.vectors import EmbedderVectors, IndexVectors
from daemon.service.intel.capabilities import DEFINITION, REFERENCES, SIGNATURE
from daemon.service.intel.params import DefinitionParams, ReferencesParams, SignatureParams

__all__ = [
    "CodeIntelFacts",
    "RunHistory",
    "advisory_provider",
    "agent_retriever",
    "build_retrieval_agent",
    "mirror_path",
]

logger = logging.getLogger(__name__)


class CodeIntelFacts:
    """``CodeFacts`` over the ``Workspace`` port's code intelligence: definition (verbatim source),
    signature, references."""

    def __init__(self, workspace: Workspace, *, max_chars: int = 2000) -> None:
        self._workspace = workspace
        self._max_chars = max_chars

    async def facts(self, symbol: str, *, max_references: int) -> list[CodeFact]:
        facts: list[CodeFact] = []
        found = await DEFINITION.run(
            self._workspace, DefinitionParams(symbol=symbol, max_results=3, max_chars=self._max_chars)
        )
        for definition in found.definitions:
            loc = definition.location
            if not loc.in_workspace or definition.source is None:
                continue
            facts.append(
                CodeFact(
                    kind="definition",
                    symbol=definition.symbol or symbol,
                    path=loc.path,
                    start_line=loc.range.start_line,
                    end_line=loc.range.start_line + definition.source.count("\n"),
                    text=definition.source,
                    verbatim=not definition.source_truncated,
                )
            )
        try:
            signature = await SIGNATURE.run(self._workspace, SignatureParams(symbol=symbol))
        except DaemonError as exc:
            logger.info("no signature for %s: %s", symbol, exc)
        else:
            loc = signature.location
            doc = f"\n{signature.documentation.strip()}" if signature.documentation else ""
            facts.append(
                CodeFact(
                    kind="signature",
                    symbol=symbol,
                    path=loc.path if loc is not None and loc.in_workspace else None,
                    start_line=loc.range.start_line if loc is not None else None,
                    end_line=loc.range.end_line if loc is not None else None,
                    text=f"signature of {symbol} ({signature.source.value}): {signature.signature}{doc}",
                )
            )
        refs = await REFERENCES.run(
            self._workspace,
            ReferencesParams(symbol=symbol, include_declaration=False, max_results=max_references),
        )
        if refs.references:
            lines = [f"{refs.total} reference(s) to {symbol} in {refs.files} file(s):"]
            for ref in refs.references:
                where = f"{ref.location.path}:{ref.location.range.start_line}"
                inside = f" in {ref.container.qualified_name}" if ref.container is not None else ""
                lines.append(f"- {where}{inside}: {ref.location.line_text or ''}")
            facts.append(
                CodeFact(
                    kind="references", symbol=symbol, path=None, start_line=None, end_line=None, text="\n".join(lines)
                )
            )
        return facts


class RunHistory:
    """``DecisionHistory`` over the run store: the decision logs of the latest runs, newest first."""

    def __init__(self, store: RunStore, *, runs: int = 20) -> None:
        self._store = store
        self._runs = runs

    async def recent(self, limit: int) -> list[DecisionNote]:
        notes: list[DecisionNote] = []
        for record in await self._store.list(self._runs):
            for entry in reversed(await self._store.decisions(record.run_id)):
                notes.append(
                    DecisionNote(run_id=entry.run_id, at=entry.at, kind=entry.kind.value, summary=entry.summary)
                )
                if len(notes) >= limit:
                    return notes
        return notes


def advisory_provider(config: Config) -> AdvisoryProvider | None:
    """The local OSV mirror (``retrieval.osv_mirror``, relative to the workspace), else the OSV API at
    ``retrieval.advisory_url``, else None (the source is off)."""
    cfg = config.retrieval
    if cfg.osv_mirror is not None:
        return OsvMirror(mirror_path(config))
    if cfg.advisory_url is not None:
        return OsvAdvisories(cfg.advisory_url, timeout=cfg.http_timeout_seconds)
    return None


def mirror_path(config: Config) -> Path:
    """``retrieval.osv_mirror`` as a path: ``~`` expanded, relative to the workspace; ``ConfigError`` when unset."""
    if config.retrieval.osv_mirror is None:
        raise ConfigError(
            "no OSV mirror configured: set retrieval.osv_mirror (e.g. in .ided.toml) to the directory the "
            "advisory source reads"
        )
    path = Path(config.retrieval.osv_mirror).expanduser()
    return path if path.is_absolute() else config.workspace_path / path


def build_retrieval_agent(
    config: Config,
    *,
    index: WorkspaceIndex | None,
    search: IndexSearch | None = None,
    code_intel: Workspace | None = None,
    run_store: RunStore | None = None,
    model: QueryModel | None = None,
    env: Mapping[str, str] | None = None,
) -> RetrievalAgent:
    """The retrieval agent of ``config``'s workspace over the parts given (``None`` parts: unavailable).

    ``search``: the index search when the index lives elsewhere (the daemon's); ``index``: an index
    opened in this process, which also lends its embedder for near-duplicate detection.
    """
    cfg = config.retrieval
    embedder = index.dense_embedder() if index is not None else None
    parts = AgentParts(
        counter=load_token_counter(config.embedding),
        root=config.workspace_path,
        index=BlockingIndexSearch(index, parallel=cfg.parallel_searches) if index is not None else search,
        facts=CodeIntelFacts(code_intel) if code_intel is not None else None,
        history=RunHistory(run_store) if run_store is not None else None,
        web=web_provider(cfg, env or {}),
        advisories=advisory_provider(config),
        libraries=LibraryShelf(config.workspace_path),
        vectors=IndexVectors(index.dense_by_hash, EmbedderVectors(embedder))
        if index is not None and embedder is not None
        else None,
        model=model,
        paths=IndexedPaths.in_state_dir(config.state_path),
    )
    return RetrievalAgent(cfg, parts)


def agent_retriever(agent: RetrievalAgent) -> AgentRetriever:
    """The agent as the pipeline's ``Retriever`` (what ``PipelineRuntime(retriever=...)`` takes)."""
    return AgentRetriever(agent)
