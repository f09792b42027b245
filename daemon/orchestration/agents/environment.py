"""What a run offers its agents: files, commands, host tools, an event sink and limits.

The runtime builds one ``AgentEnvironment`` per run (the worktree of an editing run, the workspace of
a read-only one) and hands it to ``ToolAgentProvider``. An environment with no files, no commands
and no host tools offers nothing to call: its agents are the plain one-call ``LlmStageAgent``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from langchain_core.tools import BaseTool

from daemon.orchestration.agents.commands import CommandRunner
from daemon.orchestration.agents.events import NO_EVENTS, AgentEvents
from daemon.orchestration.agents.workspace_files import RunFiles

__all__ = ["AgentEnvironment"]


@dataclass(frozen=True, kw_only=True)
class AgentEnvironment:
    files: RunFiles | None = None
    commands: CommandRunner | None = None
    extra_tools: tuple[BaseTool, ...] = ()
    events: AgentEvents = NO_EVENTS
    max_tool_steps: int = 25
    cancelled: Callable[[], Awaitable[bool]] | None = None
    """Asked before every model turn after the first: a cancelled run's agents stop at the next turn."""

    @property
    def has_tools(self) -> bool:
        return self.files is not None or self.commands is not None or bool(self.extra_tools)
