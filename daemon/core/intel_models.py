"""Result models of the code-intelligence tools: locations, definitions, references, signatures,
syntax nodes, symbols, diagnostics and the readiness of the language servers behind them.

Conventions, everywhere: paths are workspace-relative POSIX (``in_workspace=False`` marks a file
outside it, such as a standard-library stub, given as an absolute path); lines and columns are
1-based and columns count Unicode code points (not UTF-16 units, not bytes). Every list a tool
returns is bounded: ``total`` says how many there were and ``truncated`` whether some were cut.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field

from daemon.core.frozen_model import FrozenModel
from daemon.core.models import IndexStatus
from daemon.core.trust_notice import TrustNotice

__all__ = [
    "AstNode",
    "AstNodeResult",
    "CallHierarchyCall",
    "CallHierarchyResult",
    "ClientInfo",
    "DaemonInfo",
    "Definition",
    "DefinitionResult",
    "DiagnosticInfo",
    "DiagnosticsResult",
    "EnclosingScope",
    "IntelStatus",
    "LanguageServerState",
    "LanguageServerStatus",
    "Location",
    "Reference",
    "ReferencesResult",
    "SignatureResult",
    "SignatureSource",
    "SourceRange",
    "SymbolInfo",
    "SymbolsResult",
    "TypeDefinition",
    "TypeResult",
    "TypeSource",
]


class SourceRange(FrozenModel):
    """A span of text: 1-based lines and columns (code points), end exclusive in columns."""

    start_line: int = Field(ge=1)
    start_column: int = Field(ge=1)
    end_line: int = Field(ge=1)
    end_column: int = Field(ge=1)


class Location(FrozenModel):
    """A place in a file, with the line it points at."""

    path: str = Field(description="Workspace-relative POSIX path; absolute when in_workspace is false.")
    in_workspace: bool = True
    range: SourceRange
    line_text: str | None = Field(default=None, description="The (trimmed) text of the first line of the range.")


class EnclosingScope(FrozenModel):
    """The function, method or class that contains a position."""

    kind: str = Field(description="function, method, class, ... (from the syntax tree).")
    name: str
    qualified_name: str = Field(description="Class.method, outer.inner, ...")
    range: SourceRange


class Definition(FrozenModel):
    """One definition site."""

    location: Location
    symbol: str | None = Field(default=None, description="Qualified name of the definition, when known.")
    kind: str | None = None
    source: str | None = Field(default=None, description="Source text of the definition (bounded by max_chars).")
    source_truncated: bool = False


class DefinitionResult(FrozenModel):
    """Where a symbol is defined, with the definition's source."""

    query: str = Field(description="The symbol or position asked about.")
    definitions: tuple[Definition, ...]
    total: int
    truncated: bool = False
    server: str | None = Field(default=None, description="The language server that answered.")
    answered_by: Literal["language_server", "index"] = Field(
        default="language_server",
        description="language_server: the server's answer; index: the definitions the workspace index (Tree-sitter) "
        "holds for the name, given at once while the language server is still starting (the notes say so).",
    )
    notes: tuple[str, ...] = ()


class Reference(FrozenModel):
    """One use of a symbol and the function/class it sits in."""

    location: Location
    container: EnclosingScope | None = Field(default=None, description="None at module level.")
    is_declaration: bool = False


class ReferencesResult(FrozenModel):
    query: str
    references: tuple[Reference, ...]
    total: int
    truncated: bool = False
    files: int = Field(default=0, description="Number of distinct files among all references.")
    server: str | None = None
    notes: tuple[str, ...] = ()


class SignatureSource(StrEnum):
    HOVER = "hover"
    SIGNATURE_HELP = "signature_help"
    TREE_SITTER = "tree_sitter"


class SignatureResult(FrozenModel):
    """The exact signature and documentation of a symbol."""

    query: str
    signature: str
    documentation: str | None = None
    source: SignatureSource = Field(description="tree_sitter means the language server had nothing: a fallback.")
    location: Location | None = None
    server: str | None = None
    notes: tuple[str, ...] = ()


class TypeSource(StrEnum):
    HOVER = "hover"
    TYPE_DEFINITION = "type_definition"


class TypeDefinition(FrozenModel):
    """Where a type is declared (the language server's type definition)."""

    name: str | None = Field(default=None, description="The type's name as declared there.")
    location: Location


class TypeResult(FrozenModel):
    """The type of a name or of the expression at a position, as the language server infers it."""

    query: str
    symbol: str | None = Field(default=None, description="The name the server describes.")
    kind: str | None = Field(default=None, description="variable, parameter, property, method, function, class, ...")
    type: str = Field(description="The type: an annotation, '(params) -> returns' for a callable, a class's name.")
    returns: str | None = Field(default=None, description="A callable's return type.")
    declaration: str | None = Field(default=None, description="The hover's declaration line the type was read from.")
    source: TypeSource = Field(description="hover: read from the hover; type_definition: the declared type's name.")
    type_definitions: tuple[TypeDefinition, ...] = Field(
        default=(), description="Where the type is declared (in_workspace=false: a library or the standard library)."
    )
    location: Location | None = None
    server: str | None = None
    notes: tuple[str, ...] = ()


