"""Stage agents: the seam between the graph and whatever does a stage's work, and the plain one-call agent.

``StageAgent`` / ``AgentProvider`` are the seam: ``LlmStageAgent`` is one LLM call that reports success
or failure against the stage's criteria (used when an agent has no tools); the tool-calling
specialists whose edits are commits on a run branch live in ``daemon.orchestration.agents``.
``run_stage`` runs a stage's agents concurrently, each under the stage timeout, and aggregates their
failures by the stage's rule into one boolean.

The prompt names ``Stage:``, ``Agent:`` and ``Attempt:`` on lines of their own, so scripted models
(the replay provider) can match on them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import Field

from daemon.core.frozen_model import FrozenModel
from daemon.core.run_models import Attachment, PlannedStage, utc_now
from daemon.core.workflow_schema import AgentSpec, WorkflowType
from daemon.errors import PipelineError
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.resilience import ChatCaller
from daemon.orchestration.routing import aggregate_failures
from daemon.orchestration.state import AgentOutcome, ConsistencyFinding, Critique, EnrichedSnippet, StageResult
from daemon.orchestration.structured_output import AnswerInvalid, json_instructions, parse_answer

__all__ = [
    "AgentAnswer",
    "AgentProvider",
    "AgentTask",
    "LlmAgentProvider",
    "LlmStageAgent",
    "StageAgent",
    "agent_messages",
    "run_stage",
    "task_lines",
]


@dataclass(frozen=True, kw_only=True)
class AgentTask:
    """Everything one agent needs for one attempt of a stage."""

    run_id: str
    stage: PlannedStage
    agent: AgentSpec
    attempt: int
    workflow_type: WorkflowType
    context: tuple[EnrichedSnippet, ...] = ()
    previous: tuple[StageResult, ...] = ()
    request: str = ""
    attachments: tuple[Attachment, ...] = ()
    feedback: str | None = None
    findings: tuple[ConsistencyFinding, ...] = ()
    """What checking the run's earlier attempts found that concerns this stage (``consistency``)."""
    critique: Critique | None = None
    """The reflector's critique when it sent this attempt back (``reflection``)."""


class StageAgent(Protocol):
    async def run(self, task: AgentTask) -> AgentOutcome: ...


class AgentProvider(Protocol):
    def agent(self, spec: AgentSpec) -> StageAgent: ...


class AgentAnswer(FrozenModel):
    """What an agent must answer."""

    status: Literal["success", "failure"] = Field(description="failure when any failure criterion holds.")
    summary: str = Field(min_length=1, description="What was done or found, in one or two sentences.")
    evidence: list[str] = Field(default_factory=list[str], description="Concrete facts backing the status.")


def task_lines(task: AgentTask) -> list[str]:
    """The task part of an agent's prompt: run, stage, agent and attempt lines, the stage's context, earlier
    attempts and what checking them found, the reflector's critique of a sent-back attempt, review feedback,
    the user's attachments and the enriched context."""
    stage = task.stage
    lines = [
        f"Run: {task.run_id}",
        f"Stage: {stage.stage_id}",
        f"Agent: {task.agent.agent_id}",
        f"Attempt: {task.attempt}",
        stage.task_context,
    ]
    lines.extend(
        f"Earlier attempt {r.attempt}: {'failed' if r.failed else 'succeeded'}: {r.summary}" for r in task.previous
    )
    if task.findings:
        lines.append("Checked against the earlier attempts of this run:")
        lines.extend(f"- {f.text}" for f in task.findings)
    if task.critique is not None:
        lines.append(f"Reflection round: {task.critique.round + 1}")
        lines.append(
            "The reflector sent this attempt back before it was committed (your changes so far are still in the "
            f"worktree; revise them):\n{task.critique.critique}"
        )
        lines.extend(f"- {issue}" for issue in task.critique.issues)
    if task.feedback:
        lines.append(f"Feedback from the person reviewing the change (address it in this attempt):\n{task.feedback}")
    for attachment in task.attachments:
        lines.append(f"--- attached by the user: {attachment.describe()} ---")
        if attachment.text:
            lines.append(attachment.text)
    if task.context:
        lines.append(f"Context (budget {stage.token_budget} tokens):")
        for snippet in task.context:
            where = f"{snippet.path}:{snippet.start_line}-{snippet.end_line}" if snippet.path else snippet.source
            lines.append(f"--- {where} ---\n{snippet.text}")
    return lines


