"""The reflector and the evaluator: a model that critiques a stage attempt before it is committed, and one that
scores the run's result at the end. Both are optional per workflow (``reflection``, ``evaluation``; off by
default) and both skip, saying why, when no model serves their role.

**Reflector** (the ``reflector`` node, after each reflected stage; ``ExecutionPlan.reflected_stages``). A
reflected stage whose agents report success does not commit: it goes to the reflector, which reads the task,
the stage's failure criteria, the agents' reports, the change as a patch (the worktree beyond its HEAD), the
test stages' latest results, what checking the earlier attempts found (``consistency``) and its own earlier
critiques of this attempt, and answers ``accept`` or ``send_back`` with a critique. Accept: the attempt is
committed and routed as the stage's success. Send back: the stage's agents run again on the same attempt
(``Reflection round: n`` in their prompt, the critique with it), their work still uncommitted; at most
``max_rounds`` times, then the attempt goes on with the critique recorded as open. A failed attempt never
goes to the reflector (its failure route applies). Every round is a ``Critique`` on the attempt's result, a
``reflection`` decision-log entry and the reflector's node events.

**Evaluator** (the ``evaluator`` node, on every edge into ``done``). It reads the request, every stage's last
result, the findings and critiques, and the run's whole change, and answers a score from 0 to 10 with a
summary, strengths and issues: ``ExecutionState.evaluation``, an ``evaluation`` decision-log entry, the stop
decision's reason; with ``pass_score`` set, a lower score fails a run that would otherwise succeed.

Prompts carry ``Stage:``, ``Attempt:`` and ``Reflection round:`` on lines of their own, so scripted models
(the replay provider, roles ``reflector`` and ``evaluator``) can match on them.
"""

from __future__ import annotations

import time
from typing import Any, Literal, Protocol, TypeVar

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from pydantic import Field

from daemon.core.frozen_model import FrozenModel
from daemon.core.run_models import DONE_NODE, DecisionKind, ExecutionPlan
from daemon.core.workflow_schema import EVALUATOR_NODE, REFLECTOR_NODE, StageType
from daemon.errors import DaemonError, PipelineError
from daemon.orchestration.consistency import failing_tests
from daemon.orchestration.resilience import ChatCaller
from daemon.orchestration.routing import route_after_stage, route_values
from daemon.orchestration.run_context import RunCancelled, RunContext
from daemon.orchestration.state import Critique, Evaluation, ExecutionState, StageResult, to_channel_values
from daemon.orchestration.structured_output import AnswerInvalid, json_instructions, parse_answer

__all__ = [
    "EvaluatorAnswer",
    "ReflectorAnswer",
    "evaluate",
    "evaluator_node",
    "reflect",
    "reflector_node",
]

PATCH_LIMIT = 16_000
"""Characters of a patch a prompt carries (the rest is cut, saying so)."""

_TEST_TYPES = (StageType.TEST_EXECUTION, StageType.TESTING)
_Answer = TypeVar("_Answer", bound=FrozenModel)


class _NodeFn(Protocol):
    async def __call__(self, state: ExecutionState, *, runtime: Runtime[RunContext]) -> dict[str, Any]: ...


class ReflectorAnswer(FrozenModel):
    """What the reflector must answer."""

    verdict: Literal["accept", "send_back"] = Field(description="send_back only for problems the agents can fix.")
    critique: str = Field(min_length=1, description="What is wrong and what to do, or why it is fine.")
    issues: list[str] = Field(default_factory=list[str], description="Each concrete problem, one per entry.")


class EvaluatorAnswer(FrozenModel):
    """What the evaluator must answer."""

    score: float = Field(ge=0, le=10, description="0 (does not do what was asked) to 10 (complete and correct).")
    summary: str = Field(min_length=1, description="The judgement in one or two sentences.")
    strengths: list[str] = Field(default_factory=list[str])
    issues: list[str] = Field(default_factory=list[str])


def _cut(patch: str) -> str:
    if len(patch) <= PATCH_LIMIT:
        return patch
    return patch[:PATCH_LIMIT] + f"\n[... {len(patch) - PATCH_LIMIT} more characters of the patch cut]"


def _result_line(result: StageResult) -> str:
    verdict = "failed" if result.failed else "succeeded"
    tests = failing_tests(result)
    named = f" (failing: {', '.join(sorted(tests))})" if tests else ""
    return f"{result.stage_id} attempt {result.attempt} {verdict}{named}: {result.summary}"


def _tests_lines(plan: ExecutionPlan, state: ExecutionState) -> list[str]:
    lines = [
        _result_line(r)
        for s in plan.stages
        if s.type in _TEST_TYPES and (r := state.last_result(s.stage_id)) is not None
    ]
    planned = [s.stage_id for s in plan.stages if s.type in _TEST_TYPES]
    if not lines:
        lines = [f"not run yet (planned after this stage: {', '.join(planned)})" if planned else "no test stage"]
    return ["Tests:", *(f"- {line}" for line in lines)]