class AstNode(FrozenModel):
    """One Tree-sitter node."""

    type: str
    range: SourceRange
    text: str = Field(description="Text excerpt (bounded).")
    field: str | None = Field(default=None, description="The field name under its parent (name, body, ...).")
    named: bool = True


class AstNodeResult(FrozenModel):
    """The syntax node at a point, its ancestors (innermost first) and the enclosing function/class."""

    path: str
    language: str
    node: AstNode
    ancestors: tuple[AstNode, ...]
    enclosing_function: EnclosingScope | None = None
    enclosing_class: EnclosingScope | None = None
    has_errors: bool = Field(default=False, description="The file has syntax errors (ERROR/MISSING nodes).")


class SymbolInfo(FrozenModel):
    """A symbol from document/workspace symbols or a call-hierarchy item."""

    name: str
    kind: str
    container: str | None = None
    detail: str | None = None
    location: Location


class SymbolsResult(FrozenModel):
    query: str
    symbols: tuple[SymbolInfo, ...]
    total: int
    truncated: bool = False
    server: str | None = None
    notes: tuple[str, ...] = ()


class CallHierarchyCall(FrozenModel):
    """A caller (incoming) or callee (outgoing) and where the calls happen."""

    symbol: SymbolInfo
    call_sites_path: str = Field(description="The file the call sites are in: the caller's (incoming) or the symbol's.")
    call_sites: tuple[SourceRange, ...] = Field(description="Ranges of the calls in call_sites_path.")


class CallHierarchyResult(FrozenModel):
    query: str
    direction: Literal["incoming", "outgoing"]
    item: SymbolInfo | None
    calls: tuple[CallHierarchyCall, ...]
    total: int
    truncated: bool = False
    server: str | None = None
    notes: tuple[str, ...] = ()


class DiagnosticInfo(FrozenModel):
    range: SourceRange
    severity: Literal["error", "warning", "information", "hint"]
    message: str
    source: str | None = None
    code: str | None = None


class DiagnosticsResult(FrozenModel):
    path: str
    diagnostics: tuple[DiagnosticInfo, ...]
    total: int
    truncated: bool = False
    server: str | None = None
    notes: tuple[str, ...] = ()


class LanguageServerState(StrEnum):
    """Lifecycle of one language server."""

    NOT_STARTED = "not_started"
    STARTING = "starting"
    INDEXING = "indexing"
    READY = "ready"
    RESTARTING = "restarting"
    FAILED = "failed"
    UNAVAILABLE = "unavailable"


class LanguageServerStatus(FrozenModel):
    """What one language server is doing, honestly."""

    name: str = Field(description="Server id, e.g. basedpyright, typescript-language-server, clangd.")
    languages: tuple[str, ...]
    state: LanguageServerState
    command: str | None = Field(default=None, description="The executable found, or None when not installed.")
    reason: str | None = Field(default=None, description="Why not ready / unavailable / failed; install hint.")
    seconds_in_state: float = 0.0
    pid: int | None = None
    restarts: int = 0
    crashes_recent: int = 0
    requests: int = 0


class ClientInfo(FrozenModel):
    """One front attached to the daemon."""

    client: str = Field(description="What attached: cli, lsp, mcp, acp, ...")
    pid: int | None
    connected: str = Field(description="When it attached (ISO 8601, UTC).")


class DaemonInfo(FrozenModel):
    """The workspace daemon that serves a workspace: which process, since when, for whom."""

    pid: int
    version: str
    started: str
    uptime_seconds: float
    clients: tuple[ClientInfo, ...]
    watching: bool
    busy: str | None = Field(default=None, description="What the index is doing now (initial pass, embedding).")
    idle_limit_seconds: int = Field(
        default=0, description="It stops this long after the last client leaves; 0 = never (see editor_attached)."
    )
    editor_attached: bool = Field(
        default=False, description="An editor (lsp/acp) has attached: the longer idle limit applies."
    )


class IntelStatus(FrozenModel):
    """The index and the language servers of one workspace, and the daemon serving them if one does."""

    workspace: str
    index: IndexStatus | None = Field(description="None when the index could not be opened (see index_note).")
    index_note: str | None = None
    servers: tuple[LanguageServerStatus, ...]
    daemon: DaemonInfo | None = Field(
        default=None, description="The workspace daemon that answered; None when this process serves the workspace."
    )
    trust: TrustNotice | None = Field(
        default=None,
        description="What the untrusted workspace's repository set or ships that the serving process left out, "
        "with how to trust; None when trusted or nothing was.",
    )
