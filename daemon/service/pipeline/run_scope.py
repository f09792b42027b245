"""Each run's search scope over the service's parts: the run's tree laid over the workspace index.

``RunScopeFactory`` is the ``RunScopeOpener`` ``open_pipeline`` gives the runtime. For an editing run it
opens a ``RunTreeOverlay`` on the run's worktree (from where the run started: the base commit, or the
snapshot of the user's uncommitted changes) and gives the run:

- a retrieval agent of its own (the runtime's configuration and parts) whose index search is the
  overlaid one (``OverlaySearch``), whose grounding and AST map read the run's workdir, whose
  language-server facts leave out the files the run changed, and whose decision-log source leaves
  out the run's own notes (``OtherRunsHistory``);
- the agents' code-intel and search tools over ``OverlayWorkspace`` (``search_code``/``search_docs``
  find the run's code; the other capabilities answer from the workspace's language servers).

A run that does not edit gets the runtime's agent less its own notes, and the default tools. Closing
the scope drops the overlay.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.tools import BaseTool

from daemon.config import Config
from daemon.core.ports import Workspace
from daemon.core.run_models import RunChanges
from daemon.errors import DaemonError
from daemon.orchestration.retriever import AgentRetriever, Retriever
from daemon.retrieval.agent import RetrievalAgent
from daemon.retrieval.run_overlay import (
    OtherRunsHistory,
    OverlayFacts,
    OverlaySearch,
    OverlayWorkspace,
    RunTreeOverlay,
)
from daemon.service.intel.agent_tools import code_intel_tools
from daemon.vcs.worktrees import RunWorktrees

__all__ = ["RunScopeFactory", "ServiceRunScope"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class ServiceRunScope:
    """One run's retriever and tools (``daemon.orchestration.run_scope.RunScope``)."""

    retriever: Retriever | None
    tools: Sequence[BaseTool]
    overlay: RunTreeOverlay | None = None

    def as_checked_out(self, value: bool) -> None:
        if self.overlay is not None:
            self.overlay.pristine = value

    async def aclose(self) -> None:
        if self.overlay is not None:
            await asyncio.to_thread(self.overlay.close)


class RunScopeFactory:
    """Opens run scopes over one runtime's workspace port, retrieval agent and run branches."""

    def __init__(
        self,
        config: Config,
        *,
        workspace: Workspace,
        agent: RetrievalAgent | None,
        worktrees: RunWorktrees | None,
    ) -> None:
        self._config = config
        self._workspace = workspace
        self._agent = agent
        self._worktrees = worktrees

    async def __call__(self, run_id: str, changes: RunChanges | None) -> ServiceRunScope:
        overlay: RunTreeOverlay | None = None
        if changes is not None and self._worktrees is not None:
            try:
                branch = await asyncio.to_thread(self._worktrees.get, run_id)
            except DaemonError as exc:  # no branch record: the run searches the workspace index as it is
                logger.warning("run %s has no branch record; its searches do not see its tree: %s", run_id, exc)
                return ServiceRunScope(retriever=self._retriever(run_id, None), tools=self._tools(self._workspace))
            overlay = RunTreeOverlay(
                branch.workdir,
                branch.start_commit,
                max_file_bytes=self._config.index.max_file_bytes,
                max_chunk_lines=self._config.index.max_chunk_lines,
            )
        view: Workspace = OverlayWorkspace(self._workspace, overlay) if overlay is not None else self._workspace
        return ServiceRunScope(retriever=self._retriever(run_id, overlay), tools=self._tools(view), overlay=overlay)

    @staticmethod
    def _tools(view: Workspace) -> Sequence[BaseTool]:
        return code_intel_tools(view) if view.serves_intel else ()

    def _retriever(self, run_id: str, overlay: RunTreeOverlay | None) -> Retriever | None:
        agent = self._agent
        if agent is None:
            return None
        parts = agent.parts
        history = OtherRunsHistory(parts.history, run_id) if parts.history is not None else None
        if overlay is None:
            return AgentRetriever(RetrievalAgent(agent.config, dataclasses.replace(parts, history=history)))
        run_parts = dataclasses.replace(
            parts,
            root=overlay.workdir,
            index=OverlaySearch(parts.index, overlay) if parts.index is not None else None,
            facts=OverlayFacts(parts.facts, overlay) if parts.facts is not None else None,
            history=history,
        )
        return AgentRetriever(RetrievalAgent(agent.config, run_parts))