async def _ask(model: ChatCaller, system: str, lines: list[str], answer: type[_Answer]) -> _Answer:
    text = await model.complete([SystemMessage(content=system), HumanMessage(content="\n".join(lines))])
    return parse_answer(text, answer)


async def reflect(
    model: ChatCaller | None,
    plan: ExecutionPlan,
    state: ExecutionState,
    result: StageResult,
    *,
    round_: int,
    patch: str | None,
) -> Critique:
    """One round of the reflector on ``result`` (not yet committed); ``skipped`` when it cannot answer."""
    if model is None:
        return Critique(round=round_, verdict="skipped", note="no model serves the reflector role")
    started = time.perf_counter()
    stage = plan.stage(result.stage_id)
    system = (
        "You are the reflector of ided, an agentic IDE. Before a stage's work is committed you critique it against "
        "the task, the stage's failure criteria, the tests and the run's earlier attempts. Answer send_back only for "
        "concrete problems the stage's agents can fix (the change does not do what the task asks, breaks or ignores "
        "a test, repeats what failed, is incomplete); otherwise accept. " + plan.reflection.instructions
    ).strip()
    lines = [
        f"Run: {state.run_id}",
        f"Stage: {stage.stage_id}",
        f"Attempt: {result.attempt}",
        f"Reflection round: {round_}",
        stage.task_context,
        "The agents reported:",
        *(f"- {a.agent_id}: {'failed' if a.failed else 'ok'}: {a.summary}" for a in result.agents),
        *(f"  evidence: {e}" for a in result.agents for e in a.evidence[:5]),
        *_tests_lines(plan, state),
    ]
    if result.consistency:
        lines += ["Checked against the earlier attempts of this run:", *(f"- {f.text}" for f in result.consistency)]
    for earlier in result.critiques:
        lines.append(f"Your round {earlier.round} ({earlier.verdict}): {earlier.critique}")
    if patch is None:
        lines.append("Output: the agents' answers above (this run does not edit files).")
    else:
        lines.append("The change, not yet committed:\n" + (_cut(patch) if patch.strip() else "(no file changed)"))
    lines.append(json_instructions(ReflectorAnswer))
    try:
        answer = await _ask(model, system, lines, ReflectorAnswer)
    except (PipelineError, AnswerInvalid) as exc:
        note = exc.message if isinstance(exc, PipelineError) else f"the reflector's answer was not the JSON: {exc}"
        return Critique(round=round_, verdict="skipped", note=note, seconds=time.perf_counter() - started)
    return Critique(
        round=round_,
        verdict=answer.verdict,
        critique=answer.critique.strip(),
        issues=tuple(answer.issues),
        seconds=time.perf_counter() - started,
    )


async def evaluate(
    model: ChatCaller | None, plan: ExecutionPlan, state: ExecutionState, *, patch: str | None
) -> Evaluation:
    """The evaluator's score of the run's result; skipped (score None) when it cannot answer."""
    if model is None:
        return Evaluation(note="no model serves the evaluator role")
    started = time.perf_counter()
    system = (
        "You are the evaluator of ided, an agentic IDE. A workflow run has ended; score how well its result does what "
        "the request asks, from 0 (not at all) to 10 (complete and correct, tests green, nothing left open). "
        + plan.evaluation.instructions
    ).strip()
    lines = [f"Run: {state.run_id}", f"Workflow: {plan.workflow}", f"Request: {plan.request.strip()}", "Stages:"]
    for stage in plan.stages:
        result = state.last_result(stage.stage_id)
        lines.append(f"- {_result_line(result)}" if result is not None else f"- {stage.stage_id}: did not run")
        if result is not None:
            lines.extend(f"  finding: {f.text}" for f in result.consistency)
            lines.extend(f"  reflector round {c.round} ({c.verdict}): {c.critique}" for c in result.critiques)
    if patch is not None:
        lines.append("The run's change:\n" + (_cut(patch) if patch.strip() else "(no file changed)"))
    lines.append(json_instructions(EvaluatorAnswer))
    try:
        answer = await _ask(model, system, lines, EvaluatorAnswer)
    except (PipelineError, AnswerInvalid) as exc:
        note = exc.message if isinstance(exc, PipelineError) else f"the evaluator's answer was not the JSON: {exc}"
        return Evaluation(note=note, seconds=time.perf_counter() - started)
    return Evaluation(
        score=answer.score,
        summary=answer.summary.strip(),
        strengths=tuple(answer.strengths),
        issues=tuple(answer.issues),
        seconds=time.perf_counter() - started,
    )


