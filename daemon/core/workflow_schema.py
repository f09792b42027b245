"""The schema of a workflow file (``workflows/*.yaml``), as pydantic models.

A workflow is data: metadata that the orchestrator reads to choose it, a retrieval strategy handed
through to the retrieval layer unchanged, and an ordered list of stages with their routing. The
JSON Schema exported from these models is ``workflows/schema.json`` (``ided workflows schema``).

These models are the one internal model. Files written in the specification's own spelling
(integer stage ids, ``agent:``, ``priority: HIGH``, ``routing.max_attempts`` ...) are normalised into
it at load time by ``workflow_spelling``; what that did, and the fields ided only records, travel
with the workflow as ``Workflow.notes`` (``WorkflowNote``) into the plan output.

Routing targets are a stage id, ``DONE`` or ``ABORT``. The first stage in the file is the entry.
What loading checks beyond this schema (unknown targets, unreachable stages, unbounded loops,
duplicate ids) lives in ``workflow_loader``.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Annotated, Any, Protocol, TypeVar

from pydantic import Field, PrivateAttr, StringConstraints, WithJsonSchema, field_validator

from daemon.core.frozen_model import FrozenModel

__all__ = [
    "ABORT",
    "DONE",
    "EVALUATOR_NODE",
    "REFLECTOR_NODE",
    "RESERVED_STAGE_IDS",
    "AdaptiveRetrievalConfig",
    "AgentSpec",
    "EvaluationConfig",
    "FailureAggregation",
    "ParallelConfig",
    "RagSource",
    "RagStrategy",
    "ReflectionConfig",
    "RetrievalHint",
    "RetrievalStrategyConfig",
    "SelectionCriteria",
    "Stage",
    "StageDefault",
    "StageRouting",
    "StageType",
    "Workflow",
    "WorkflowMetadata",
    "WorkflowNote",
    "WorkflowType",
    "stage_by_id",
    "workflow_json_schema",
]


DONE = "DONE"
"""Routing target: the run reached its end (the stop decision still judges the results)."""
ABORT = "ABORT"
"""Routing target: stop now; the run is aborted."""

REFLECTOR_NODE = "reflector"
"""The graph node that critiques a stage attempt before it is committed (``ReflectionConfig``)."""
EVALUATOR_NODE = "evaluator"
"""The graph node that scores the run's result before ``done`` (``EvaluationConfig``)."""

RESERVED_STAGE_IDS = frozenset(
    {"adaptive_retrieval", "done", "abort", REFLECTOR_NODE, EVALUATOR_NODE, "__start__", "__end__"}
)
"""Graph node names that a stage id may not take."""

_ID = r"^[a-z][a-z0-9_]*$"
_TARGET = r"^([a-z][a-z0-9_]*|DONE|ABORT)$"


class WorkflowType(StrEnum):
    """The domain a workflow works in: code (AST and language servers apply) or documents."""

    CODE = "code"
    DOCUMENT = "document"


class StageType(StrEnum):
    """What a stage does; agents and the deterministic selector read it."""

    ANALYSIS = "analysis"
    RESEARCH = "research"
    IMPLEMENTATION = "implementation"
    TEST_WRITING = "test_writing"
    TEST_EXECUTION = "test_execution"
    TESTING = "testing"
    """Write tests and run them in one stage; the test run decides (the specification's test stage)."""
    LINT_AND_FORMAT = "lint_and_format"
    """Run the workspace's formatters and linters (detected or configured); their exit codes decide."""
    REVIEW = "review"
    AUDIT = "audit"
    DOCUMENTATION = "documentation"
    DECISION = "decision"
    REPORT = "report"


class FailureAggregation(StrEnum):
    """How the failures of a stage's parallel agents become one boolean."""

    ANY_FAILS = "any_fails"
    ALL_FAIL = "all_fail"
    MAJORITY_FAIL = "majority_fail"


class StageDefault(StrEnum):
    """What the deterministic selector does with an optional stage when no rule applies."""

    INCLUDE = "include"
    SKIP = "skip"


class SelectionCriteria(FrozenModel):
    applicable_patterns: tuple[str, ...] = Field(
        default=(),
        description="Case-insensitive regular expressions over the request; a match makes this workflow a candidate.",
    )
    agents: tuple[str, ...] = Field(default=(), description="Agent ids this workflow relies on (informational).")


