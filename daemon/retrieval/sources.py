"""The retrieval sources: index code and docs search, language-server facts, decisions, web, advisories.

Each source turns the planned queries into ``Candidate``s or raises ``SourceUnavailable``. The
agent runs them in parallel, each under a timeout and a circuit breaker (``SourceGuard``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from daemon.core.models import ChunkKind, MatchConfidence, SearchFilters, SearchHit
from daemon.errors import DaemonError, InvalidToolInput, SourceUnavailable
from daemon.retrieval.lexical import overlap, terms
from daemon.retrieval.models import Attribution, Candidate, SourceName
from daemon.retrieval.osv_mirror import AuditReport, Finding, OsvMirror
from daemon.retrieval.ports import CodeFacts, DecisionHistory, FocusedSearch, IndexSearch, KnownPaths
from daemon.retrieval.providers import AdvisoryProvider, WebSearchProvider
from daemon.retrieval.queries import QueryPlan

__all__ = [
    "AdvisorySource",
    "DecisionSource",
    "IndexScope",
    "IndexSource",
    "LspSource",
    "Source",
    "SourceGuard",
    "WebSource",
    "audit_candidates",
    "candidate_from_hit",
    "ranked",
]


class Source(Protocol):
    @property
    def name(self) -> SourceName: ...

    async def fetch(self, plan: QueryPlan) -> list[Candidate]: ...


def ranked(
    source: SourceName,
    query: str,
    rank: int,
    ident: str,
    text: str,
    attribution: Attribution,
    *,
    grounded: bool = False,
) -> Candidate:
    """The candidate at ``rank`` (from 1) of ``source``'s answer to ``query``, scored 1/rank; ``grounded`` when
    its text is a verbatim slice of a workspace file."""
    return Candidate(
        id=ident,
        source=source,
        text=text,
        attribution=attribution,
        score=1.0 / rank,
        rank=rank,
        query=query,
        grounded_text=grounded,
    )


def candidate_from_hit(source: SourceName, hit: SearchHit, *, rank: int, query: str) -> Candidate:
    chunk = hit.chunk
    is_doc = chunk.kind is ChunkKind.DOCS
    attribution = Attribution(
        path=chunk.path,
        start_line=chunk.start_line,
        end_line=chunk.end_line,
        symbol=None if is_doc else chunk.qualified_name,
        ast_type=chunk.symbol_kind.value,
        section_path=chunk.qualified_name if is_doc else None,
    )
    return Candidate(
        id=hit.id,
        source=source,
        text=chunk.text,
        attribution=attribution,
        score=hit.score,
        rank=rank,
        query=query,
        chunk=chunk,
    )


@dataclass(frozen=True, kw_only=True)
class IndexScope:
    """One rag source of the workflow as an index search: its kind and path globs."""

    label: str
    kind: ChunkKind
    globs: tuple[str, ...] = ()


class IndexSource:
    """Function-level code or section-level docs search over the workspace index; a focus query
    (``PlannedQuery.focus``) is answered by the index port itself when it can (``FocusedSearch``)."""

    def __init__(
        self,
        name: SourceName,
        index: IndexSearch,
        scopes: Sequence[IndexScope],
        *,
        k: int,
        known: KnownPaths | None = None,
    ) -> None:
        self._name = name
        self._index = index
        self._scopes = tuple(scopes)
        self._k = k
        self._known = known

    @property
    def name(self) -> SourceName:
        return self._name

    async def fetch(self, plan: QueryPlan) -> list[Candidate]:
        out: list[Candidate] = []
        for query in plan.for_source(self._name):
            for scope in self._scopes:
                for glob in scope.globs or (None,):
                    if glob is not None and self._known is not None and not self._known.may_match(glob):
                        continue  # no indexed file matches the glob: its search would answer nothing
                    filters = SearchFilters(kind=scope.kind, path_glob=glob)
                    focus, refines = query.focus, query.refines
                    try:
                        if focus is not None and refines is not None and isinstance(self._index, FocusedSearch):
                            result = await self._index.focused(
                                query.text, refines=refines, focus=focus, k=self._k, filters=filters
                            )
                        else:
                            result = await self._index.search(query.text, k=self._k, filters=filters)
                    except DaemonError as exc:
                        raise SourceUnavailable(f"the index cannot answer '{query.text[:60]}'", cause=exc) from exc
                    if result.matches is MatchConfidence.NONE:
                        continue  # the index says nothing matches: its nearest hits are noise, not context
                    out.extend(
                        candidate_from_hit(self._name, hit, rank=i + 1, query=query.text)
                        for i, hit in enumerate(result.hits)
                    )
        return out


class LspSource:
    """Definitions, references and signatures of the symbols the queries name."""

    name = SourceName.LSP

    def __init__(self, facts: CodeFacts, *, max_symbols: int = 4, max_references: int = 8) -> None:
        self._facts = facts
        self._max_symbols = max_symbols
        self._max_references = max_references

    async def fetch(self, plan: QueryPlan) -> list[Candidate]:
        out: list[Candidate] = []
        failures: list[str] = []
        for symbol in plan.symbols[: self._max_symbols]:
            try:
                facts = await self._facts.facts(symbol, max_references=self._max_references)
            except InvalidToolInput:
                continue  # not a symbol of this workspace: no facts, not a failure
            except DaemonError as exc:
                failures.append(f"{symbol}: {exc.message}")
                continue
            for rank, fact in enumerate(facts, start=1):
                attribution = Attribution(
                    path=fact.path,
                    start_line=fact.start_line,
                    end_line=fact.end_line,
                    symbol=fact.symbol,
                    ref=fact.kind,
                )
                ident = f"lsp:{fact.kind}:{fact.symbol}:{fact.path}:{fact.start_line}"
                out.append(ranked(self.name, symbol, rank, ident, fact.text, attribution, grounded=fact.verbatim))
        if failures and not out:
            raise SourceUnavailable("no language-server answer: " + "; ".join(failures[:3]))
        return out


class DecisionSource:
    """The workspace's ADR/decision documents (index, by path globs) and past runs' decision logs; a glob
    no indexed file matches (``known``) is not searched."""

    name = SourceName.DECISIONS

    def __init__(
        self,
        index: IndexSearch | None,
        history: DecisionHistory | None,
        *,
        globs: Sequence[str],
        k: int,
        known: KnownPaths | None = None,
    ) -> None:
        self._index = index
        self._history = history
        self._globs = tuple(globs)
        self._k = k
        self._known = known

    async def fetch(self, plan: QueryPlan) -> list[Candidate]:
        out: list[Candidate] = []
        queries = plan.for_source(self.name)
        if self._index is not None:
            globs = [g for g in self._globs if self._known is None or self._known.may_match(g)] if queries else []
            for query in queries:
                for glob in globs:
                    filters = SearchFilters(kind=ChunkKind.DOCS, path_glob=glob)
                    result = await self._index.search(query.text, k=self._k, filters=filters)
                    out.extend(
                        candidate_from_hit(self.name, hit, rank=i + 1, query=query.text)
                        for i, hit in enumerate(result.hits)
                    )
        if self._history is not None and queries:
            notes = await self._history.recent(500)
            for query in queries:
                wanted = terms(query.text)
                scored = sorted(
                    ((overlap(wanted, n.summary), n) for n in notes), key=lambda pair: pair[0], reverse=True
                )
                for rank, (score, note) in enumerate([p for p in scored if p[0] >= 0.3][: self._k], start=1):
                    out.append(
                        Candidate(
                            id=f"run:{note.run_id}:{note.at}:{note.kind}",
                            source=self.name,
                            text=f"[{note.at}] run {note.run_id} {note.kind}: {note.summary}",
                            attribution=Attribution(ref=f"run {note.run_id} ({note.kind})"),
                            score=score,
                            rank=rank,
                            query=query.text,
                            grounded_text=False,
                        )
                    )
        return out


class WebSource:
    name = SourceName.WEB

    def __init__(self, provider: WebSearchProvider, *, k: int) -> None:
        self._provider = provider
        self._k = k

    async def fetch(self, plan: QueryPlan) -> list[Candidate]:
        out: list[Candidate] = []
        for query in plan.for_source(self.name):
            hits = await self._provider.search(query.text, limit=self._k)
            for rank, hit in enumerate(hits, start=1):
                attribution = Attribution(url=hit.url, ref=self._provider.name)
                text = f"{hit.title}\n{hit.text}".strip()
                out.append(ranked(self.name, query.text, rank, f"web:{hit.url}", text, attribution))
        return out


class AdvisorySource:
    """Advisories for the ids and ``name==version`` pins the queries name; with ``audit_root`` (the workflow
    names the source for this stage and the provider is the local mirror) also the audit of the
    workspace's locked dependencies: one summary piece, then one piece per affected package."""

    name = SourceName.ADVISORIES

    def __init__(self, provider: AdvisoryProvider, *, k: int, audit_root: Path | None = None) -> None:
        self._provider = provider
        self._k = k
        self._audit_root = audit_root

    async def fetch(self, plan: QueryPlan) -> list[Candidate]:
        out: list[Candidate] = []
        if self._audit_root is not None and isinstance(self._provider, OsvMirror):
            report = await self._provider.audit(self._audit_root)
            out.extend(audit_candidates(report))
        for query in plan.for_source(self.name):
            hits = await self._provider.lookup(query.text, limit=self._k)
            for rank, hit in enumerate(hits, start=1):
                attribution = Attribution(url=hit.url, ref=hit.ref)
                out.append(ranked(self.name, query.text, rank, f"advisory:{hit.ref or hit.url}", hit.text, attribution))
        return out


