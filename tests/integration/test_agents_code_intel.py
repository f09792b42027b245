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
from daemon.orchestration.workflow_loader import load_workflow_file, parse_workflow
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


async def test_an_agent_is_offered_exactly_the_code_intel_tools_its_workflow_lists(tmp_path: Path) -> None:
    # `mcp_tools: []`, `{}` or no mcp_tools at all: none of ided's code-intel tools; a list: those and no others
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    spec = Path(__file__).parents[1] / "fixtures" / "spec_workflows"
    text = (spec / "architecture_discussion.yaml").read_text(encoding="utf-8")
    text = text.replace(
        '      - agent: "documentation_agent"\n', '      - agent: "documentation_agent"\n        mcp_tools: {}\n'
    )
    include = [
        StageDecision(stage_id=sid, include=True, reason="asked", source=DecisionSource.RULE)
        for sid in ("security_review", "decision_documentation")
    ]
    analysis = assemble_plan(parse_workflow(text, "architecture_discussion.yaml"), include, "Discuss the design")
    feature = assemble_plan(load_workflow_file(spec / "feature_with_iterative_testing.yaml"), include, "Add auth")
    analyst = analysis.stage("architectural_analysis")  # `mcp_tools: []` in the specification's file
    scribe = analysis.stage("decision_documentation")  # `mcp_tools: {}`
    security = feature.stage("security_review")  # no mcp_tools at all
    coder = feature.stage("code_generation")  # [lsp_get_signature, lsp_find_definition, tree_sitter_get_ast]
    ask = [{"name": "workspace_symbols", "args": {"query": "Reporter"}}]
    models = registry(
        [
            {
                "match": r"Agent: code_agent\b",
                "tool_calls": [{"name": "find_definition", "args": {"symbol": "Reporter"}}],
            },
            *(
                {"match": rf"Agent: {agent}\b", "tool_calls": ask}
                for agent in ("analysis_agent", "documentation_agent", "security_agent", "code_agent")
            ),
            {"answer": {"status": "success", "summary": "asked"}, "repeat": True},
        ]
    )
    recorder = Recorder()
    offered: dict[str, set[str]] = {}
    async with LocalWorkspace.open(workspace_config(workspace, tmp_path / "state")) as intel:
        env = AgentEnvironment(
            files=RunFiles(workspace, editable=False), extra_tools=tuple(code_intel_tools(intel)), events=recorder
        )
        provider = ToolAgentProvider(models, env)
        for stage, kind in (
            (analyst, WorkflowType.DOCUMENT),
            (scribe, WorkflowType.DOCUMENT),
            (security, WorkflowType.CODE),
            (coder, WorkflowType.CODE),
        ):
            spec_agent = stage.agents[0]
            task = AgentTask(run_id="r1", stage=stage, agent=spec_agent, attempt=1, workflow_type=kind)
            await asyncio.wait_for(provider.agent(spec_agent).run(task), TIMEOUT)
            offered[spec_agent.agent_id] = set(
                (recorder.updates[-1].output or "").split("available: ", 1)[-1].split(", ")
            )
    refusals = [u for u in recorder.updates if u.status == "failed"]
    assert len(refusals) == 4 and all("no tool named 'workspace_symbols'" in (u.output or "") for u in refusals)
    for agent in ("analysis_agent", "documentation_agent", "security_agent"):
        assert not offered[agent] & set(INTEL_TOOL_NAMES), agent
    assert offered["code_agent"] & set(INTEL_TOOL_NAMES) == {"get_signature", "find_definition", "get_ast_node"}
    found = next(u for u in recorder.updates if u.title and u.title.startswith("find_definition"))
    assert found.status == "completed" and "Reporter" in (found.output or "")
