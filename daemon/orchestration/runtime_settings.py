"""The runtime's limits and defaults (``RuntimeSettings``) and what a host lends one run (``RunHost``).

``RuntimeSettings.from_config`` reads ``[pipeline]``, ``[agents]`` and ``vcs.include_uncommitted``.
``RunHost`` is kept in memory only: a resumed run gets what ``resume`` is given.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_core.tools import BaseTool

from daemon.config import AgentsConfig, PipelineConfig, VcsConfig
from daemon.orchestration.agents import FileReader

__all__ = ["RunHost", "RuntimeSettings"]


@dataclass(frozen=True, kw_only=True)
class RuntimeSettings:
    max_iterations: int = 50
    stage_timeout_seconds: float = 900.0
    selection_retries: int = 1
    agents: AgentsConfig = field(default_factory=AgentsConfig)
    include_uncommitted: bool = False
    """What a run that does not say gets (``vcs.include_uncommitted``)."""
    spare_worktree: bool = False
    """Keep a worktree checked out ahead for the next editing run (a long-lived host with
    ``vcs.spare_worktree``; a one-shot command would wait for the checkout before it exits)."""

    @classmethod
    def from_config(
        cls,
        config: PipelineConfig,
        agents: AgentsConfig | None = None,
        vcs: VcsConfig | None = None,
        *,
        long_lived: bool = False,
    ) -> RuntimeSettings:
        """``long_lived``: the host outlives its runs (a daemon), so a spare worktree is worth keeping."""
        return cls(
            max_iterations=config.max_iterations,
            stage_timeout_seconds=config.stage_timeout_seconds,
            selection_retries=config.selection_retries,
            agents=agents or AgentsConfig(),
            include_uncommitted=vcs.include_uncommitted if vcs is not None else False,
            spare_worktree=long_lived and vcs is not None and vcs.spare_worktree,
        )


@dataclass(frozen=True, kw_only=True)
class RunHost:
    """What the host lent one run for its agents (not persisted: a resumed run gets what resume is given)."""

    file_reader: FileReader | None = None
    extra_tools: tuple[BaseTool, ...] = ()
    trusted: bool | None = None
    """Whether the repository's commands may run (None: as the user's trust store says)."""