class WorkflowMetadata(FrozenModel):
    name: str = Field(pattern=_ID, description="Unique workflow name (snake_case); `ided run --workflow NAME`.")
    description: str = Field(min_length=1, description="What the workflow is for; the orchestrator reads it.")
    version: str = Field(default="1.0")
    workflow_type: WorkflowType
    selection_criteria: SelectionCriteria = SelectionCriteria()


class RagSource(FrozenModel):
    name: str = Field(
        description="Source id, e.g. code, docs, tests (index scopes), decision_log, or web / advisories (those "
        "sources, for this workflow's stages)."
    )
    priority: int = Field(default=1, ge=1, description="1 is the highest priority.")
    kind: str | None = Field(default=None, description="code or docs: restrict the index search to that kind.")
    paths: tuple[str, ...] = Field(default=(), description="Globs over workspace-relative paths this source covers.")
    trigger_stages: tuple[str, ...] = Field(
        default=(), description="Only the retrieval for these stage ids uses this source; empty: every stage."
    )


class RagStrategy(FrozenModel):
    enabled: bool = True
    sources: tuple[RagSource, ...] = ()


class RetrievalHint(FrozenModel):
    focus_on: tuple[str, ...] = ()
    avoid: tuple[str, ...] = ()
    token_budget: int = Field(default=4000, ge=0, description="Tokens of retrieved context this stage may receive.")


class AdaptiveRetrievalConfig(FrozenModel):
    enabled: bool = Field(default=True, description="Failures may trigger the adaptive_retrieval node before a retry.")
    max_enrichment_attempts: int = Field(
        default=2, ge=0, le=10, description="Enrichments per failing stage before its failure routing applies."
    )


class RetrievalStrategyConfig(FrozenModel):
    """Passed through the plan unchanged to the retrieval layer (the TART hand-off)."""

    ast_parsing: bool = True
    lsp_integration: bool = True
    rag_strategy: RagStrategy = RagStrategy()
    retrieval_hints: dict[str, RetrievalHint] = Field(
        default_factory=dict[str, RetrievalHint], description="Per stage id: focus_on, avoid, token_budget."
    )
    adaptive_retrieval: AdaptiveRetrievalConfig = AdaptiveRetrievalConfig()
    default_token_budget: int = Field(default=4000, ge=0, description="For stages without a retrieval hint.")


class AgentSpec(FrozenModel):
    agent_id: str = Field(pattern=_ID, description="Agent name, e.g. coder, test_writer, reviewer.")
    role: str | None = Field(
        default=None, description="Model role (pipeline.models key) for this agent; default: the agent_id."
    )
    instructions: str = Field(default="", description="Extra instructions for this agent.")
    mcp_tools: Annotated[
        tuple[str, ...],
        WithJsonSchema(
            {
                "anyOf": [
                    {"type": "array", "items": {"type": "string"}},
                    {
                        "type": "object",
                        "maxProperties": 0,
                        "description": "{}: no tools (the specification's spelling)",
                    },
                ]
            }
        ),
    ] = Field(
        default=(),
        description="ided's code-intel and search tools this agent is offered, exactly: absent, [] or {}: none.",
    )

    @field_validator("mcp_tools", mode="before")
    @classmethod
    def _no_tools_as_a_mapping(cls, value: object) -> object:
        """``mcp_tools: {}`` (as the specification writes "no tools") is the empty list; any other mapping is
        a mistake the schema names."""
        if value is None or value == {}:
            return ()
        return value

    @property
    def model_role(self) -> str:
        return self.role or self.agent_id


class ParallelConfig(FrozenModel):
    failure_aggregation: FailureAggregation = FailureAggregation.ANY_FAILS


class StageRouting(FrozenModel):
    next_stage_on_success: str = Field(pattern=_TARGET, description="Stage id, DONE or ABORT.")
    next_stage_on_failure: str = Field(
        default=ABORT, pattern=_TARGET, description="Where a failure goes once retries are used up."
    )
    retry_stage: str | None = Field(
        default=None,
        pattern=_ID,
        description="The stage a retry after adaptive retrieval re-runs (default: this stage), e.g. the "
        "implementation after failing tests.",
    )


