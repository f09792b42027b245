"""The tool-calling specialist agent: a role prompt, the stage's task, tools, and a bounded loop.

One attempt: the model is called with the tools bound; every tool call it makes is run and its
answer handed back; text it says along the way goes out as ``agent_message``. When it answers
without tool calls, that answer must be the ``AgentAnswer`` JSON (status, summary, evidence); one
repair turn is granted when it is not. The loop is bounded by ``agents.max_tool_steps`` model
turns, and stops at the next turn once the run is cancelled.

The outcome carries what failed and why (summary, evidence, error), the final text, the tools used,
the files written and the tokens spent. In a ``test_execution`` or ``testing`` stage the tests decide:
when the agent ran no command and a ``test`` command is configured it is run for it, and a failing
last command fails the outcome whatever the model said (its output tail becomes the evidence). In a
``lint_and_format`` stage the formatters and linters decide the same way: the stage's formatting
agent (the first whose id names format or lint, else the first agent) runs every ``lint_*`` then
``format_*`` command it did not run itself, and any of them failing fails its outcome.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from daemon.core.workflow_schema import AgentSpec, StageType
from daemon.errors import PipelineError
from daemon.orchestration.agents.environment import AgentEnvironment
from daemon.orchestration.agents.events import AgentRef
from daemon.orchestration.agents.model_calls import ToolCallingModel, estimate_tokens
from daemon.orchestration.agents.roles import COMMAND_STAGE_TYPES, EDITING_STAGE_TYPES, role_prompt
from daemon.orchestration.agents.toolbox import Toolbox
from daemon.orchestration.agents.toolchain import check_command_names
from daemon.orchestration.resilience import ModelEndpoint, ResilienceLayer
from daemon.orchestration.stage_agents import AgentAnswer, AgentTask, task_lines
from daemon.orchestration.state import AgentOutcome
from daemon.orchestration.structured_output import AnswerInvalid, json_instructions, parse_answer

__all__ = ["TEST_COMMAND", "ToolCallingAgent"]


TEST_COMMAND = "test"
"""The command a test_execution stage runs when its agent ran none."""


def _system_prompt(task: AgentTask, toolbox: Toolbox) -> str:
    stage = task.stage
    parts = [
        f"You are the {task.agent.agent_id} agent of ided, an agentic IDE, working on the '{stage.name}' stage of a "
        f"{task.workflow_type.value} workflow.",
        role_prompt(task.agent.agent_id, stage.type),
        task.agent.instructions,
    ]
    names = [t.name for t in toolbox.tools]
    if names:
        parts.append(
            "Tools: " + ", ".join(names) + ". Paths are relative to the workspace root. Call tools as often as the "
            "task needs, then give your final answer without a tool call."
        )
    if stage.failure_criteria:
        parts.append("The stage fails when: " + "; ".join(stage.failure_criteria) + ".")
    parts.append("Report honestly: status 'failure' when any failure criterion holds.")
    return " ".join(p.strip() for p in parts if p.strip())


def _formats(task: AgentTask) -> bool:
    """Whether this agent runs the stage's format/lint commands (one agent per stage does)."""
    ids = [a.agent_id for a in task.stage.agents]
    chosen = next((i for i in ids if "format" in i or "lint" in i), ids[0] if ids else None)
    return task.agent.agent_id == chosen


