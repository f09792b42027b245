"""Tool-calling specialist agents on a real folder: file tools, real commands, events, the test verdict."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from daemon.config import ResilienceConfig
from daemon.core.selection_models import DecisionSource, StageDecision
from daemon.core.workflow_schema import WorkflowType
from daemon.errors import ErrorCode, InvalidToolInput, PathOutsideWorkspace
from daemon.orchestration.agents import (
    AgentEnvironment,
    AgentRef,
    CommandRunner,
    RunFiles,
    ToolAgentProvider,
    ToolCallEvent,
    ToolCallingAgent,
    WriteRefused,
)
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.plan import assemble_plan
from daemon.orchestration.replay_provider import ReplayChatModel, ReplayEntry, ReplayScript
from daemon.orchestration.resilience import ResilienceLayer
from daemon.orchestration.stage_agents import AgentTask, LlmStageAgent
from tests.pipeline_support import builtin_catalog

FAST = ResilienceConfig(cache=False, max_retries=0, backoff_initial_seconds=0.0, backoff_max_seconds=0.0)
PLAN = assemble_plan(
    builtin_catalog().get("feature_with_iterative_testing"),
    [StageDecision(stage_id="code_review", include=True, reason="scripted", source=DecisionSource.MODEL)],
    "Add a multiply function",
)
PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"


class Recorder:
    def __init__(self) -> None:
        self.messages: list[str] = []
        self.calls: list[ToolCallEvent] = []
        self.updates: list[ToolCallEvent] = []

    async def agent_message(self, agent: AgentRef, text: str) -> None:
        self.messages.append(text)

    async def tool_call(self, agent: AgentRef, call: ToolCallEvent) -> None:
        self.calls.append(call)

    async def tool_call_update(self, agent: AgentRef, call: ToolCallEvent) -> None:
        self.updates.append(call)


def project(root: Path, impl: str = "def multiply(a, b):\n    return a * b\n") -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "calc.py").write_text(impl, encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(
        "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parents[1] / 'src'))\n"
        "from calc import multiply\n\n\ndef test_multiply():\n    assert multiply(3, 4) == 12\n",
        encoding="utf-8",
    )
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return root


def registry(entries: list[dict[str, Any]]) -> ModelRegistry:
    script = ReplayScript([ReplayEntry.model_validate(e) for e in entries])
    layer = ResilienceLayer(FAST)
    return ModelRegistry.from_models({"default": ReplayChatModel(script=script, role="default")}, layer)


def task(stage_id: str, attempt: int = 1) -> AgentTask:
    stage = PLAN.stage(stage_id)
    return AgentTask(run_id="r1", stage=stage, agent=stage.agents[0], attempt=attempt, workflow_type=WorkflowType.CODE)


def environment(root: Path, recorder: Recorder, *, editable: bool = True, timeout: float = 60.0) -> AgentEnvironment:
    return AgentEnvironment(
        files=RunFiles(root, editable=editable),
        commands=CommandRunner({"test": PYTEST}, cwd=root, timeout_seconds=timeout, output_cap_bytes=4096),
        events=recorder,
        max_tool_steps=6,
    )


def success(summary: str = "done") -> dict[str, Any]:
    return {"answer": {"status": "success", "summary": summary, "evidence": [summary]}}


async def test_a_coder_writes_and_patches_files_through_tools_and_reports_every_call(tmp_path: Path) -> None:
    root = project(tmp_path / "ws")
    models = registry(
        [
            {"say": "Reading first.", "tool_calls": [{"name": "read_file", "args": {"path": "src/calc.py"}}]},
            {
                "tool_calls": [
                    {
                        "name": "replace_in_file",
                        "args": {"path": "src/calc.py", "old_text": "a * b", "new_text": "b * a"},
                    },
                    {"name": "write_file", "args": {"path": "src/extra.py", "content": "X = 1\n"}},
                ]
            },
            success("multiply written"),
        ]
    )
    recorder = Recorder()
    agent = ToolAgentProvider(models, environment(root, recorder)).agent(task("implementation").agent)
    assert isinstance(agent, ToolCallingAgent)
    outcome = await agent.run(task("implementation"))
    assert not outcome.failed and outcome.summary == "multiply written"
    assert outcome.tools_used == ("read_file", "replace_in_file", "write_file")
    assert outcome.files_written == ("src/calc.py", "src/extra.py")
    assert outcome.tokens > 0
    assert (root / "src" / "calc.py").read_text() == "def multiply(a, b):\n    return b * a\n"
    assert (root / "src" / "extra.py").read_text() == "X = 1\n"
    assert [c.kind for c in recorder.calls] == ["read", "edit", "edit"]
    assert [u.status for u in recorder.updates] == ["completed"] * 3
    assert recorder.calls[1].locations[0].path == "src/calc.py" and recorder.calls[1].locations[0].line == 2
    assert "def multiply" in (recorder.updates[0].output or "")
    assert recorder.messages[0] == "Reading first." and recorder.messages[-1].startswith("multiply written")
    assert len({c.tool_call_id for c in recorder.calls}) == 3


async def test_a_test_runner_fails_on_a_red_test_run_whatever_the_model_says(tmp_path: Path) -> None:
    root = project(tmp_path / "ws", impl="def multiply(a, b):\n    return a + b\n")
    models = registry([{"tool_calls": [{"name": "run_command", "args": {"name": "test"}}]}, success("all good")])
    recorder = Recorder()
    outcome = (
        await ToolAgentProvider(models, environment(root, recorder))
        .agent(task("test_execution").agent)
        .run(task("test_execution"))
    )
    assert outcome.failed
    assert "the test command 'test' exited with code 1" in outcome.summary
    assert any("assert 7 == 12" in e for e in outcome.evidence)
    assert [u.status for u in recorder.updates] == ["failed"]
    assert recorder.calls[0].kind == "execute" and recorder.calls[0].title == "run test"


async def test_a_test_stage_whose_agent_ran_nothing_runs_the_test_command_itself(tmp_path: Path) -> None:
    root = project(tmp_path / "ws")
    models = registry([success("nothing to run")])
    recorder = Recorder()
    outcome = (
        await ToolAgentProvider(models, environment(root, recorder))
        .agent(task("test_execution").agent)
        .run(task("test_execution"))
    )
    assert not outcome.failed
    assert outcome.tools_used == ("run_command",)
    assert "1 passed" in (recorder.updates[0].output or "")


async def test_a_command_past_its_timeout_is_killed_and_reported(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    runner = CommandRunner(
        {"slow": f"{sys.executable} -c 'import time; print(1, flush=True); time.sleep(30)'"},
        cwd=root,
        timeout_seconds=0.5,
        output_cap_bytes=1024,
    )
    result = await runner.run("slow")
    assert result.timed_out and not result.ok
    assert "timed out" in result.report()
    with pytest.raises(InvalidToolInput, match="no command named 'rm'"):
        await runner.run("rm")


async def test_command_output_beyond_the_cap_keeps_head_and_tail(tmp_path: Path) -> None:
    runner = CommandRunner(
        {"loud": f'{sys.executable} -c \'print("A" * 5000); print("END")\''},
        cwd=tmp_path,
        timeout_seconds=30,
        output_cap_bytes=1024,
    )
    result = await runner.run("loud")
    assert result.ok and result.truncated
    assert result.output.startswith("AAAA") and result.output.rstrip().endswith("END")
    assert "bytes of output cut" in result.output


async def test_files_outside_the_root_and_writes_in_read_only_runs_are_refused(tmp_path: Path) -> None:
    root = project(tmp_path / "ws")
    (tmp_path / "secret.txt").write_text("s", encoding="utf-8")
    (root / "link").symlink_to(tmp_path)
    files = RunFiles(root, editable=False)
    for bad in ("../secret.txt", "link/secret.txt", str(tmp_path / "secret.txt"), ".git/config"):
        with pytest.raises(PathOutsideWorkspace) as caught:
            await files.read(bad)
        assert caught.value.code is ErrorCode.PATH_OUTSIDE_WORKSPACE
    with pytest.raises(WriteRefused, match="read-only"):
        await files.write("src/new.py", "x")
    assert await files.read(str(root / "src" / "calc.py")) == "def multiply(a, b):\n    return a * b\n"


async def test_a_tool_error_goes_back_to_the_model_and_the_agent_goes_on(tmp_path: Path) -> None:
    root = project(tmp_path / "ws")
    models = registry(
        [
            {"tool_calls": [{"name": "read_file", "args": {"path": "nope.py"}}]},
            {"match": "nope.py does not exist", **success("recovered")},
        ]
    )
    recorder = Recorder()
    outcome = (
        await ToolAgentProvider(models, environment(root, recorder))
        .agent(task("implementation").agent)
        .run(task("implementation"))
    )
    assert not outcome.failed and outcome.summary == "recovered"
    assert recorder.updates[0].status == "failed"


async def test_a_reviewer_gets_no_write_tools_and_an_agent_without_tools_is_one_call(tmp_path: Path) -> None:
    root = project(tmp_path / "ws")
    models = registry(
        [
            {"tool_calls": [{"name": "write_file", "args": {"path": "src/calc.py", "content": ""}}]},
            {"match": "no tool named 'write_file'", **success("could not write")},
        ]
    )
    recorder = Recorder()
    outcome = (
        await ToolAgentProvider(models, environment(root, recorder))
        .agent(task("code_review").agent)
        .run(task("code_review"))
    )
    assert outcome.summary == "could not write"
    assert (root / "src" / "calc.py").read_text().startswith("def multiply")
    bare = ToolAgentProvider(registry([success()]), AgentEnvironment()).agent(task("implementation").agent)
    assert isinstance(bare, LlmStageAgent)


async def test_an_agent_that_keeps_calling_tools_stops_at_the_step_limit(tmp_path: Path) -> None:
    root = project(tmp_path / "ws")
    models = registry([{"tool_calls": [{"name": "list_files", "args": {}}], "repeat": True}])
    outcome = (
        await ToolAgentProvider(models, environment(root, Recorder()))
        .agent(task("implementation").agent)
        .run(task("implementation"))
    )
    assert outcome.failed and outcome.error is not None and "max_tool_steps" in outcome.error
    assert outcome.tools_used == ("list_files",) * 6


async def test_an_agent_of_a_cancelled_run_stops_at_its_next_model_turn(tmp_path: Path) -> None:
    root = project(tmp_path / "ws")
    models = registry([{"tool_calls": [{"name": "list_files", "args": {}}], "repeat": True}])
    recorder = Recorder()

    async def cancelled() -> bool:
        return bool(recorder.updates)  # cancelled once the first tool call ended

    env = AgentEnvironment(files=RunFiles(root, editable=True), events=recorder, max_tool_steps=6, cancelled=cancelled)
    outcome = await ToolAgentProvider(models, env).agent(task("implementation").agent).run(task("implementation"))
    assert outcome.failed and outcome.error is not None and outcome.error.startswith("cancelled")
    assert outcome.tools_used == ("list_files",)