class Stage(FrozenModel):
    stage_id: str = Field(pattern=_ID, description="Unique within the workflow; also the graph node name.")
    name: str = Field(min_length=1)
    type: StageType
    required: bool = Field(default=True, description="Optional stages are included or skipped by the orchestrator.")
    description: str = ""
    parallel_agents: tuple[AgentSpec, ...] = Field(min_length=1, description="Agents that run concurrently.")
    parallel_config: ParallelConfig = ParallelConfig()
    reasoning_guidance: str = Field(default="", description="When to include this stage (optional stages).")
    retrieval_guidance: str = Field(default="", description="What context this stage needs.")
    routing: StageRouting
    max_attempts: int | None = Field(default=None, ge=1, le=20, description="Runs of this stage per workflow run.")
    failure_criteria: tuple[str, ...] = Field(default=(), description="When an agent must report failure.")
    default_decision: StageDefault = Field(
        default=StageDefault.INCLUDE, description="Deterministic selector: optional stage decision by default."
    )
    include_keywords: tuple[str, ...] = Field(
        default=(), description="Deterministic selector: request words that include this optional stage."
    )


class ReflectionConfig(FrozenModel):
    """The reflector: a model that critiques a stage attempt against the task and the tests before it is
    committed, and accepts it or sends it back to the stage's agents with the critique."""

    enabled: bool = Field(default=False, description="Put the reflector node after the reflected stages.")
    stages: tuple[str, ...] = Field(
        default=(),
        description="Stage ids it critiques; empty: every stage of type implementation, test_writing or documentation.",
    )
    max_rounds: int = Field(
        default=2, ge=1, le=5, description="Send-backs per stage attempt; then the attempt goes on as it is."
    )
    instructions: str = Field(default="", description="Extra instructions for the reflector (what to look for).")


class EvaluationConfig(FrozenModel):
    """The evaluator: a model that scores the run's result (0-10) when the run reaches DONE."""

    enabled: bool = Field(default=False, description="Put the evaluator node before DONE.")
    pass_score: float | None = Field(
        default=None,
        ge=0,
        le=10,
        description="When set, a score under it fails a run that would otherwise succeed; unset: the score is "
        "recorded only.",
    )
    instructions: str = Field(default="", description="Extra instructions for the evaluator (what matters most).")


class WorkflowNote(FrozenModel):
    """A field written in the specification's spelling: what ided made of it, or why it is only recorded."""

    field: str = Field(description="Where in the file, e.g. retrieval_strategy_config.strategy_name.")
    value: str = Field(description="The value as written (shortened).")
    meaning: str = Field(description="What ided does with it.")
    informational: bool = Field(description="True when ided records the field but nothing depends on it.")

    def __str__(self) -> str:
        tag = "informational" if self.informational else "mapped"
        return f"{self.field} = {self.value}: {tag}: {self.meaning}"


class Workflow(FrozenModel):
    """One workflow file."""

    _notes: tuple[WorkflowNote, ...] = PrivateAttr(default=())

    metadata: WorkflowMetadata
    retrieval_strategy_config: RetrievalStrategyConfig = RetrievalStrategyConfig()
    commands: dict[Annotated[str, StringConstraints(pattern=_ID)], Annotated[str, StringConstraints(min_length=1)]] = (
        Field(
            default_factory=dict[str, str],
            description="Named command lines this workflow's agents may run in the run's worktree (tests, linters), "
            "e.g. test: 'python -m pytest -q'. The project's [agents.commands] add to them and win on a name clash.",
        )
    )
    stages: tuple[Stage, ...] = Field(min_length=1)
    reflection: ReflectionConfig = Field(
        default_factory=ReflectionConfig, description="The reflector node (off unless enabled)."
    )
    evaluation: EvaluationConfig = Field(
        default_factory=EvaluationConfig, description="The evaluator node (off unless enabled)."
    )

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def entry_stage(self) -> str:
        return self.stages[0].stage_id

    def stage(self, stage_id: str) -> Stage:
        return stage_by_id(self.stages, stage_id)

    @property
    def optional_stages(self) -> tuple[Stage, ...]:
        return tuple(s for s in self.stages if not s.required)

    @property
    def notes(self) -> tuple[WorkflowNote, ...]:
        """Fields the loader normalised from the specification's spelling, and fields only recorded."""
        return self._notes

    def with_notes(self, notes: tuple[WorkflowNote, ...]) -> Workflow:
        copy = self.model_copy()
        copy._notes = notes
        return copy


def workflow_json_schema() -> dict[str, Any]:
    """The published JSON Schema of workflow files (``workflows/schema.json``)."""
    schema = Workflow.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "ided workflow"
    return schema


class _Identified(Protocol):
    @property
    def stage_id(self) -> str: ...


S = TypeVar("S", bound=_Identified)


def stage_by_id(stages: Iterable[S], stage_id: str) -> S:
    """The stage of ``stages`` whose id is ``stage_id`` (``KeyError`` when none is)."""
    for stage in stages:
        if stage.stage_id == stage_id:
            return stage
    raise KeyError(stage_id)
