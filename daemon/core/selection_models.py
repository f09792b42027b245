"""What selection produces (``Selection``) and what the orchestrator model must answer (``OrchestratorAnswer``).

The model's answer is deliberately narrow: the workflow, INCLUDE/SKIP with a reason for each
optional stage, and a rationale. It says nothing about retrieval queries (extra keys are rejected,
which sends the answer back to the model with the validation error).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field

from daemon.core.frozen_model import FrozenModel

__all__ = [
    "DecisionSource",
    "OrchestratorAnswer",
    "Selection",
    "SelectionAttempt",
    "SelectionPath",
    "StageChoice",
    "StageDecision",
    "WorkflowScore",
]


class SelectionPath(StrEnum):
    """How the selection came about (recorded in the run's decision log)."""

    LLM = "llm"
    LLM_AFTER_RETRY = "llm_after_retry"
    DETERMINISTIC_FALLBACK = "deterministic_fallback"
    DETERMINISTIC_NO_MODEL = "deterministic_no_model"


class DecisionSource(StrEnum):
    REQUIRED = "required"
    MODEL = "model"
    RULE = "rule"


class StageDecision(FrozenModel):
    stage_id: str
    include: bool
    reason: str
    source: DecisionSource

    @classmethod
    def required(cls, stage_id: str) -> StageDecision:
        """The decision for a required stage: included, whoever decides the others."""
        return cls(stage_id=stage_id, include=True, reason="required stage", source=DecisionSource.REQUIRED)


class WorkflowScore(FrozenModel):
    """How well a workflow matches a request, for the deterministic selector."""

    workflow: str
    pattern_hits: int
    similarity: float


class SelectionAttempt(FrozenModel):
    """One call of the orchestrator model."""

    attempt: int
    ok: bool
    error: str | None = None
    answer_excerpt: str | None = Field(default=None, description="The start of what the model answered.")


class Selection(FrozenModel):
    """The chosen workflow and a decision for every stage (required ones included), in workflow order."""

    workflow: str
    rationale: str
    stage_decisions: tuple[StageDecision, ...]
    path: SelectionPath
    forced: bool = Field(default=False, description="The workflow was named by the caller (--workflow).")
    model: str | None = Field(default=None, description="The orchestrator model, when one answered or was tried.")
    attempts: tuple[SelectionAttempt, ...] = ()
    scores: tuple[WorkflowScore, ...] = Field(default=(), description="Deterministic scores, best first.")

    def decision(self, stage_id: str) -> StageDecision | None:
        return next((d for d in self.stage_decisions if d.stage_id == stage_id), None)


class StageChoice(FrozenModel):
    stage_id: str = Field(description="An optional stage of the chosen workflow.")
    decision: Literal["INCLUDE", "SKIP"]
    reason: str = Field(min_length=1, description="One sentence, from the stage's reasoning_guidance.")


class OrchestratorAnswer(FrozenModel):
    """The orchestrator model's structured output."""

    workflow: str = Field(description="The name of one of the available workflows.")
    stage_decisions: list[StageChoice] = Field(description="One entry for every optional stage of that workflow.")
    rationale: str = Field(min_length=1, description="Why this workflow fits the request.")
