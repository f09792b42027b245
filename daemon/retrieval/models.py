"""What the retrieval agent takes and gives: requests, queries, candidates, context pieces, results.

Pydantic models cross the boundary (the pipeline, ``ided eval``, the decision log); ``Candidate``
is the internal value the sources hand to fusion (a frozen dataclass).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import Field

from daemon.core.frozen_model import FrozenModel
from daemon.core.models import Chunk

__all__ = [
    "Attribution",
    "Candidate",
    "CandidateRef",
    "ContextPiece",
    "FailureContext",
    "PlannedQuery",
    "Rejection",
    "RetrievalEvent",
    "RetrievalMode",
    "RetrievalRequest",
    "RetrievalResult",
    "SourceName",
    "SourceState",
    "SourceStatus",
    "StageHints",
    "WorkflowKind",
]


class SourceName(StrEnum):
    """Where a piece of context comes from."""

    CODE = "code"
    DOCS = "docs"
    LSP = "lsp"
    DECISIONS = "decisions"
    WEB = "web"
    ADVISORIES = "advisories"
    LIBRARIES = "libraries"
    AST = "ast"


class WorkflowKind(StrEnum):
    """The workflow domain as the retrieval layer sees it (from the workflow's ``workflow_type``)."""

    CODE = "code_domain"
    DOCUMENT = "document_domain"
    OTHER = "other"

    @classmethod
    def from_workflow_type(cls, value: str) -> WorkflowKind:
        """``code`` -> CODE, ``document`` -> DOCUMENT, anything else -> OTHER."""
        return {"code": cls.CODE, "document": cls.DOCUMENT}.get(value, cls.OTHER)


class RetrievalMode(StrEnum):
    UPFRONT = "upfront"
    ADAPTIVE = "adaptive"


class StageHints(FrozenModel):
    """A stage's retrieval hints (the workflow's ``retrieval_hints`` for it)."""

    stage_id: str
    focus_on: tuple[str, ...] = ()
    avoid: tuple[str, ...] = ()
    token_budget: int = Field(default=4000, ge=0)


class FailureContext(FrozenModel):
    """What failed, for adaptive retrieval: the stage's report and the failed attempt's output."""

    stage_id: str
    summary: str
    output: str = Field(default="", description="The failed attempt's output: test runner text, tracebacks, evidence.")


class RetrievalRequest(FrozenModel):
    task: str
    workflow_kind: WorkflowKind
    stage: StageHints
    mode: RetrievalMode = RetrievalMode.UPFRONT
    failure: FailureContext | None = None


class PlannedQuery(FrozenModel):
    """One query for one source, with why it was asked."""

    source: SourceName
    text: str
    purpose: str
    focus: str | None = None
    """A stage's ``focus_on`` hint this query stands for: where the index offers it (upfront retrieval's
    ``SharedSearches``), its hits are those of ``refines`` re-ranked by this hint, not a search of ``text``."""
    refines: str | None = None
    """The query (its text, of the same source) whose hits ``focus`` re-ranks."""


class Attribution(FrozenModel):
    """Where a piece comes from, precisely enough to cite it and call MCP tools on it."""

    path: str | None = Field(default=None, description="Workspace-relative POSIX path.")
    start_line: int | None = None
    end_line: int | None = None
    symbol: str | None = Field(default=None, description="Qualified name (Class.method) of a code piece.")
    ast_type: str | None = Field(default=None, description="function, method, class, section, window, ...")
    section_path: str | None = Field(default=None, description="Heading path of a document section.")
    url: str | None = Field(default=None, description="Web result or advisory URL.")
    ref: str | None = Field(default=None, description="Advisory id, run id, or fact kind (definition, ...).")

    def cite(self) -> str:
        """``path:start-end (symbol)``, or the URL / reference."""
        if self.path is not None:
            where = self.path + (f":{self.start_line}-{self.end_line}" if self.start_line is not None else "")
            name = self.symbol or self.section_path
            return f"{where} ({name})" if name else where
        return self.url or self.ref or "?"


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """One hit from one source for one query (fusion's input)."""

    id: str
    source: SourceName
    text: str
    attribution: Attribution
    score: float
    rank: int = 1
    query: str = ""
    chunk: Chunk | None = None
    grounded_text: bool = True
    """False for text that is not a verbatim slice of a workspace file (facts summaries, web, advisories)."""
    extra_queries: tuple[str, ...] = field(default=())


class CandidateRef(FrozenModel):
    id: str
    source: SourceName
    score: float
    rank: int
    query: str
    cite: str


class ContextPiece(FrozenModel):
    """One piece of fused, validated context."""

    id: str
    source: SourceName
    text: str
    attribution: Attribution
    score: float = Field(description="Normalized relevance in [0, 1] (1 = the run's best piece).")
    tokens: int
    queries: tuple[str, ...] = ()
    merged_from: tuple[str, ...] = Field(default=(), description="Candidate ids folded into this piece.")
    outline: bool = Field(
        default=False,
        description="The text is the piece's outline (signatures, then the line range of the whole), not the whole.",
    )


class Rejection(FrozenModel):
    id: str
    cite: str
    step: str = Field(description="dedup, near_duplicate, merge, budget, grounding, consistency, relevance.")
    reason: str


class SourceState(StrEnum):
    OK = "ok"
    OFF = "off"
    UNAVAILABLE = "unavailable"


class SourceStatus(FrozenModel):
    source: SourceName
    state: SourceState
    reason: str | None = None
    candidates: int = 0
    seconds: float = 0.0


class RetrievalEvent(FrozenModel):
    """One decision-log event of a retrieval."""

    kind: str = Field(description="queries, source, fusion, validation, budget.")
    summary: str
    data: dict[str, object] = Field(default_factory=dict[str, object])


class RetrievalResult(FrozenModel):
    """What one retrieval produced, with an honest account of how."""

    request: RetrievalRequest
    queries: tuple[PlannedQuery, ...]
    query_writer: str = Field(description="model (its label) or deterministic.")
    sources: tuple[SourceStatus, ...]
    candidates: tuple[CandidateRef, ...]
    context: tuple[ContextPiece, ...]
    rejections: tuple[Rejection, ...] = ()
    flags: tuple[str, ...] = Field(default=(), description="Consistency warnings (doc claims vs decisions).")
    ast_map: str | None = Field(default=None, description="Functions, classes, imports of the relevant files.")
    tokens: int = 0
    token_budget: int = 0
    events: tuple[RetrievalEvent, ...] = ()
    seconds: float = 0.0

    def source(self, name: SourceName) -> SourceStatus | None:
        return next((s for s in self.sources if s.source is name), None)
