"""The typed execution state of a run: what the LangGraph state machine carries from node to node.

The graph's channels hold plain JSON values (``to_channel_values``), so LangGraph checkpoints store
no pickled or msgpack-extension objects; each node receives the state validated back into these
models.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import to_jsonable_python

from daemon.core.frozen_model import FrozenModel
from daemon.core.run_models import RouteDecision, StageRoute
from daemon.core.workflow_schema import FailureAggregation, RetrievalStrategyConfig

__all__ = [
    "AgentOutcome",
    "ConsistencyFinding",
    "Critique",
    "EnrichedSnippet",
    "Evaluation",
    "ExecutionState",
    "StageResult",
    "to_channel_values",
]


class AgentOutcome(FrozenModel):
    """What one agent of a stage reported."""

    agent_id: str
    failed: bool
    summary: str
    evidence: tuple[str, ...] = ()
    error: str | None = Field(default=None, description="Set when the agent could not run or answer properly.")
    seconds: float = 0.0
    output: str = Field(default="", description="The agent's final text (its answer).")
    tools_used: tuple[str, ...] = Field(default=(), description="Tool names in call order.")
    files_written: tuple[str, ...] = Field(default=(), description="Workspace-relative paths the agent wrote.")
    tokens: int = Field(default=0, description="Tokens spent (the provider's count, else an estimate).")


ConsistencyKind = Literal["test_failed_again", "hunk_returned", "contradicts_accepted", "no_change"]


class ConsistencyFinding(FrozenModel):
    """What checking a stage attempt against the run's earlier attempts found (``consistency``)."""

    kind: ConsistencyKind
    stage_id: str = Field(description="The stage whose attempt was checked.")
    attempt: int
    concerns: tuple[str, ...] = Field(description="The stages whose agents are told (the one to fix it first).")
    text: str = Field(description="The finding in words, as the agents read it.")
    refs: tuple[str, ...] = Field(default=(), description="The earlier attempts it points at: stage/attempt.")
    paths: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()


class Critique(FrozenModel):
    """One round of the reflector on a stage attempt (``reflection``)."""

    round: int = Field(ge=1)
    verdict: Literal["accept", "send_back", "skipped"]
    critique: str = ""
    issues: tuple[str, ...] = ()
    note: str | None = Field(default=None, description="Why it was skipped, or why a send-back was not followed.")
    seconds: float = 0.0


class Evaluation(FrozenModel):
    """The evaluator's score of the run's result (``reflection``)."""

    score: float | None = Field(default=None, description="0-10; None when the evaluation was skipped.")
    summary: str = ""
    strengths: tuple[str, ...] = ()
    issues: tuple[str, ...] = ()
    note: str | None = Field(default=None, description="Why it was skipped.")
    seconds: float = 0.0


class StageResult(FrozenModel):
    """One run (attempt) of a stage."""

    stage_id: str
    attempt: int
    failed: bool
    aggregation: FailureAggregation
    agents: tuple[AgentOutcome, ...]
    summary: str
    started_at: str
    finished_at: str
    context_snippets: int = Field(default=0, description="Enriched-context snippets the agents received.")
    commit: str | None = Field(default=None, description="The commit of this attempt's changes (editing runs).")
    feedback: str | None = Field(default=None, description="Review feedback this attempt answered (follow-ups).")
    consistency: tuple[ConsistencyFinding, ...] = Field(
        default=(), description="This attempt checked against the run's earlier attempts (``consistency``)."
    )
    critiques: tuple[Critique, ...] = Field(
        default=(), description="The reflector's rounds on this attempt, before it was committed."
    )


class EnrichedSnippet(FrozenModel):
    """A piece of context added by adaptive retrieval (or the failure report that triggered it)."""

    source: str = Field(description="failure, or the rag source name (code, docs, ...).")
    text: str
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    score: float | None = None
    query: str | None = None

    @property
    def tokens(self) -> int:
        return max(1, len(self.text) // 4)


class ExecutionState(BaseModel):
    """The state machine's state (LangGraph state schema)."""

    model_config = ConfigDict(extra="forbid")

    run_id: str = ""
    request: str = ""
    workflow_name: str = ""
    workflow_type: str = ""
    current_stage: str | None = None
    stage_results: dict[str, list[StageResult]] = Field(default_factory=dict[str, list[StageResult]])
    attempts: dict[str, int] = Field(default_factory=dict[str, int])
    enrichment_attempts: dict[str, int] = Field(default_factory=dict[str, int])
    enriched_context: dict[str, list[EnrichedSnippet]] = Field(default_factory=dict[str, list[EnrichedSnippet]])
    routing_table: dict[str, StageRoute] = Field(default_factory=dict[str, StageRoute])
    retrieval_context: RetrievalStrategyConfig | None = None
    iterations: int = 0
    next_node: str = ""
    routes: list[RouteDecision] = Field(default_factory=list[RouteDecision])
    terminal: str | None = Field(default=None, description="done or abort once a terminal node ran.")
    reflection_round: dict[str, int] = Field(
        default_factory=dict[str, int],
        description="Per stage: how often the reflector sent its current attempt back (0: a fresh attempt next).",
    )
    evaluation: Evaluation | None = None
    abort_reason: str | None = None

    def last_result(self, stage_id: str) -> StageResult | None:
        results = self.stage_results.get(stage_id)
        return results[-1] if results else None


def to_channel_values(**values: Any) -> dict[str, Any]:
    """A node's state update as plain JSON values."""
    return {key: to_jsonable_python(value) for key, value in values.items()}
