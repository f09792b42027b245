"""What a run's graph nodes use at run time (the LangGraph runtime context), and how a node says the run was cancelled.

Nothing here is checkpointed: one compiled graph serves a run and its resumption, each invocation with the
run's own ``RunContext``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from daemon.core.run_models import Attachment
from daemon.orchestration.consistency import RunDiffs
from daemon.orchestration.reporter import RunReporter
from daemon.orchestration.resilience import ChatCaller
from daemon.orchestration.retriever import Retriever
from daemon.orchestration.stage_agents import AgentProvider
from daemon.orchestration.state import StageResult

__all__ = ["RunCancelled", "RunContext"]


class RunCancelled(Exception):
    """Raised by a node that finds its run cancelled before it starts any work."""


@dataclass(frozen=True, kw_only=True)
class RunContext:
    """What nodes use at run time (LangGraph runtime context; never checkpointed)."""

    agents: AgentProvider
    reporter: RunReporter
    cancelled: Callable[[], Awaitable[bool]]
    retriever: Retriever | None = None
    query_writer: ChatCaller | None = None
    max_iterations: int = 50
    stage_timeout_seconds: float = 900.0
    commit: Callable[[StageResult], Awaitable[str | None]] | None = None
    attachments: tuple[Attachment, ...] = ()
    feedback: str | None = None
    """Review feedback the attempt answers (a follow-up); it goes into the agents' task and the result."""
    diffs: RunDiffs | None = None
    """The run worktree's diffs (editing runs): each attempt is checked against the earlier ones with them."""
    reflector: ChatCaller | None = None
    """The reflector role's model (``reflection``); None: the reflector node skips, saying so."""
    evaluator: ChatCaller | None = None
    """The evaluator role's model; None: the evaluator node skips, saying so."""
