"""The daemon's local API: method names and their typed params/results.

Fronts (LSP, MCP, ACP, CLI) call these over the daemon socket; the LSP front re-exposes most of
them as ``ided/<area>/<verb>`` methods.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from daemon.core.frozen_model import FrozenModel
from daemon.core.intel_models import LanguageServerStatus
from daemon.core.models import ChunkKind, IndexReport, IndexStatus, SearchFilters, SearchMode

__all__ = [
    "AstNodeParams",
    "CallHierarchyParams",
    "DaemonStatus",
    "DocumentSymbolsParams",
    "FileParams",
    "HelloParams",
    "IndexChanged",
    "IndexProgressEvent",
    "Methods",
    "ReferencesParams",
    "ReindexParams",
    "SearchParams",
    "SymbolTarget",
    "WorkspaceSymbolsParams",
]


class Methods:
    """Every method and notification name of the daemon's local API, in one table."""

    HELLO = "daemon/hello"
    DAEMON_STATUS = "daemon/status"
    SHUTDOWN = "daemon/shutdown"
    INDEX_SEARCH = "index/search"
    INDEX_STATUS = "index/status"
    INDEX_REINDEX = "index/reindex"
    INTEL_DEFINITION = "intel/definition"
    INTEL_REFERENCES = "intel/references"
    INTEL_SIGNATURE = "intel/signature"
    INTEL_AST_NODE = "intel/ast_node"
    INTEL_DOCUMENT_SYMBOLS = "intel/document_symbols"
    INTEL_WORKSPACE_SYMBOLS = "intel/workspace_symbols"
    INTEL_CALL_HIERARCHY = "intel/call_hierarchy"
    INTEL_DIAGNOSTICS = "intel/diagnostics"
    INTEL_STATUS = "intel/status"
    # notifications, daemon -> clients
    INDEX_PROGRESS = "index/progress"
    INDEX_CHANGED = "index/changed"


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

    def filters(self) -> SearchFilters:
        return SearchFilters(kind=self.kind, language=self.language, path_glob=self.path_glob)


class ReindexParams(FrozenModel):
    paths: list[str] | None = Field(default=None, description="Workspace-relative paths; None = a full pass.")


class SymbolTarget(FrozenModel):
    """A symbol by name ("Class.method", "module.func") or by position (1-based line and column)."""

    symbol: str | None = None
    file: str | None = Field(default=None, description="Workspace-relative (or absolute inside the workspace) path.")
    line: int | None = Field(default=None, ge=1)
    column: int | None = Field(default=None, ge=1)
    max_results: int = Field(default=50, ge=1, le=1000)
    max_chars: int = Field(default=4000, ge=100, le=100_000)


class ReferencesParams(SymbolTarget):
    include_declaration: bool = False


class CallHierarchyParams(SymbolTarget):
    direction: Literal["incoming", "outgoing"] = "incoming"


class AstNodeParams(FrozenModel):
    file: str
    line: int = Field(ge=1)
    column: int | None = Field(default=None, ge=1)
    max_chars: int = Field(default=2000, ge=100, le=100_000)


class FileParams(FrozenModel):
    file: str
    max_results: int = Field(default=200, ge=1, le=5000)


class DocumentSymbolsParams(FileParams):
    depth: int | None = Field(default=2, ge=1, le=64)
    include_locals: bool = False
    max_chars: int | None = Field(default=20_000, ge=200, le=1_000_000)


class WorkspaceSymbolsParams(FrozenModel):
    query: str
    max_results: int = Field(default=50, ge=1, le=1000)


class IndexProgressEvent(BaseModel):
    phase: str
    done: int
    total: int


class IndexChanged(BaseModel):
    paths: list[str]
    report: IndexReport


class ClientInfo(BaseModel):
    client: str
    pid: int | None
    connected: str


class DaemonStatus(BaseModel):
    pid: int
    workspace: str
    version: str
    started: str
    uptime_seconds: float
    clients: list[ClientInfo]
    watching: bool
    busy: str | None = Field(default=None, description="What the index is doing now (initial pass, embedding).")
    index: IndexStatus
    servers: list[LanguageServerStatus] = Field(default_factory=list[LanguageServerStatus])
    idle_limit_seconds: int = Field(
        default=0, description="It stops this long after the last client leaves; 0 = never (see editor_attached)."
    )
    editor_attached: bool = Field(
        default=False, description="An editor (lsp/acp) has attached: the longer idle limit applies."
    )
