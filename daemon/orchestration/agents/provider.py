"""The agent provider of a run: tool-calling specialists when the run offers tools, else one-call agents."""

from __future__ import annotations

from daemon.core.workflow_schema import AgentSpec
from daemon.orchestration.agents.environment import AgentEnvironment
from daemon.orchestration.agents.tool_agent import ToolCallingAgent
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.resilience import ResilientChat
from daemon.orchestration.stage_agents import LlmStageAgent, StageAgent

__all__ = ["ToolAgentProvider"]


class ToolAgentProvider:
    """Agents with their role's model from the registry and the tools of ``env``."""

    def __init__(self, models: ModelRegistry, env: AgentEnvironment) -> None:
        self._models = models
        self.env = env

    def agent(self, spec: AgentSpec) -> StageAgent:
        caller = self._models.agent_caller(spec.model_role)
        if not self.env.has_tools or not isinstance(caller, ResilientChat):
            return LlmStageAgent(spec, caller)
        return ToolCallingAgent(spec, caller.chain, self._models.layer, self.env)
