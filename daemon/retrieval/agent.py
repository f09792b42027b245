"""The retrieval agent: the workflow's strategy in, fused and validated context per stage out.

It follows the strategy the orchestrator hands over unchanged (TART): it never reclassifies the
task. For one stage (``retrieve``), in upfront mode (``upfront``: every planned stage, concurrently
with a shared budget) or adaptive mode (``adaptive``: after a failure, queries built from the
failure and the failed output):

1. choose the sources: each must be switched on in ``[retrieval]`` and asked for by the workflow
   (rag sources and their kinds/paths, ``lsp_integration``, ``ast_parsing``); document workflows
   never get static analysis (no language-server facts, no AST map). A rag source with
   ``trigger_stages`` serves only those stages: an index scope, or the web and advisory sources
   when the workflow names them (``web``, ``advisories``; unnamed, they follow ``[retrieval]`` alone).
   Named, the advisory source over the local OSV mirror also audits the workspace's locked
   dependencies (``osv_mirror``); without a mirror or an advisory URL it is off. The libraries
   source answers queries naming a dependency from its installed files (``library_docs``);
2. write the queries (the ``retrieval`` model when one is given, else the deterministic generator);
3. run the sources in parallel, each under a timeout and a circuit breaker; a source that fails is
   ``unavailable`` with its reason and the run goes on;
4. fuse (``fusion``), validate (``validation``) and fit the stage's token budget;
5. record every step as a ``RetrievalEvent`` for the decision log.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from daemon.config import RetrievalConfig
from daemon.core.models import ChunkKind
from daemon.core.ports import Reranker
from daemon.errors import DaemonError
from daemon.retrieval.ast_map import ast_context_map
from daemon.retrieval.file_snapshot import FileMemory, FileSnapshot
from daemon.retrieval.fusion import Fusion, fit_budget
from daemon.retrieval.library_docs import LibraryDocsSource, LibraryShelf
from daemon.retrieval.models import (
    Candidate,
    CandidateRef,
    FailureContext,
    Rejection,
    RetrievalEvent,
    RetrievalMode,
    RetrievalRequest,
    RetrievalResult,
    SourceName,
    SourceState,
    SourceStatus,
    StageHints,
    WorkflowKind,
)
from daemon.retrieval.osv_mirror import OsvMirror
from daemon.retrieval.ports import (
    ChunkVectors,
    CodeFacts,
    DecisionHistory,
    IndexSearch,
    KnownPaths,
    QueryModel,
    StrategyLike,
)
from daemon.retrieval.providers import AdvisoryProvider, WebSearchProvider
from daemon.retrieval.queries import QueryPlan, deterministic_queries, model_queries
from daemon.retrieval.shared_search import SharedSearches
from daemon.retrieval.sources import (
    AdvisorySource,
    DecisionSource,
    IndexScope,
    IndexSource,
    LspSource,
    Source,
    SourceGuard,
    WebSource,
)
from daemon.retrieval.tokens import TokenCounter
from daemon.retrieval.validation import Validator

__all__ = ["AgentParts", "RetrievalAgent", "rejections_by_step"]

logger = logging.getLogger(__name__)

_DOC_WORDS = ("documentation", "docs", "documents")
_NOT_INDEX = frozenset(
    {"decision_log", "decisions", SourceName.WEB.value, SourceName.ADVISORIES.value, SourceName.LIBRARIES.value}
)
"""Rag source names that are not index scopes."""


@dataclass(frozen=True, kw_only=True)
class AgentParts:
    """What the agent works with; ``None`` parts make their sources unavailable (with the reason)."""

    counter: TokenCounter
    root: Path | None = None
    index: IndexSearch | None = None
    facts: CodeFacts | None = None
    history: DecisionHistory | None = None
    web: WebSearchProvider | None = None
    advisories: AdvisoryProvider | None = None
    libraries: LibraryShelf | None = None
    vectors: ChunkVectors | None = None
    reranker: Reranker | None = None
    model: QueryModel | None = None
    paths: KnownPaths | None = None
    """The files the index knows: a path glob none of them matches is not searched."""


@dataclass(frozen=True, kw_only=True)
class _Chosen:
    active: dict[SourceName, Source]
    statuses: dict[SourceName, SourceStatus]
    ast_map: bool


class RetrievalAgent:
    """See the module docstring. One agent serves a workspace; its circuit breakers persist across calls."""

    def __init__(self, config: RetrievalConfig, parts: AgentParts) -> None:
        self.config = config
        self.parts = parts
        self._guards: dict[SourceName, SourceGuard] = {}
        self.files = FileMemory()
        """The workspace files earlier retrievals read (``FileMemory``): unchanged ones are not read again."""

    async def warm(self) -> None:
        """Load what a first retrieval would otherwise load on the run's clock: the tokenizer, the installed
        libraries' list and, through one throwaway index search, the query model and the store's caches."""
        self.parts.counter.count("warm up")
        if self.parts.libraries is not None:
            await asyncio.to_thread(self.parts.libraries.libraries)
        if self.parts.index is not None:
            try:
                await self.parts.index.search("warm up the index search", k=1, filters=None)
            except DaemonError as exc:  # warming is best effort: the first run pays what is left
                logger.info("warming the index search failed: %s", exc)

    # -- modes ----------------------------------------------------------------------------------

    async def upfront(
        self,
        task: str,
        workflow: WorkflowKind,
        strategy: StrategyLike,
        stages: Sequence[StageHints],
        *,
        sequential: bool = False,
    ) -> dict[str, RetrievalResult]:
        """Context for every planned stage (planning time).

        The stages' retrievals run concurrently and share a budget: one search per distinct question
        (``SharedSearches``: the task, its identifiers and the decision documents are searched once
        for all stages; a stage's focus hints re-rank the task's hits, ``retrieval.focus_pool``), the
        index's concurrent searches (``retrieval.parallel_searches``), and one deadline
        (``retrieval.upfront_budget_seconds``: a source still searching when it runs out is
        ``unavailable`` for that stage, with the reason, and the others keep what they found).
        ``sequential``: the former behaviour, stage after stage with nothing shared (for comparison).
        """
        requests = [
            RetrievalRequest(task=task, workflow_kind=workflow, stage=stage, mode=RetrievalMode.UPFRONT)
            for stage in stages
        ]
        if sequential:
            return {r.stage.stage_id: await self.retrieve(r, strategy) for r in requests}
        index = self.parts.index
        shared = SharedSearches(index, pool=self.config.focus_pool) if index is not None else None
        files = FileSnapshot(self.parts.root, self.files) if self.parts.root is not None else None
        deadline = time.monotonic() + self.config.upfront_budget_seconds
        results = await asyncio.gather(
            *(self.retrieve(r, strategy, index=shared, deadline=deadline, files=files) for r in requests)
        )
        if shared is not None:
            logger.debug(
                "upfront: %d stage(s), %d search(es) asked, %d run, %d focus view(s)",
                len(requests),
                shared.asked,
                shared.ran,
                shared.views,
            )
        return {r.stage.stage_id: result for r, result in zip(requests, results, strict=True)}

    async def adaptive(
        self, task: str, workflow: WorkflowKind, strategy: StrategyLike, stage: StageHints, failure: FailureContext
    ) -> RetrievalResult:
        """Context for the retry of ``stage`` after ``failure``."""
        request = RetrievalRequest(
            task=task, workflow_kind=workflow, stage=stage, mode=RetrievalMode.ADAPTIVE, failure=failure
        )
        return await self.retrieve(request, strategy)

    # -- one retrieval --------------------------------------------------------------------------

    async def retrieve(
        self,
        request: RetrievalRequest,
        strategy: StrategyLike,
        *,
        index: IndexSearch | None = None,
        deadline: float | None = None,
        files: FileSnapshot | None = None,
    ) -> RetrievalResult:
        """One retrieval; ``index`` replaces the index port (upfront's shared searches), ``deadline``
        (``time.monotonic()``) bounds the sources, ``files`` is the snapshot of the workspace files its
        checks read (upfront's, shared by the stages; a new one when None)."""
        started = time.perf_counter()
        if files is None and self.parts.root is not None:
            files = FileSnapshot(self.parts.root, self.files)
        events: list[RetrievalEvent] = []
        chosen = self._choose(request, strategy, index or self.parts.index)
        plan = await self._plan(request, list(chosen.active), events)
        statuses = dict(chosen.statuses)
        candidates: list[Candidate] = []
        names = list(chosen.active)
        outcomes = await asyncio.gather(*(self._run(chosen.active[n], plan, deadline) for n in names))
        for name, (status, found) in zip(names, outcomes, strict=True):
            statuses[name] = status
            candidates.extend(found)
            events.append(
                RetrievalEvent(
                    kind="source",
                    summary=f"{name.value}: {status.state.value}"
                    + (f" ({status.reason})" if status.reason else f", {status.candidates} candidate(s)"),
                    data=status.model_dump(mode="json"),
                )
            )
        candidates = self._apply_avoid(candidates, request.stage)
        fusion = Fusion(
            workflow=request.workflow_kind,
            vectors=self.parts.vectors,
            reranker=self.parts.reranker,
            near_duplicate_cosine=self.config.near_duplicate_cosine,
        )
        ranked, folded = await asyncio.to_thread(fusion.rank, candidates)
        events.append(
            RetrievalEvent(
                kind="fusion",
                summary=f"{len(candidates)} candidate(s) -> {len(ranked)} piece(s); rerank: {fusion.rerank_method}",
                data={"folded": [r.model_dump(mode="json") for r in folded], "rerank": fusion.rerank_method},
            )
        )
        validator = Validator(
            self.parts.root,
            workflow=request.workflow_kind,
            code_threshold=self.config.code_threshold,
            docs_threshold=self.config.docs_threshold,
            min_similarity=self.config.min_similarity,
            files=files,
        )
        outcome = await asyncio.to_thread(validator.validate, ranked)
        events.append(
            RetrievalEvent(
                kind="validation",
                summary=f"{len(outcome.passed)} of {len(ranked)} piece(s) passed (threshold {validator.threshold:g}); "
                f"{len(outcome.rejected)} rejected, {len(outcome.refetched)} re-fetched, {len(outcome.flags)} flag(s)",
                data={
                    "rejected": [r.model_dump(mode="json") for r in outcome.rejected],
                    "refetched": outcome.refetched,
                    "flags": outcome.flags,
                },
            )
        )
        budget = request.stage.token_budget
        ast_text, ast_tokens = await self._ast_map(
            chosen.ast_map, plan, [p.attribution.path for p in outcome.passed], budget // 4, files
        )
        context, cuts, used = await asyncio.to_thread(
            partial(fit_budget, outline_below=self.config.outline_threshold),
            outcome.passed,
            budget - ast_tokens,
            self.parts.counter,
        )
        outlined = sum(1 for p in context if p.outline)
        events.append(
            RetrievalEvent(
                kind="budget",
                summary=f"{used + ast_tokens} of {budget} token(s) ({self.parts.counter.name}); "
                f"{len(context) - outlined} piece(s) whole, {outlined} as outlines, {len(cuts)} cut",
                data={"cuts": [c.model_dump(mode="json") for c in cuts], "ast_map_tokens": ast_tokens},
            )
        )
        refs = tuple(
            CandidateRef(
                id=c.id, source=c.source, score=round(c.score, 6), rank=c.rank, query=c.query, cite=c.attribution.cite()
            )
            for c in candidates
        )
        return RetrievalResult(
            request=request,
            queries=plan.queries,
            query_writer=plan.writer,
            sources=tuple(statuses[n] for n in SourceName if n in statuses),
            candidates=refs,
            context=tuple(context),
            rejections=(*folded, *outcome.rejected, *cuts),
            flags=tuple(outcome.flags),
            ast_map=ast_text,
            tokens=used + ast_tokens,
            token_budget=budget,
            events=tuple(events),
            seconds=round(time.perf_counter() - started, 4),
        )

    # -- steps ----------------------------------------------------------------------------------

    def _choose(self, request: RetrievalRequest, strategy: StrategyLike, index: IndexSearch | None) -> _Chosen:
        statuses: dict[SourceName, SourceStatus] = {}
        active: dict[SourceName, Source] = {}
        for name, made in (
            *self._index_sources(request, strategy, index).items(),
            (SourceName.LSP, self._lsp_source(request, strategy)),
            (SourceName.DECISIONS, self._decision_source(strategy, index)),
            (SourceName.WEB, self._triggered(request, strategy, SourceName.WEB) or self._web_source()),
            (SourceName.LIBRARIES, self._library_source(strategy)),
            (
                SourceName.ADVISORIES,
                self._triggered(request, strategy, SourceName.ADVISORIES) or self._advisory_source(strategy),
            ),
        ):
            if isinstance(made, SourceStatus):
                statuses[name] = made
            else:
                active[name] = made
        code_workflow = request.workflow_kind is not WorkflowKind.DOCUMENT
        ast_map = code_workflow and strategy.ast_parsing and self.parts.root is not None
        if not ast_map:
            reason = "document workflows skip static analysis" if not code_workflow else "ast_parsing is off"
            statuses[SourceName.AST] = _off(
                SourceName.AST, reason if self.parts.root is not None else "no workspace root"
            )
        return _Chosen(active=active, statuses=statuses, ast_map=ast_map)

    def _index_sources(
        self, request: RetrievalRequest, strategy: StrategyLike, index: IndexSearch | None
    ) -> dict[SourceName, Source | SourceStatus]:
        cfg = self.config
        rag = strategy.rag_strategy
        scopes = _scopes(
            strategy, code_workflow=request.workflow_kind is not WorkflowKind.DOCUMENT, stage=request.stage.stage_id
        )
        avoid_docs = any(word in hint.lower() for hint in request.stage.avoid for word in _DOC_WORDS)
        out: dict[SourceName, Source | SourceStatus] = {}
        for name, kind, switch in (
            (SourceName.CODE, ChunkKind.CODE, cfg.code),
            (SourceName.DOCS, ChunkKind.DOCS, cfg.docs),
        ):
            if not switch:
                out[name] = _off(name, f"retrieval.{name.value} is false")
            elif not rag.enabled:
                out[name] = _off(name, "the workflow's rag_strategy is disabled")
            elif not scopes[kind]:
                out[name] = _off(name, f"the workflow names no {kind.value} source")
            elif name is SourceName.DOCS and avoid_docs:
                out[name] = _off(name, f"stage {request.stage.stage_id} avoids documentation")
            elif index is None:
                out[name] = _off(name, "no workspace index attached", SourceState.UNAVAILABLE)
            else:
                out[name] = IndexSource(name, index, scopes[kind], k=cfg.k_per_query, known=self.parts.paths)
        return out

    def _lsp_source(self, request: RetrievalRequest, strategy: StrategyLike) -> Source | SourceStatus:
        name = SourceName.LSP
        if not self.config.lsp:
            return _off(name, "retrieval.lsp is false")
        if request.workflow_kind is WorkflowKind.DOCUMENT:
            return _off(name, "document workflows skip static analysis")
        if not strategy.lsp_integration:
            return _off(name, "the workflow's lsp_integration is false")
        if self.parts.facts is None:
            return _off(name, "no language servers attached", SourceState.UNAVAILABLE)
        return LspSource(self.parts.facts)

    def _decision_source(self, strategy: StrategyLike, index: IndexSearch | None) -> Source | SourceStatus:
        name = SourceName.DECISIONS
        named = any(s.name in ("decision_log", "decisions") for s in strategy.rag_strategy.sources)
        if not self.config.decisions:
            return _off(name, "retrieval.decisions is false")
        if not strategy.rag_strategy.enabled and not named:
            return _off(name, "the workflow's rag_strategy is disabled")
        if index is None and self.parts.history is None:
            return _off(name, "no index and no run history attached", SourceState.UNAVAILABLE)
        k = max(2, self.config.k_per_query // 2)
        return DecisionSource(index, self.parts.history, globs=self.config.decision_globs, k=k, known=self.parts.paths)

    def _triggered(self, request: RetrievalRequest, strategy: StrategyLike, name: SourceName) -> SourceStatus | None:
        """Off when the workflow names this source only for other stages (``trigger_stages``)."""
        named = [s for s in strategy.rag_strategy.sources if s.name == name.value]
        stages = {t for s in named for t in s.trigger_stages}
        if not named or any(not s.trigger_stages for s in named) or request.stage.stage_id in stages:
            return None
        return _off(name, f"the workflow triggers it only for {', '.join(sorted(stages))}")

    def _library_source(self, strategy: StrategyLike) -> Source | SourceStatus:
        name = SourceName.LIBRARIES
        if not self.config.libraries:
            return _off(name, "retrieval.libraries is false")
        if not strategy.rag_strategy.enabled:
            return _off(name, "the workflow's rag_strategy is disabled")
        if self.parts.libraries is None:
            return _off(name, "no workspace root attached", SourceState.UNAVAILABLE)
        return LibraryDocsSource(self.parts.libraries, k=self.config.k_per_query)

    def _web_source(self) -> Source | SourceStatus:
        if not self.config.web:
            return _off(SourceName.WEB, "retrieval.web is false")
        if self.parts.web is None:
            return _off(SourceName.WEB, "retrieval.web_url is not set", SourceState.UNAVAILABLE)
        return WebSource(self.parts.web, k=self.config.k_per_query)

    def _advisory_source(self, strategy: StrategyLike) -> Source | SourceStatus:
        """The advisory source; it audits the workspace's dependencies when the workflow names it (for this
        stage: ``_triggered`` has ruled out the others) and the provider is the local mirror."""
        if not self.config.advisories:
            return _off(SourceName.ADVISORIES, "retrieval.advisories is false")
        if self.parts.advisories is None:
            if self.config.osv_mirror is None and self.config.advisory_url is None:
                return _off(
                    SourceName.ADVISORIES,
                    "no OSV mirror configured (retrieval.osv_mirror; `ided cve sync --from DIR|ZIP` imports one)",
                )
            return _off(SourceName.ADVISORIES, "no advisory provider attached", SourceState.UNAVAILABLE)
        named = any(s.name == SourceName.ADVISORIES.value for s in strategy.rag_strategy.sources)
        audit = self.parts.root if named and isinstance(self.parts.advisories, OsvMirror) else None
        return AdvisorySource(self.parts.advisories, k=self.config.k_per_query, audit_root=audit)

    async def _plan(
        self, request: RetrievalRequest, sources: list[SourceName], events: list[RetrievalEvent]
    ) -> QueryPlan:
        query_sources = [s for s in sources if s is not SourceName.LSP]
        plan: QueryPlan | None = None
        note: str | None = None
        if self.parts.model is not None:
            try:
                plan = await model_queries(
                    self.parts.model, request, query_sources, max_queries=self.config.max_queries
                )
            except (ValueError, DaemonError) as exc:
                note = f"query model failed, deterministic queries used: {exc}"
                logger.info("%s", note)
        if plan is None:
            plan = deterministic_queries(request, query_sources, max_queries=self.config.max_queries)
        events.append(
            RetrievalEvent(
                kind="queries",
                summary=f"{len(plan.queries)} query(ies) by {plan.writer}"
                + (f"; symbols: {', '.join(plan.symbols)}" if plan.symbols else "")
                + (f"; {note}" if note else ""),
                data={
                    "writer": plan.writer,
                    "queries": [q.model_dump(mode="json") for q in plan.queries],
                    "symbols": list(plan.symbols),
                    "notes": [*plan.notes, *((note,) if note else ())],
                },
            )
        )
        return plan

    async def _run(
        self, source: Source, plan: QueryPlan, deadline: float | None = None
    ) -> tuple[SourceStatus, list[Candidate]]:
        guard = self._guards.setdefault(
            source.name,
            SourceGuard(
                timeout=self.config.source_timeout_seconds,
                failure_threshold=self.config.breaker_failure_threshold,
                reset_seconds=self.config.breaker_reset_seconds,
            ),
        )
        started = time.perf_counter()
        refused = guard.open_reason()
        if refused is not None:
            return SourceStatus(source=source.name, state=SourceState.UNAVAILABLE, reason=refused), []
        try:
            budget = deadline - time.monotonic() if deadline is not None else None
            found = await guard.run(source, plan, budget=budget)
        except DaemonError as exc:
            logger.warning("retrieval source %s unavailable: %s", source.name.value, exc)
            status = SourceStatus(
                source=source.name,
                state=SourceState.UNAVAILABLE,
                reason=str(exc),
                seconds=round(time.perf_counter() - started, 4),
            )
            return status, []
        seconds = round(time.perf_counter() - started, 4)
        return SourceStatus(source=source.name, state=SourceState.OK, candidates=len(found), seconds=seconds), found

    def _apply_avoid(self, candidates: list[Candidate], stage: StageHints) -> list[Candidate]:
        """Drop candidates whose path names a one-word ``avoid`` hint (``vendor``, ``generated``)."""
        words = [a.lower() for a in stage.avoid if a.strip() and " " not in a.strip()]
        words = [w for w in words if w not in _DOC_WORDS]
        if not words:
            return candidates
        return [c for c in candidates if not any(w in (c.attribution.path or "").lower() for w in words)]

    async def _ast_map(
        self, wanted: bool, plan: QueryPlan, paths: Sequence[str | None], limit: int, snapshot: FileSnapshot | None
    ) -> tuple[str | None, int]:
        """The AST map of the failure's files and the passed pieces' files, cut to ``limit`` tokens."""
        root = self.parts.root
        if not wanted or root is None:
            return None, 0
        files = [*plan.files, *(p for p in paths if p is not None)]
        text = await asyncio.to_thread(partial(ast_context_map, files=snapshot), root, files)
        if text is None or limit <= 0:
            return None, 0
        counter = self.parts.counter
        if counter.count(text) > limit:
            text = counter.cut(text, limit) + "\n[... AST map cut to a quarter of the budget]"
        return text, counter.count(text)


def _off(name: SourceName, reason: str, state: SourceState = SourceState.OFF) -> SourceStatus:
    return SourceStatus(source=name, state=state, reason=reason)


def _scopes(strategy: StrategyLike, *, code_workflow: bool, stage: str) -> dict[ChunkKind, list[IndexScope]]:
    """The workflow's rag sources as index scopes per chunk kind, those triggered for other stages left out
    (decision, web and advisory sources are not index scopes)."""
    scopes: dict[ChunkKind, list[IndexScope]] = {ChunkKind.CODE: [], ChunkKind.DOCS: []}
    sources = [s for s in strategy.rag_strategy.sources if s.name not in _NOT_INDEX]
    for source in sorted(sources, key=lambda s: s.priority):
        if source.trigger_stages and stage not in source.trigger_stages:
            continue
        kind = ChunkKind.DOCS if source.kind == "docs" else ChunkKind.CODE if source.kind == "code" else None
        for k in (kind,) if kind is not None else (ChunkKind.CODE, ChunkKind.DOCS):
            scopes[k].append(IndexScope(label=source.name, kind=k, globs=tuple(source.paths)[:3]))
    if not sources:
        scopes[ChunkKind.DOCS].append(IndexScope(label="docs", kind=ChunkKind.DOCS))
        if code_workflow:
            scopes[ChunkKind.CODE].append(IndexScope(label="code", kind=ChunkKind.CODE))
    return scopes


def rejections_by_step(rejections: Sequence[Rejection]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in rejections:
        counts[r.step] = counts.get(r.step, 0) + 1
    return counts
