"""The deterministic selector: used when no model is configured and when the model's answers fail.

Workflow: the one whose ``applicable_patterns`` match the request most often; ties (including no
match at all) go to the highest cosine similarity between the request's words and the workflow's
name, description and pattern words; remaining ties to the name, alphabetically.

Optional stages, first rule that applies:

1. the request contains one of the stage's ``include_keywords`` -> INCLUDE;
2. the project profile has security-sensitive markers and the stage is a review or audit -> INCLUDE;
3. the stage's ``default_decision``.

Required stages are always included.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

from daemon.core.selection_models import (
    DecisionSource,
    Selection,
    SelectionAttempt,
    SelectionPath,
    StageDecision,
    WorkflowScore,
)
from daemon.core.workflow_schema import StageDefault, StageType, Workflow
from daemon.orchestration.project_profile import ProjectProfile
from daemon.orchestration.workflow_loader import WorkflowCatalog

__all__ = ["decide_stages", "score_workflows", "select_deterministically", "words"]


_WORD = re.compile(r"[a-z][a-z0-9]+")
# fmt: off
_STOP = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "has", "have", "how", "i",
    "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "please", "so", "that", "the", "their",
    "then", "there", "these", "this", "to", "up", "us", "we", "what", "when", "where", "which", "while", "who",
    "why", "will", "with", "would", "you", "your",
))
# fmt: on
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "s")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def words(text: str) -> list[str]:
    """Lower-cased, stop words dropped, lightly stemmed."""
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP]


def _cosine(a: Iterable[str], b: Iterable[str]) -> float:
    ca, cb = Counter(a), Counter(b)
    dot = sum(n * cb[w] for w, n in ca.items())
    if not dot:
        return 0.0
    return dot / (math.sqrt(sum(n * n for n in ca.values())) * math.sqrt(sum(n * n for n in cb.values())))


def _workflow_words(workflow: Workflow) -> list[str]:
    meta = workflow.metadata
    pattern_words = " ".join(
        re.sub(r"\\[a-zA-Z]|[^a-zA-Z ]", " ", p) for p in meta.selection_criteria.applicable_patterns
    )
    return words(f"{meta.name.replace('_', ' ')} {meta.description} {pattern_words}")


def score_workflows(request: str, catalog: WorkflowCatalog) -> list[WorkflowScore]:
    """Every workflow's score for ``request``, best first."""
    request_words = words(request)
    scores = [
        WorkflowScore(
            workflow=name,
            pattern_hits=sum(
                1 for p in wf.metadata.selection_criteria.applicable_patterns if re.search(p, request, re.IGNORECASE)
            ),
            similarity=round(_cosine(request_words, _workflow_words(wf)), 6),
        )
        for name, wf in catalog.workflows.items()
    ]
    scores.sort(key=lambda s: (-s.pattern_hits, -s.similarity, s.workflow))
    return scores


def decide_stages(workflow: Workflow, request: str, profile: ProjectProfile | None) -> tuple[StageDecision, ...]:
    """A decision for every stage of ``workflow``, in order, by the rules in the module docstring."""
    request_words = set(words(request))
    decisions: list[StageDecision] = []
    for stage in workflow.stages:
        if stage.required:
            decisions.append(StageDecision.required(stage.stage_id))
            continue
        hits = [k for k in stage.include_keywords if set(words(k)) and set(words(k)) <= request_words]
        if hits:
            include, reason = True, f"the request mentions '{hits[0]}'"
        elif profile is not None and profile.security_sensitive and stage.type in (StageType.REVIEW, StageType.AUDIT):
            include = True
            reason = "the project has security-sensitive code (" + ", ".join(profile.security_markers[:3]) + ")"
        else:
            include = stage.default_decision is StageDefault.INCLUDE
            reason = f"no rule applies; the stage's default is to {stage.default_decision.value} it"
        decisions.append(
            StageDecision(stage_id=stage.stage_id, include=include, reason=reason, source=DecisionSource.RULE)
        )
    return tuple(decisions)


def select_deterministically(
    request: str,
    catalog: WorkflowCatalog,
    profile: ProjectProfile | None,
    *,
    workflow: str | None = None,
    path: SelectionPath = SelectionPath.DETERMINISTIC_NO_MODEL,
    model: str | None = None,
    attempts: Iterable[SelectionAttempt] = (),
) -> Selection:
    """Choose a workflow (or take the forced one) and decide its stages without a model."""
    scores = score_workflows(request, catalog)
    if workflow is not None:
        chosen = catalog.get(workflow)
        rationale = f"workflow '{workflow}' was requested explicitly"
    else:
        if not scores:
            raise ValueError("the workflow catalog is empty")
        best = scores[0]
        chosen = catalog.get(best.workflow)
        if best.pattern_hits:
            rationale = (
                f"'{best.workflow}': {best.pattern_hits} of its applicable_patterns match the request"
                f" (similarity {best.similarity:.2f})"
            )
        else:
            rationale = f"'{best.workflow}': no pattern matches; closest description (similarity {best.similarity:.2f})"
    return Selection(
        workflow=chosen.name,
        rationale=rationale,
        stage_decisions=decide_stages(chosen, request, profile),
        path=path,
        forced=workflow is not None,
        model=model,
        attempts=tuple(attempts),
        scores=tuple(scores[:5]),
    )