def agent_messages(task: AgentTask) -> list[SystemMessage | HumanMessage]:
    system = (
        f"You are the {task.agent.agent_id} agent of ided, an agentic IDE, working on one stage of a "
        f"{task.workflow_type.value} workflow. {task.agent.instructions}".strip()
        + " Judge your work against the stage's failure criteria and report honestly: status 'failure' when any "
        "criterion holds."
    )
    lines = task_lines(task)
    if task.agent.mcp_tools:
        lines.insert(5, "Tools of this agent (for later versions): " + ", ".join(task.agent.mcp_tools))
    lines.append(json_instructions(AgentAnswer))
    return [SystemMessage(content=system), HumanMessage(content="\n".join(lines))]


class LlmStageAgent:
    """One model call; an unparseable answer or an unreachable model is a failed outcome, never a crash."""

    def __init__(self, spec: AgentSpec, model: ChatCaller) -> None:
        self.spec = spec
        self._model = model

    async def run(self, task: AgentTask) -> AgentOutcome:
        started = time.perf_counter()
        try:
            text = await self._model.complete(agent_messages(task))
            answer = parse_answer(text, AgentAnswer)
        except PipelineError as exc:
            return AgentOutcome(
                agent_id=self.spec.agent_id,
                failed=True,
                summary="the agent's model did not answer",
                error=exc.message,
                seconds=time.perf_counter() - started,
            )
        except AnswerInvalid as exc:
            return AgentOutcome(
                agent_id=self.spec.agent_id,
                failed=True,
                summary="the agent's answer was not the JSON asked for",
                error=str(exc),
                seconds=time.perf_counter() - started,
            )
        return AgentOutcome(
            agent_id=self.spec.agent_id,
            failed=answer.status == "failure",
            summary=answer.summary.strip(),
            evidence=tuple(answer.evidence),
            seconds=time.perf_counter() - started,
        )


class LlmAgentProvider:
    """Agents as LLM calls, each with its role's model from the registry."""

    def __init__(self, models: ModelRegistry) -> None:
        self._models = models

    def agent(self, spec: AgentSpec) -> StageAgent:
        model = self._models.agent_caller(spec.model_role)
        return LlmStageAgent(spec, model)


async def _run_one(agent: StageAgent, task: AgentTask, limit_seconds: float) -> AgentOutcome:
    started = time.perf_counter()
    try:
        return await asyncio.wait_for(agent.run(task), limit_seconds)
    except TimeoutError:
        return AgentOutcome(
            agent_id=task.agent.agent_id,
            failed=True,
            summary=f"the agent did not finish within {limit_seconds:g}s",
            error="timeout",
            seconds=time.perf_counter() - started,
        )


def _summary(stage: PlannedStage, failed: bool, outcomes: Sequence[AgentOutcome]) -> str:
    if len(outcomes) == 1:
        return outcomes[0].summary
    n_failed = sum(o.failed for o in outcomes)
    verdict = "failed" if failed else "succeeded"
    details = "; ".join(f"{o.agent_id}: {'failed' if o.failed else 'ok'} - {o.summary}" for o in outcomes)
    return f"{verdict} ({n_failed} of {len(outcomes)} agents failed, rule {stage.failure_aggregation.value}): {details}"


async def run_stage(
    stage: PlannedStage,
    provider: AgentProvider,
    make_task: Callable[[AgentSpec], AgentTask],
    *,
    attempt: int,
    limit_seconds: float,
) -> StageResult:
    """Run the stage's agents concurrently and aggregate their failures."""
    started_at = utc_now()
    tasks = [make_task(spec) for spec in stage.agents]
    agents = [provider.agent(spec) for spec in stage.agents]
    outcomes = list(await asyncio.gather(*(_run_one(a, t, limit_seconds) for a, t in zip(agents, tasks, strict=True))))
    failed = aggregate_failures(stage.failure_aggregation, [o.failed for o in outcomes])
    return StageResult(
        stage_id=stage.stage_id,
        attempt=attempt,
        failed=failed,
        aggregation=stage.failure_aggregation,
        agents=tuple(outcomes),
        summary=_summary(stage, failed, outcomes),
        started_at=started_at,
        finished_at=utc_now(),
        context_snippets=len(tasks[0].context) if tasks else 0,
    )
