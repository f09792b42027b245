"""Specialist agents: LangChain tool-calling agents with role prompts, file, command and host tools.

See docs/agents.md for the roles, the tools, the commands and the events they report.
"""

from __future__ import annotations

from daemon.orchestration.agents.command_trust import CommandSources
from daemon.orchestration.agents.commands import CommandResult, CommandRunner
from daemon.orchestration.agents.environment import AgentEnvironment
from daemon.orchestration.agents.events import (
    NO_EVENTS,
    AgentEvents,
    AgentRef,
    NoEvents,
    ToolCallEvent,
    ToolCallLocation,
)
from daemon.orchestration.agents.model_calls import ToolCallingModel
from daemon.orchestration.agents.provider import ToolAgentProvider
from daemon.orchestration.agents.roles import COMMAND_STAGE_TYPES, EDITING_STAGE_TYPES, role_prompt
from daemon.orchestration.agents.tool_agent import TEST_COMMAND, ToolCallingAgent
from daemon.orchestration.agents.toolbox import CODE_INTEL_MARK, TOOL_KIND_KEY, Toolbox
from daemon.orchestration.agents.workspace_files import FileReader, RunFiles, WriteRefused

__all__ = [
    "CODE_INTEL_MARK",
    "COMMAND_STAGE_TYPES",
    "EDITING_STAGE_TYPES",
    "NO_EVENTS",
    "TEST_COMMAND",
    "TOOL_KIND_KEY",
    "AgentEnvironment",
    "AgentEvents",
    "AgentRef",
    "CommandResult",
    "CommandRunner",
    "CommandSources",
    "FileReader",
    "NoEvents",
    "RunFiles",
    "ToolAgentProvider",
    "ToolCallEvent",
    "ToolCallLocation",
    "ToolCallingAgent",
    "ToolCallingModel",
    "Toolbox",
    "WriteRefused",
    "role_prompt",
]
