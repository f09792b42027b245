"""The vocabulary of runs every floor speaks: plans, routing and stop decisions, progress events, run records
and decision logs, attachments.

Data only (pydantic models, enums and a few constants): the pipeline (``daemon.orchestration``) builds
and stores them, the run service answers in them, and the fronts (CLI, ACP, LSP) import them from here.
The review vocabulary (branches, change sets, conflicts) is ``daemon.core.review_models``; the
workflow schema ``daemon.core.workflow_schema``; the workflow selection ``daemon.core.selection_models``.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from daemon.core.frozen_model import FrozenModel
from daemon.core.selection_models import Selection
from daemon.core.workflow_schema import (
    AgentSpec,
    EvaluationConfig,
    FailureAggregation,
    ReflectionConfig,
    RetrievalHint,
    RetrievalStrategyConfig,
    StageType,
    WorkflowNote,
    WorkflowType,
    stage_by_id,
)

__all__ = [
    "ABORT_NODE",
    "ADAPTIVE_NODE",
    "DONE_NODE",
    "HOW_TO_CONFIGURE",
    "PROGRESS_MESSAGE_TYPE",
    "Attachment",
    "ChangedFile",
    "DecisionEntry",
    "DecisionKind",
    "ExecutionPlan",
    "ExecutionProgress",
    "MigrationReport",
    "PlanEntry",
    "PlanEntryStatus",
    "PlannedStage",
    "ProgressKind",
    "RouteDecision",
    "RouteOutcome",
    "RunChanges",
    "RunCommands",
    "RunMode",
    "RunRecord",
    "RunStatus",
    "SkippedStage",
    "StageRoute",
    "StopDecision",
    "StopStatus",
    "ToolCallStatus",
    "ToolKind",
    "ToolLocation",
    "WithheldCommand",
    "new_run_id",
    "utc_now",
]


ADAPTIVE_NODE = "adaptive_retrieval"


DONE_NODE = "done"


ABORT_NODE = "abort"


class RouteOutcome(StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"
    ENRICH = "enrich"
    RETRY = "retry"
    ENTRY = "entry"


class RouteDecision(FrozenModel):
    """One edge taken, with the condition that chose it."""

    source: str
    target: str
    outcome: RouteOutcome
    condition: str
    retry_stage: str | None = None
    iteration: int = 0


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class StopStatus(StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"
    ABORTED = "aborted"
    CANCELLED = "cancelled"


class StopDecision(FrozenModel):
    status: StopStatus
    reason: str
    evidence_refs: tuple[str, ...] = ()
    decided_at: str = Field(default_factory=utc_now)


class StageRoute(FrozenModel):
    """Where a planned stage goes; every target is a planned stage id, DONE or ABORT."""

    on_success: str
    on_failure: str
    retry: str = Field(description="The planned stage a retry after adaptive retrieval re-runs.")


class PlannedStage(FrozenModel):
    stage_id: str
    name: str
    type: StageType
    required: bool
    agents: tuple[AgentSpec, ...]
    failure_aggregation: FailureAggregation
    max_attempts: int | None
    failure_criteria: tuple[str, ...]
    task_context: str = Field(description="What the stage's agents are asked to do, with the why.")
    token_budget: int
    retrieval_hint: RetrievalHint
    decision_reason: str


class SkippedStage(FrozenModel):
    stage_id: str
    name: str
    reason: str


class ExecutionPlan(FrozenModel):
    workflow: str
    workflow_version: str
    workflow_type: WorkflowType
    request: str
    entry: str = Field(description="The first planned stage, or DONE when nothing is planned.")
    stages: tuple[PlannedStage, ...]
    skipped: tuple[SkippedStage, ...]
    routing: dict[str, StageRoute]
    retrieval_strategy: RetrievalStrategyConfig
    notes: tuple[WorkflowNote, ...] = Field(
        default=(), description="The workflow file's fields in the specification's spelling: mapped or informational."
    )
    reflection: ReflectionConfig = Field(
        default_factory=ReflectionConfig,
        description="The workflow's reflector, its stages resolved to the planned stages it critiques.",
    )
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig, description="The workflow's evaluator.")

    def stage(self, stage_id: str) -> PlannedStage:
        return stage_by_id(self.stages, stage_id)

    @property
    def stage_ids(self) -> tuple[str, ...]:
        return tuple(s.stage_id for s in self.stages)

    @property
    def reflected_stages(self) -> tuple[str, ...]:
        """The planned stages the reflector critiques (none when reflection is off)."""
        return self.reflection.stages if self.reflection.enabled else ()

    @property
    def agent_roles(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a.model_role for s in self.stages for a in s.agents))


class Attachment(FrozenModel):
    """Context the user attached to a request: a file, a selection, a link or a piece of text."""

    kind: Literal["file", "selection", "link", "text"]
    uri: str | None = Field(default=None, description="file:// or another URI as the client sent it.")
    path: str | None = Field(default=None, description="Workspace-relative path when the URI names a workspace file.")
    text: str | None = Field(default=None, description="The content (embedded resources, selections, text).")
    start_line: int | None = Field(default=None, ge=1, description="Selections: the first line (1-based).")
    end_line: int | None = Field(default=None, ge=1)
    mime_type: str | None = None

    def describe(self) -> str:
        """A heading for a prompt: the path and lines, else the URI, else the kind."""
        where = self.path or self.uri or self.kind
        if self.start_line is not None:
            where += f":{self.start_line}" + (f"-{self.end_line}" if self.end_line else "")
        return where


PROGRESS_MESSAGE_TYPE = "langgraph_execution_progress"


class ProgressKind(StrEnum):
    RUN_STARTED = "run_started"
    RUN_RESUMED = "run_resumed"
    NODE_STARTED = "node_started"
    NODE_FINISHED = "node_finished"
    ROUTING_DECISION = "routing_decision"
    RUN_FINISHED = "run_finished"
    PLAN = "plan"
    THOUGHT = "thought"
    AGENT_MESSAGE = "agent_message"
    TOOL_CALL = "tool_call"
    TOOL_CALL_UPDATE = "tool_call_update"
    REVIEW = "review"


PlanEntryStatus = Literal["pending", "in_progress", "completed", "failed", "skipped"]


ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]


ToolCallStatus = Literal["pending", "in_progress", "completed", "failed"]


class PlanEntry(FrozenModel):
    """One stage of the plan as a front shows it."""

    stage_id: str
    name: str
    status: PlanEntryStatus
    attempt: int = Field(default=0, description="Attempts started so far (0 while pending or skipped).")
    reason: str | None = Field(default=None, description="Why a skipped stage was skipped.")


class ToolLocation(FrozenModel):
    """A place a tool call touched: a workspace-relative path and a 1-based line when known."""

    path: str
    line: int | None = None


class ChangedFile(FrozenModel):
    """One file of a run's change set, as statistics (the diff comes from the change set itself)."""

    path: str
    status: str = Field(description="added, modified, deleted or renamed.")
    added: int = 0
    removed: int = 0


