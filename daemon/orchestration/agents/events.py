"""What an agent reports while it works: its text and its tool calls (the run's reporter listens).

The agents package knows nothing about progress buses or run stores: it calls an ``AgentEvents``
sink, which the runtime implements with the run's reporter (events ``agent_message``,
``tool_call``, ``tool_call_update``). ``NO_EVENTS`` drops everything (tests, one-off calls).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

__all__ = ["NO_EVENTS", "AgentEvents", "AgentRef", "NoEvents", "ToolCallEvent", "ToolCallLocation"]


ToolKindName = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
ToolStatusName = Literal["pending", "in_progress", "completed", "failed"]


@dataclass(frozen=True, kw_only=True)
class AgentRef:
    """Which agent of which stage attempt speaks."""

    run_id: str
    stage_id: str
    attempt: int
    agent_id: str


@dataclass(frozen=True, kw_only=True)
class ToolCallLocation:
    path: str
    line: int | None = None


@dataclass(frozen=True, kw_only=True)
class ToolCallEvent:
    """A tool call as it starts (``tool_call``) or as it ends (``tool_call_update``)."""

    tool_call_id: str
    name: str
    title: str
    kind: ToolKindName
    status: ToolStatusName
    locations: tuple[ToolCallLocation, ...] = ()
    raw_input: dict[str, Any] = field(default_factory=dict[str, Any])
    output: str | None = None


class AgentEvents(Protocol):
    async def agent_message(self, agent: AgentRef, text: str) -> None: ...

    async def tool_call(self, agent: AgentRef, call: ToolCallEvent) -> None: ...

    async def tool_call_update(self, agent: AgentRef, call: ToolCallEvent) -> None: ...


class NoEvents:
    """A sink that drops every event."""

    async def agent_message(self, agent: AgentRef, text: str) -> None:
        return None

    async def tool_call(self, agent: AgentRef, call: ToolCallEvent) -> None:
        return None

    async def tool_call_update(self, agent: AgentRef, call: ToolCallEvent) -> None:
        return None


NO_EVENTS = NoEvents()
