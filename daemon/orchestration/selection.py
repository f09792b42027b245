"""Workflow selection by the orchestrator model, with retry-with-validation-error and a deterministic fallback.

The model sees the request, the project profile and the available workflows (name, description,
applicable patterns, optional stages with their reasoning guidance) and answers an
``OrchestratorAnswer`` as JSON. An answer that does not parse, names an unknown workflow, misses an
optional stage, or lists a required or unknown stage goes back to the model with the error
(``pipeline.selection_retries`` times); then the deterministic selector decides. A model that cannot
be reached at all goes straight to the deterministic selector. ``Selection.path`` and
``Selection.attempts`` record what happened.
"""

from __future__ import annotations

import logging

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from daemon.core.selection_models import (
    DecisionSource,
    OrchestratorAnswer,
    Selection,
    SelectionAttempt,
    SelectionPath,
    StageDecision,
)
from daemon.core.workflow_schema import Workflow
from daemon.errors import PipelineError
from daemon.orchestration.deterministic_selector import select_deterministically
from daemon.orchestration.project_profile import ProjectProfile
from daemon.orchestration.resilience import ChatCaller
from daemon.orchestration.structured_output import AnswerInvalid, json_instructions, parse_answer
from daemon.orchestration.workflow_loader import WorkflowCatalog

__all__ = ["Orchestrator", "selection_messages", "validate_answer"]

logger = logging.getLogger(__name__)

_SYSTEM = """You are the orchestrator of ided, an agentic IDE. Pick the ONE workflow that fits the user's
request, and decide for every OPTIONAL stage of that workflow whether to INCLUDE or SKIP it, with a
one-sentence reason that follows the stage's reasoning guidance. Required stages always run: do not
list them. Do not write retrieval queries or plans; the rest of the pipeline is configuration."""


def _describe_workflow(workflow: Workflow) -> str:
    meta = workflow.metadata
    lines = [f"- {meta.name} ({meta.workflow_type.value}): {meta.description.strip()}"]
    if meta.selection_criteria.applicable_patterns:
        lines.append("  applicable patterns: " + " | ".join(meta.selection_criteria.applicable_patterns))
    required = [s.stage_id for s in workflow.stages if s.required]
    lines.append("  required stages: " + (", ".join(required) or "none"))
    for stage in workflow.optional_stages:
        guidance = stage.reasoning_guidance.strip() or "no guidance"
        lines.append(f"  optional stage {stage.stage_id} ({stage.name}): {guidance}")
    return "\n".join(lines)


def selection_messages(
    request: str, catalog: WorkflowCatalog, profile: ProjectProfile | None, *, workflow: str | None
) -> list[BaseMessage]:
    """The orchestrator's prompt."""
    names = [workflow] if workflow is not None else catalog.names()
    listing = "\n".join(_describe_workflow(catalog.get(n)) for n in names)
    only = f"\nThe workflow is fixed by the user: answer workflow '{workflow}'." if workflow is not None else ""
    human = (
        f"Request:\n{request.strip()}\n\n"
        f"Project: {profile.summary() if profile is not None else 'unknown'}\n\n"
        f"Available workflows:\n{listing}{only}\n\n{json_instructions(OrchestratorAnswer)}"
    )
    return [SystemMessage(content=_SYSTEM), HumanMessage(content=human)]


def validate_answer(
    answer: OrchestratorAnswer, catalog: WorkflowCatalog, *, workflow: str | None
) -> tuple[Workflow, tuple[StageDecision, ...]]:
    """Check the answer against the catalog; ``AnswerInvalid`` says what to correct."""
    if workflow is not None and answer.workflow != workflow:
        raise AnswerInvalid(f"workflow must be '{workflow}' (fixed by the user), not '{answer.workflow}'")
    if answer.workflow not in catalog.workflows:
        raise AnswerInvalid(f"unknown workflow '{answer.workflow}'; choose one of: {', '.join(catalog.names())}")
    chosen = catalog.get(answer.workflow)
    optional = {s.stage_id for s in chosen.optional_stages}
    required = {s.stage_id for s in chosen.stages if s.required}
    given = [c.stage_id for c in answer.stage_decisions]
    problems: list[str] = []
    if dup := sorted({s for s in given if given.count(s) > 1}):
        problems.append("decided more than once: " + ", ".join(dup))
    if req := sorted(set(given) & required):
        problems.append("required stages must not be listed: " + ", ".join(req))
    if unknown := sorted(set(given) - optional - required):
        problems.append("not stages of this workflow: " + ", ".join(unknown))
    if missing := sorted(optional - set(given)):
        problems.append("missing a decision for optional stages: " + ", ".join(missing))
    if problems:
        raise AnswerInvalid("; ".join(problems))
    choices = {c.stage_id: c for c in answer.stage_decisions}
    decisions: list[StageDecision] = []
    for stage in chosen.stages:
        if stage.required:
            decisions.append(StageDecision.required(stage.stage_id))
        else:
            choice = choices[stage.stage_id]
            decisions.append(
                StageDecision(
                    stage_id=stage.stage_id,
                    include=choice.decision == "INCLUDE",
                    reason=choice.reason.strip(),
                    source=DecisionSource.MODEL,
                )
            )
    return chosen, tuple(decisions)


class Orchestrator:
    """Selects the workflow and its stages for a request."""

    def __init__(self, model: ChatCaller | None, *, retries: int = 1) -> None:
        self._model = model
        self._retries = retries

    async def select(
        self,
        request: str,
        catalog: WorkflowCatalog,
        profile: ProjectProfile | None,
        *,
        workflow: str | None = None,
    ) -> Selection:
        if workflow is not None:
            catalog.get(workflow)  # an unknown forced workflow is the caller's error, not a fallback
        if self._model is None:
            return select_deterministically(request, catalog, profile, workflow=workflow)
        messages = selection_messages(request, catalog, profile, workflow=workflow)
        attempts: list[SelectionAttempt] = []
        for attempt in range(1, self._retries + 2):
            try:
                text = await self._model.complete(messages)
            except PipelineError as exc:
                attempts.append(SelectionAttempt(attempt=attempt, ok=False, error=exc.message))
                logger.warning("orchestrator model unavailable, deterministic fallback: %s", exc.message)
                break
            try:
                answer = parse_answer(text, OrchestratorAnswer)
                chosen, decisions = validate_answer(answer, catalog, workflow=workflow)
            except AnswerInvalid as exc:
                attempts.append(SelectionAttempt(attempt=attempt, ok=False, error=str(exc), answer_excerpt=text[:300]))
                logger.info("orchestrator answer %d invalid: %s", attempt, exc)
                messages = [
                    *messages,
                    AIMessage(content=text),
                    HumanMessage(
                        content=f"That answer is invalid: {exc}. Reply again with only the corrected JSON object."
                    ),
                ]
                continue
            attempts.append(SelectionAttempt(attempt=attempt, ok=True, answer_excerpt=text[:300]))
            return Selection(
                workflow=chosen.name,
                rationale=answer.rationale.strip(),
                stage_decisions=decisions,
                path=SelectionPath.LLM if attempt == 1 else SelectionPath.LLM_AFTER_RETRY,
                forced=workflow is not None,
                model=self._model.label,
                attempts=tuple(attempts),
            )
        return select_deterministically(
            request,
            catalog,
            profile,
            workflow=workflow,
            path=SelectionPath.DETERMINISTIC_FALLBACK,
            model=self._model.label,
            attempts=attempts,
        )
