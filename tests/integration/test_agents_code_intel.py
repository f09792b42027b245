"""Agents call ided's code-intel tools in-process: the real index, the real language server, as tool calls."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from daemon.config import ResilienceConfig
from daemon.core.selection_models import DecisionSource, StageDecision
from daemon.core.workflow_schema import WorkflowType
from daemon.orchestration.agents import AgentEnvironment, AgentRef, RunFiles, ToolAgentProvider, ToolCallEvent
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.plan import assemble_plan
from daemon.orchestration.replay_provider import ReplayChatModel, ReplayEntry, ReplayScript
from daemon.orchestration.resilience import ResilienceLayer
from daemon.orchestration.stage_agents import AgentTask
from daemon.orchestration.workflow_loader import load_workflow_file
from daemon.service.intel.agent_tools import INTEL_TOOL_NAMES, code_intel_tools
from daemon.service.workspace.local import LocalWorkspace
from tests.intel_tools import copy_workspace, require_server, workspace_config
from tests.pipeline_support import builtin_catalog

TIMEOUT = 120.0


class Recorder:
    def __init__(self) -> None:
        self.updates: list[ToolCallEvent] = []

    async def agent_message(self, agent: AgentRef, text: str) -> None:
        return None

    async def tool_call(self, agent: AgentRef, call: ToolCallEvent) -> None:
        return None

    async def tool_call_update(self, agent: AgentRef, call: ToolCallEvent) -> None:
        self.updates.append(call)


def registry(entries: list[dict[str, Any]]) -> ModelRegistry:
    script = ReplayScript([ReplayEntry.model_validate(e) for e in entries])
    layer = ResilienceLayer(ResilienceConfig(cache=False, max_retries=0))
    return ModelRegistry.from_models({"default": ReplayChatModel(script=script, role="default")}, layer)


async def test_a_coder_finds_a_definition_and_searches_the_index_through_the_code_intel_tools(tmp_path: Path) -> None:
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    plan = assemble_plan(builtin_catalog().get("feature_with_iterative_testing"), [], "Add an area report")
    stage = plan.stage("implementation")
    task = AgentTask(run_id="r1", stage=stage, agent=stage.agents[0], attempt=1, workflow_type=WorkflowType.CODE)
    models = registry(
        [
            {
                "tool_calls": [
                    {"name": "find_definition", "args": {"symbol": "Reporter"}},
                    {"name": "search_code", "args": {"query": "centroid of points"}},
                    {"name": "workspace_symbols", "args": {"query": "Reporter"}},
                ]
            },
            {"match": r"(?s)class Reporter.*centroid", "answer": {"status": "success", "summary": "found it"}},
        ]
    )
    recorder = Recorder()
    async with LocalWorkspace.open(workspace_config(workspace, tmp_path / "state")) as intel:
        tools = code_intel_tools(intel)
        assert tuple(t.name for t in tools) == INTEL_TOOL_NAMES
        env = AgentEnvironment(files=RunFiles(workspace, editable=False), extra_tools=tuple(tools), events=recorder)
        outcome = await asyncio.wait_for(ToolAgentProvider(models, env).agent(stage.agents[0]).run(task), TIMEOUT)
    assert outcome.summary == "found it", (outcome, [u.output for u in recorder.updates])
    # the workflow lists the coder's mcp_tools: workspace_symbols is not among them, so it is refused
    assert outcome.tools_used == ("find_definition", "search_code", "workspace_symbols")
    definition, search, refused = recorder.updates
    assert definition.status == "completed" and definition.kind == "search"
    assert ("shapes/report.py", 18) in {(loc.path, loc.line) for loc in definition.locations}
    assert search.status == "completed" and any(loc.path.startswith("shapes/") for loc in search.locations)
    assert refused.status == "failed" and "no tool named 'workspace_symbols'" in (refused.output or "")


async def test_mcp_tools_empty_offers_no_code_intel_tools_and_no_list_offers_them_all(tmp_path: Path) -> None:
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    spec = Path(__file__).parents[1] / "fixtures" / "spec_workflows"
    analysis = assemble_plan(load_workflow_file(spec / "architecture_discussion.yaml"), [], "Discuss the design")
    include = StageDecision(stage_id="security_review", include=True, reason="asked", source=DecisionSource.RULE)
    feature = assemble_plan(load_workflow_file(spec / "feature_with_iterative_testing.yaml"), [include], "Add auth")
    analyst = analysis.stage("architectural_analysis")  # `mcp_tools: []` in the specification's file
    security = feature.stage("security_review")  # no mcp_tools at all
    assert analyst.agents[0].mcp_tools == () and security.agents[0].mcp_tools is None
    ask = [{"name": "workspace_symbols", "args": {"query": "Reporter"}}]
    models = registry(
        [
            {"match": r"Agent: analysis_agent\b", "tool_calls": ask},
            {"match": r"Agent: security_agent\b", "tool_calls": ask},
            {"answer": {"status": "success", "summary": "asked"}, "repeat": True},
        ]
    )
    recorder = Recorder()
    async with LocalWorkspace.open(workspace_config(workspace, tmp_path / "state")) as intel:
        env = AgentEnvironment(
            files=RunFiles(workspace, editable=False), extra_tools=tuple(code_intel_tools(intel)), events=recorder
        )
        provider = ToolAgentProvider(models, env)
        for stage, kind in ((analyst, WorkflowType.DOCUMENT), (security, WorkflowType.CODE)):
            task = AgentTask(run_id="r1", stage=stage, agent=stage.agents[0], attempt=1, workflow_type=kind)
            await asyncio.wait_for(provider.agent(stage.agents[0]).run(task), TIMEOUT)
    refused, answered = recorder.updates
    assert refused.status == "failed" and "no tool named 'workspace_symbols'" in (refused.output or "")
    offered = (refused.output or "").split("available: ", 1)[1].split(", ")
    assert not set(offered) & set(INTEL_TOOL_NAMES)  # `[]`: none of ided's code-intel tools
    assert answered.status == "completed" and "Reporter" in (answered.output or "")  # no list: all of them