class ToolCallingAgent:
    """A ``StageAgent`` that works with tools through a role's model chain."""

    def __init__(
        self, spec: AgentSpec, chain: Sequence[ModelEndpoint], layer: ResilienceLayer, env: AgentEnvironment
    ) -> None:
        self.spec = spec
        self._chain = tuple(chain)
        self._layer = layer
        self._env = env

    def _toolbox(self, task: AgentTask) -> Toolbox:
        env = self._env
        stage_type = task.stage.type
        ref = AgentRef(
            run_id=task.run_id, stage_id=task.stage.stage_id, attempt=task.attempt, agent_id=self.spec.agent_id
        )
        editable = env.files is not None and env.files.editable and stage_type in EDITING_STAGE_TYPES
        return Toolbox(
            agent=ref,
            events=env.events,
            files=env.files,
            commands=env.commands if stage_type in COMMAND_STAGE_TYPES else None,
            editable=editable,
            extra_tools=env.extra_tools,
            allowed_intel=self.spec.mcp_tools,
        )

    async def run(self, task: AgentTask) -> AgentOutcome:
        started = time.perf_counter()
        toolbox = self._toolbox(task)
        model = ToolCallingModel(self._chain, self._layer, role=self.spec.model_role, tools=toolbox.tools)
        messages: list[BaseMessage] = [
            SystemMessage(content=_system_prompt(task, toolbox)),
            HumanMessage(content="\n".join([*task_lines(task), json_instructions(AgentAnswer)])),
        ]
        tokens = 0
        answer: AgentAnswer | None = None
        error: str | None = None
        final_text = ""
        repaired = False
        try:
            for step in range(self._env.max_tool_steps):
                if step and self._env.cancelled is not None and await self._env.cancelled():
                    error = "cancelled: the run was cancelled while the agent worked"
                    break
                reply = await model.invoke(messages)
                tokens += estimate_tokens(messages, reply)
                text = str(reply.text).strip()
                if reply.tool_calls:
                    if text:
                        await self._env.events.agent_message(toolbox.agent, text)
                    messages.append(reply)
                    messages.extend([await toolbox.call(call) for call in reply.tool_calls])
                    continue
                final_text = text
                try:
                    answer = parse_answer(text, AgentAnswer)
                except AnswerInvalid as exc:
                    if repaired:
                        error = f"the agent's answer was not the JSON asked for: {exc}"
                        break
                    repaired = True
                    if text:
                        await self._env.events.agent_message(toolbox.agent, text)
                    messages += [reply, HumanMessage(content=f"{exc}. {json_instructions(AgentAnswer)}")]
                    continue
                break
            else:
                error = f"stopped after {self._env.max_tool_steps} model turns (agents.max_tool_steps)"
        except PipelineError as exc:
            error = exc.message
        outcome = self._outcome(answer, error, final_text, toolbox, tokens, started)
        if answer is not None:
            shown = answer.summary + "".join(f"\n- {e}" for e in answer.evidence)
            await self._env.events.agent_message(toolbox.agent, shown)
        if task.stage.type in (StageType.TEST_EXECUTION, StageType.TESTING):
            outcome = await self._tests_decide(outcome, toolbox, started)
        elif task.stage.type is StageType.LINT_AND_FORMAT and _formats(task):
            outcome = await self._checks_decide(outcome, toolbox, started)
        return outcome

    def _outcome(
        self,
        answer: AgentAnswer | None,
        error: str | None,
        final_text: str,
        toolbox: Toolbox,
        tokens: int,
        started: float,
    ) -> AgentOutcome:
        if answer is None:
            if error and ("max_tool_steps" in error or error.startswith("cancelled")):
                failed, summary = True, "the agent did not finish its work"
            elif final_text:
                failed, summary = True, "the agent's answer was not the JSON asked for"
            else:
                failed, summary = True, "the agent's model did not answer"
            evidence: tuple[str, ...] = ()
        else:
            failed, summary, evidence = answer.status == "failure", answer.summary.strip(), tuple(answer.evidence)
        return AgentOutcome(
            agent_id=self.spec.agent_id,
            failed=failed,
            summary=summary,
            evidence=evidence,
            error=error,
            output=final_text,
            tools_used=tuple(toolbox.tools_used),
            files_written=tuple(dict.fromkeys(toolbox.files_written)),
            tokens=tokens,
            seconds=time.perf_counter() - started,
        )

    async def _checks_decide(self, outcome: AgentOutcome, toolbox: Toolbox, started: float) -> AgentOutcome:
        commands = self._env.commands
        names = check_command_names(commands.names) if commands is not None else []
        if not names:
            note = "no format_* or lint_* command: no formatter for this workspace's languages was found on PATH"
            return outcome.model_copy(update={"evidence": (*outcome.evidence, note)})
        ran = {r.name for r in toolbox.commands_run}
        for name in names:
            if name not in ran:
                await toolbox.run_command_directly(name)
        last = {r.name: r for r in toolbox.commands_run if r.name in names}
        failing = [r for r in last.values() if not r.ok]
        update: dict[str, object] = {
            "tools_used": tuple(toolbox.tools_used),
            "seconds": time.perf_counter() - started,
            "evidence": (
                *outcome.evidence,
                *(f"$ {' '.join(r.argv[:3])} -> exit {r.exit_code}" for r in last.values() if r.ok),
            ),
        }
        if not failing:
            return outcome.model_copy(update=update)
        verdicts = [
            f"'{r.name}' " + ("timed out" if r.timed_out else f"exited with code {r.exit_code}") for r in failing
        ]
        summary = "the check(s) " + ", ".join(verdicts) + (f": {outcome.summary}" if outcome.summary else "")
        evidence = tuple(x for r in failing for x in (f"$ {' '.join(r.argv[:3])} -> exit {r.exit_code}", r.tail(40)))
        return outcome.model_copy(update={**update, "failed": True, "summary": summary, "evidence": evidence})

    async def _tests_decide(self, outcome: AgentOutcome, toolbox: Toolbox, started: float) -> AgentOutcome:
        commands = self._env.commands
        if not toolbox.commands_run and commands is not None and TEST_COMMAND in commands.commands:
            await toolbox.run_command_directly(TEST_COMMAND)
        if not toolbox.commands_run:
            return outcome
        last = toolbox.commands_run[-1]
        update: dict[str, object] = {
            "tools_used": tuple(toolbox.tools_used),
            "seconds": time.perf_counter() - started,
        }
        if last.ok:
            return outcome.model_copy(update=update)
        verdict = "timed out" if last.timed_out else f"exited with code {last.exit_code}"
        summary = f"the test command '{last.name}' {verdict}"
        if outcome.summary and not outcome.failed:
            summary += f" (the agent reported: {outcome.summary})"
        elif outcome.summary:
            summary += f": {outcome.summary}"
        evidence = (f"$ {' '.join(last.argv)} -> {verdict}", last.tail(40), *outcome.evidence)
        return outcome.model_copy(update={**update, "failed": True, "summary": summary, "evidence": evidence})