_AUDIT_QUERY = "known advisories affecting the workspace's locked dependencies"


def _names(items: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def audit_candidates(report: AuditReport) -> list[Candidate]:
    """The dependency audit as candidates: the summary first, then each affected package's advisories."""
    scan = report.scan
    by_package: dict[tuple[str, str, str], list[Finding]] = {}
    for finding in report.findings:
        by_package.setdefault((finding.ecosystem, finding.name, finding.version), []).append(finding)
    lines = [
        f"Dependency audit against the local OSV mirror ({report.records} advisories): "
        f"{report.checked} exactly-versioned dependencies read from {_names(scan.files) or 'no manifest or lock file'}."
    ]
    if by_package:
        affected = [f"{name} {version} ({eco})" for eco, name, version in by_package]
        lines.append(f"{len(by_package)} affected by {len(report.findings)} known advisories: {_names(affected, 20)}.")
    elif report.checked:
        lines.append("None is affected by a known advisory.")
    unversioned = scan.unversioned()
    if unversioned:
        lines.append(
            "Not checked, no exact version and no lock file: "
            + _names([f"{d.name} ({d.where})" for d in unversioned])
            + "."
        )
    if report.unreadable:
        unreadable = _names(report.unreadable)
        lines.append(f"Advisories with version bounds that do not parse (check by hand): {unreadable}.")
    if scan.problems:
        lines.append("Files not read: " + "; ".join(scan.problems[:5]) + ".")
    summary = ranked(
        SourceName.ADVISORIES, _AUDIT_QUERY, 1, "advisory:audit", " ".join(lines), Attribution(ref="dependency audit")
    )
    out = [summary]
    for rank, ((eco, name, version), findings) in enumerate(sorted(by_package.items()), start=2):
        head = findings[0]
        text = [
            f"{name} {version} ({eco}; declared at {', '.join(head.where[:3])}) is affected by "
            f"{len(findings)} known advisor{'y' if len(findings) == 1 else 'ies'}:"
        ]
        for f in findings:
            aliases = f" ({', '.join(f.aliases[:3])})" if f.aliases else ""
            severity = f" [{f.severity}]" if f.severity else ""
            fix = f" Fixed in {', '.join(f.fixed)}." if f.fixed else " No fixed version known."
            summary = f.summary if f.summary.endswith((".", "!", "?")) else f.summary + "."
            text.append(f"- {f.advisory}{aliases}{severity}: {summary}{fix}")
        attribution = Attribution(
            url=f"https://osv.dev/vulnerability/{head.advisory}", ref=", ".join(f.advisory for f in findings)
        )
        ident = f"advisory:{eco}/{name}@{version}"
        out.append(ranked(SourceName.ADVISORIES, _AUDIT_QUERY, rank, ident, "\n".join(text), attribution))
    return out


class SourceGuard:
    """A timeout and a circuit breaker around one source (kept by the agent across retrievals)."""

    def __init__(self, *, timeout: float, failure_threshold: int, reset_seconds: float) -> None:
        self._timeout = timeout
        self._threshold = failure_threshold
        self._reset = reset_seconds
        self._failures = 0
        self._opened_at: float | None = None

    def open_reason(self) -> str | None:
        """Why calls are refused now (the breaker is open), or None."""
        if self._opened_at is None:
            return None
        if time.monotonic() - self._opened_at >= self._reset:
            return None  # half-open: one trial call
        return f"{self._failures} failures in a row; skipped for {self._reset:g} s"

    async def run(self, source: Source, plan: QueryPlan, *, budget: float | None = None) -> list[Candidate]:
        """The source's candidates; ``SourceUnavailable`` on a timeout or an answer it could not give.

        ``budget``: seconds left of a shared budget (upfront retrieval); when it runs out before the
        source's own timeout, the source is unavailable for this call without counting as a failure.
        """
        shared = budget is not None and budget < self._timeout
        timeout = max(0.0, budget) if budget is not None and shared else self._timeout
        try:
            found = await asyncio.wait_for(source.fetch(plan), timeout=timeout)
        except TimeoutError as exc:
            if shared:
                raise SourceUnavailable(
                    f"{source.name.value}: the shared upfront budget ran out ({timeout:.2f} s were left)", cause=exc
                ) from exc
            self._failed()
            raise SourceUnavailable(
                f"{source.name.value} gave no answer within {self._timeout:g} s", cause=exc
            ) from exc
        except DaemonError:
            self._failed()
            raise
        self._failures = 0
        self._opened_at = None
        return found

    def _failed(self) -> None:
        self._failures += 1
        if self._failures >= self._threshold:
            self._opened_at = time.monotonic()