class RunChanges(FrozenModel):
    """What an editing run changed: its branch and worktree, the commits and the files."""

    branch: str
    worktree: str
    base_commit: str
    head_commit: str | None = None
    commits: tuple[str, ...] = ()
    files: tuple[ChangedFile, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.files


class ExecutionProgress(FrozenModel):
    """One progress message."""

    type: Literal["langgraph_execution_progress"] = PROGRESS_MESSAGE_TYPE
    run_id: str
    seq: int = Field(description="1-based, increasing within a run (also across a resume).")
    timestamp: str
    event: ProgressKind
    workflow: str
    node: str | None = Field(default=None, description="Stage id, adaptive_retrieval, done or abort.")
    stage_name: str | None = None
    attempt: int | None = None
    status: str = Field(description="running, succeeded, failed, or the run status on run events.")
    current_stage: str | None = None
    completed_stages: tuple[str, ...] = ()
    planned_stages: tuple[str, ...] = ()
    routing: RouteDecision | None = None
    summary: str | None = None
    stop: StopDecision | None = None
    plan: tuple[PlanEntry, ...] = Field(default=(), description="plan events: every stage with its status.")
    text: str | None = Field(default=None, description="thought and agent_message events: the text.")
    agent_id: str | None = Field(default=None, description="The agent behind agent_message and tool events.")
    tool_call_id: str | None = Field(default=None, description="Unique within the run; the same for a call's updates.")
    title: str | None = Field(default=None, description="tool_call: what the call does, for a person.")
    tool_kind: ToolKind | None = None
    tool_status: ToolCallStatus | None = None
    locations: tuple[ToolLocation, ...] = ()
    raw_input: dict[str, Any] | None = Field(default=None, description="tool_call: the arguments as called.")
    output: str | None = Field(default=None, description="tool_call_update: the result text (capped).")
    changes: RunChanges | None = Field(default=None, description="review events: the run's change set statistics.")


def new_run_id() -> str:
    """Sortable and short: ``20250101-120000-a1b2c3``."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


class RunStatus(StrEnum):
    PLANNED = "planned"
    RUNNING = "running"
    INTERRUPTED = "interrupted"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    ABORTED = "aborted"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        return self in (RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.ABORTED, RunStatus.CANCELLED)


RunMode = Literal["ask", "code"]
"""ask: read-only tools, no worktree; code: agents edit a worktree on the run's branch, reviewed at the end."""


class RunRecord(FrozenModel):
    """What a run is, how far it got and why it stopped."""

    run_id: str
    status: RunStatus
    request: str
    workflow: str | None = None
    created_at: str
    updated_at: str
    finished_at: str | None = None
    selection: Selection | None = None
    plan: ExecutionPlan | None = None
    stop: StopDecision | None = None
    error: str | None = None
    pid: int | None = Field(default=None, description="Process executing the run while it is running.")
    resumed: int = Field(default=0, description="How many times the run was resumed.")
    cancel_requested: bool = False
    mode: RunMode = "code"
    include_uncommitted: bool = Field(
        default=False, description="The worktree started from the user's uncommitted changes."
    )
    attachments: tuple[Attachment, ...] = Field(default=(), description="Context the user attached to the request.")
    changes: RunChanges | None = Field(default=None, description="Editing runs: branch, commits and changed files.")
    follow_ups: int = Field(default=0, description="Feedback rounds answered after the run ended.")
    workspace: str | None = Field(
        default=None, description="Id of the workspace that wrote the run (runs.workspace_id); the store stamps it."
    )
    host: str | None = Field(default=None, description="Machine of the process executing the run (beside pid).")


class DecisionKind(StrEnum):
    SELECTION = "selection"
    STAGE_DECISION = "stage_decision"
    PLAN = "plan"
    ROUTE = "route"
    RETRY = "retry"
    ENRICHMENT = "enrichment"
    STAGE_RESULT = "stage_result"
    RESUME = "resume"
    CANCEL = "cancel"
    STOP = "stop"
    ERROR = "error"
    WORKTREE = "worktree"
    COMMIT = "commit"
    FOLLOW_UP = "follow_up"
    REVIEW = "review"
    ACCEPT = "accept"
    REJECT = "reject"
    ROLLBACK = "rollback"
    TRUST = "trust"
    CONSISTENCY = "consistency"
    REFLECTION = "reflection"
    EVALUATION = "evaluation"


class DecisionEntry(FrozenModel):
    run_id: str
    seq: int
    at: str
    kind: DecisionKind
    summary: str
    data: dict[str, Any] = Field(default_factory=dict[str, Any])


@dataclass(frozen=True, kw_only=True)
class WithheldCommand:
    name: str
    line: str
    source: str
    """The file that defined it (the ``.ided.toml`` or the workflow file)."""


@dataclass(frozen=True, kw_only=True)
class RunCommands:
    """One run's commands: those it may run and those withheld for want of trust."""

    named: dict[str, str]
    withheld: tuple[WithheldCommand, ...] = ()
    how_to_trust: str = ""

    def explain(self) -> str:
        """One line saying what was withheld and how to allow it ("" when nothing was)."""
        if not self.withheld:
            return ""
        listed = ", ".join(f"'{w.name}' ({w.source})" for w in self.withheld)
        return (
            f"repository commands not run, the workspace is not trusted: {listed}. "
            f"Trust it with `{self.how_to_trust}` (or `ided run --trust`) to let them run."
        )


@dataclass(frozen=True, kw_only=True)
class MigrationReport:
    copied: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    """Run ids the target held already."""
    checkpoints: int = 0
    source: str = ""
    target: str = ""


HOW_TO_CONFIGURE = (
    "configure a model in .ided.toml, e.g.\n"
    "  [pipeline.models.default]\n"
    '  provider = "openai"                       # any OpenAI-compatible server\n'
    '  base_url = "http://localhost:11434/v1"   # Ollama; vLLM, llama.cpp server and LM Studio work alike\n'
    '  model = "qwen2.5-coder:7b"\n'
    "or set pipeline.replay_script (IDED_PIPELINE__REPLAY_SCRIPT) to a file of scripted answers "
    "(see docs/pipeline.md)"
)
