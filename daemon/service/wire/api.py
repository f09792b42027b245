"""The daemon's local API: method names and their typed params/results.

Fronts (LSP, MCP, ACP, CLI) call these over the daemon socket; the LSP front re-exposes most of
them as ``ided/<area>/<verb>`` methods. The ``intel/*`` methods' params are the capabilities'
(``daemon.service.intel.params``; the registry is ``daemon.service.intel.capabilities``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from daemon.core.frozen_model import FrozenModel
from daemon.core.intel_models import ClientInfo, DaemonInfo, IntelStatus, LanguageServerStatus
from daemon.core.models import ChunkKind, IndexReport, IndexStatus, SearchFilters, SearchMode
from daemon.core.trust_notice import TrustNotice

__all__ = [
    "ClientInfo",
    "DaemonStatus",
    "HelloParams",
    "IndexChanged",
    "IndexProgressEvent",
    "Methods",
    "ReindexParams",
    "SearchParams",
]


class Methods:
    """The method and notification names of the daemon's local API; the ``intel/*`` methods are the
    capabilities' (``Capability.daemon_method``, declared once in ``daemon.service.intel.capabilities``), the
    ``runs/*`` operations the run service's."""

    HELLO = "daemon/hello"
    DAEMON_STATUS = "daemon/status"
    SHUTDOWN = "daemon/shutdown"
    INDEX_SEARCH = "index/search"
    INDEX_STATUS = "index/status"
    INDEX_REINDEX = "index/reindex"
    # -- runs: every run operation is ``runs/<name>`` (declared in daemon.service.runs.service) --
    RUNS_SUBSCRIBE = "runs/subscribe"
    # notifications, daemon -> clients
    INDEX_PROGRESS = "index/progress"
    INDEX_CHANGED = "index/changed"
    RUNS_PROGRESS = "runs/progress"
    """A run's progress event (``ExecutionProgress``), to connections that called ``runs/subscribe``."""


class HelloParams(FrozenModel):
    client: Literal["lsp", "mcp", "acp", "cli", "other"] = "other"
    pid: int | None = None
    subscribe: bool = Field(default=False, description="Receive index/progress and index/changed notifications.")


class SearchParams(FrozenModel):
    query: str = Field(min_length=1)
    k: int | None = Field(default=None, ge=1, le=200)
    kind: ChunkKind | None = None
    language: str | None = None
    path_glob: str | None = None
    mode: SearchMode = SearchMode.HYBRID

    @classmethod
    def of(cls, query: str, *, k: int | None, filters: SearchFilters | None, mode: SearchMode | None) -> SearchParams:
        """The params of a ``Workspace.search`` call (no filters: none; no mode: hybrid)."""
        f = filters or SearchFilters()
        return cls(
            query=query, k=k, kind=f.kind, language=f.language, path_glob=f.path_glob, mode=mode or SearchMode.HYBRID
        )

    def filters(self) -> SearchFilters:
        return SearchFilters(kind=self.kind, language=self.language, path_glob=self.path_glob)


class ReindexParams(FrozenModel):
    paths: list[str] | None = Field(default=None, description="Workspace-relative paths; None = a full pass.")


class IndexProgressEvent(BaseModel):
    phase: str
    done: int
    total: int


class IndexChanged(BaseModel):
    paths: list[str]
    report: IndexReport


class DaemonStatus(DaemonInfo):
    """``daemon/status``: the daemon, its index and its language servers."""

    workspace: str
    index: IndexStatus
    servers: tuple[LanguageServerStatus, ...] = ()
    trust: TrustNotice | None = None
    """What the daemon left out of its untrusted workspace, with how to trust (``daemon.core.trust_notice``)."""

    @classmethod
    def of(cls, status: IntelStatus, daemon: DaemonInfo) -> DaemonStatus:
        """The ``daemon/status`` answer again, from the port's ``status`` of a daemon-served workspace."""
        if status.index is None:
            raise ValueError("a daemon's status always has its index")
        return cls(
            **dict(daemon), workspace=status.workspace, index=status.index, servers=status.servers, trust=status.trust
        )

    def intel_status(self) -> IntelStatus:
        """The same answer as the ``Workspace`` port's ``status``: the daemon's part as ``daemon``."""
        daemon = DaemonInfo.model_validate(self.model_dump(include=set(DaemonInfo.model_fields)))
        return IntelStatus(
            workspace=self.workspace, index=self.index, servers=self.servers, daemon=daemon, trust=self.trust
        )