def _replace_last(state: ExecutionState, result: StageResult) -> dict[str, list[StageResult]]:
    results = list(state.stage_results.get(result.stage_id, ()))
    return {**state.stage_results, result.stage_id: [*results[:-1], result]}


def _said(stage_id: str, attempt: int, critique: Critique, *, sent_back: bool) -> str:
    head = f"{stage_id} attempt {attempt}, reflection round {critique.round}: "
    if critique.verdict == "skipped":
        return head + f"skipped ({critique.note}); committed as it is"
    if sent_back:
        return head + f"sent back: {critique.critique}"
    if critique.verdict == "send_back":
        return head + f"critique left open ({critique.note}): {critique.critique}"
    return head + f"accepted: {critique.critique}"


def reflector_node(plan: ExecutionPlan) -> _NodeFn:
    async def reflector(state: ExecutionState, *, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx = runtime.context
        if await ctx.cancelled():
            raise RunCancelled(REFLECTOR_NODE)
        stage_id = state.current_stage
        result = state.last_result(stage_id) if stage_id else None
        if stage_id is None or result is None:
            raise RuntimeError("the reflector was reached without a stage attempt in the state")
        round_ = state.reflection_round.get(stage_id, 0) + 1
        await ctx.reporter.node_started(REFLECTOR_NODE, state, attempt=result.attempt)
        patch: str | None = None
        if ctx.diffs is not None and ctx.commit is not None:
            try:
                patch = await ctx.diffs.pending_patch()
            except DaemonError as exc:
                patch = f"(the change could not be read: {exc.message})"
        critique = await reflect(ctx.reflector, plan, state, result, round_=round_, patch=patch)
        limit = plan.reflection.max_rounds
        sent_back = critique.verdict == "send_back" and round_ <= limit
        if critique.verdict == "send_back" and not sent_back:
            critique = critique.model_copy(update={"note": f"reflection.max_rounds={limit} reached"})
        result = result.model_copy(update={"critiques": (*result.critiques, critique)})
        summary = _said(stage_id, result.attempt, critique, sent_back=sent_back)
        await ctx.reporter.log(
            DecisionKind.REFLECTION,
            summary,
            {"stage_id": stage_id, "attempt": result.attempt, "sent_back": sent_back, **critique.model_dump()},
        )
        if sent_back:
            after = state.model_copy(update={"stage_results": _replace_last(state, result)})
            await ctx.reporter.node_finished(REFLECTOR_NODE, after, summary=summary)
            await ctx.reporter.thought(summary, node=REFLECTOR_NODE)
            return to_channel_values(
                stage_results=after.stage_results,
                reflection_round={**state.reflection_round, stage_id: round_},
                next_node=stage_id,
            )
        if ctx.commit is not None:
            result = result.model_copy(update={"commit": await ctx.commit(result)})
        decision = route_after_stage(
            plan,
            stage_id=stage_id,
            failed=False,
            attempts=state.attempts,
            enrichments=state.enrichment_attempts,
            iterations=state.iterations,
            max_iterations=ctx.max_iterations,
        )
        after = state.model_copy(update={"stage_results": _replace_last(state, result)})
        await ctx.reporter.node_finished(REFLECTOR_NODE, after, summary=summary)
        await ctx.reporter.routed(decision, after)
        return to_channel_values(
            stage_results=after.stage_results,
            reflection_round={**state.reflection_round, stage_id: 0},
            **route_values(state.routes, decision),
        )

    return reflector


def evaluator_node(plan: ExecutionPlan) -> _NodeFn:
    async def evaluator(state: ExecutionState, *, runtime: Runtime[RunContext]) -> dict[str, Any]:
        ctx = runtime.context
        if await ctx.cancelled():
            raise RunCancelled(EVALUATOR_NODE)
        await ctx.reporter.node_started(EVALUATOR_NODE, state)
        patch: str | None = None
        if ctx.diffs is not None:
            try:
                patch = await ctx.diffs.run_patch()
            except DaemonError as exc:
                patch = f"(the change could not be read: {exc.message})"
        evaluation = await evaluate(ctx.evaluator, plan, state, patch=patch)
        if evaluation.score is None:
            summary = f"evaluation skipped: {evaluation.note}"
        else:
            summary = f"evaluator scored {evaluation.score:g}/10: {evaluation.summary}"
        await ctx.reporter.log(DecisionKind.EVALUATION, summary, evaluation.model_dump())
        after = state.model_copy(update={"evaluation": evaluation})
        await ctx.reporter.node_finished(EVALUATOR_NODE, after, summary=summary)
        return to_channel_values(evaluation=evaluation, next_node=DONE_NODE)

    return evaluator
