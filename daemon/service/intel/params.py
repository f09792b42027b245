"""The params of each code-intel and search capability: one pydantic model per capability.

These models are the one declaration of a capability's arguments: the MCP tools' input schemas,
the agents' LangChain argument schemas, the daemon's ``intel/*`` params and the LSP front's
validation are all derived from them (``daemon.service.intel.capabilities``). Field names are the wire
names (snake_case; the LSP front sends them camelCase). Lines and columns are 1-based; paths are
workspace-relative.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from daemon.core.frozen_model import FrozenModel

__all__ = [
    "AstNodeParams",
    "CallHierarchyParams",
    "DefinitionParams",
    "DiagnosticsParams",
    "DocumentSymbolsParams",
    "NoParams",
    "ReferencesParams",
    "SearchCodeParams",
    "SearchDocsParams",
    "SignatureParams",
    "SymbolTarget",
    "TypeParams",
    "WorkspaceSymbolsParams",
]

_RESULTS = "Return at most this many items (total is reported)."
_CHARS = "Cut each text field to this many characters."
_DETAIL = (
    "Each hit's text (cut to max_chars), kind, language and rankers too; default: lean hits (path, lines, "
    "symbol, a one-line snippet, score)."
)
_GROUP = "List each file's hits together (files in the order of their best hit); default: score order."
_HIT_CHARS = "With detail: cut each hit's text to this many characters."


class NoParams(FrozenModel):
    """A capability that takes no arguments."""


class SymbolTarget(FrozenModel):
    """A symbol by name ("Class.method", "module.func") or by position (file + 1-based line and column)."""

    symbol: str | None = Field(
        default=None,
        description="Symbol name: 'Class.method', 'module.func', a package's public name ('requests.get'), "
        "'ns::func' or a bare name.",
    )
    file: str | None = Field(default=None, description="Workspace-relative file path (with line) instead of a symbol.")
    line: int | None = Field(default=None, ge=1, description="1-based line in `file`.")
    column: int | None = Field(
        default=None, ge=1, description="1-based column (characters) in `line`; default: the first code on the line."
    )


class DefinitionParams(SymbolTarget):
    max_results: int = Field(default=10, ge=1, le=500, description=_RESULTS)
    max_chars: int = Field(default=2000, ge=20, le=50_000, description=_CHARS)


class ReferencesParams(SymbolTarget):
    include_declaration: bool = Field(default=True, description="Include the definition itself.")
    max_results: int = Field(default=50, ge=1, le=500, description=_RESULTS)


class SignatureParams(SymbolTarget):
    max_chars: int = Field(default=4000, ge=20, le=50_000, description=_CHARS)


class TypeParams(SymbolTarget):
    max_results: int = Field(default=5, ge=1, le=50, description="Return at most this many type definitions.")


class CallHierarchyParams(SymbolTarget):
    direction: Literal["incoming", "outgoing"] = Field(
        default="incoming", description="incoming: who calls it; outgoing: what it calls."
    )
    max_results: int = Field(default=50, ge=1, le=500, description=_RESULTS)


class AstNodeParams(FrozenModel):
    file: str = Field(description="Workspace-relative file path.")
    line: int = Field(ge=1, description="1-based line.")
    column: int | None = Field(
        default=None, ge=1, description="1-based column (characters) in `line`; default: the first code on the line."
    )
    max_chars: int = Field(default=200, ge=20, le=5000, description="Cut each node's text excerpt to this.")


class DocumentSymbolsParams(FrozenModel):
    file: str = Field(description="Workspace-relative file path.")
    max_results: int = Field(default=200, ge=1, le=500, description=_RESULTS)
    depth: int = Field(default=2, ge=1, le=64, description="Nesting kept: 1 top level only, 2 also class members.")
    include_locals: bool = Field(
        default=False, description="Also list what sits inside functions (parameters, locals, nested functions)."
    )
    max_chars: int = Field(default=20_000, ge=200, le=1_000_000, description="Stop listing at this many characters.")


class WorkspaceSymbolsParams(FrozenModel):
    query: str = Field(min_length=1, description="Symbol name or its beginning (fuzzy per server).")
    language: str | None = Field(default=None, description="Only this language's server, e.g. python.")
    max_results: int = Field(default=50, ge=1, le=500, description=_RESULTS)


class DiagnosticsParams(FrozenModel):
    file: str = Field(description="Workspace-relative file path.")
    max_results: int = Field(default=100, ge=1, le=500, description=_RESULTS)


class SearchDocsParams(FrozenModel):
    query: str = Field(min_length=1, description="Words or a question.")
    k: int = Field(default=10, ge=1, le=100, description="Number of hits.")
    detail: bool = Field(default=False, description=_DETAIL)
    group_by_file: bool = Field(default=False, description=_GROUP)
    max_chars: int = Field(default=1500, ge=20, le=50_000, description=_HIT_CHARS)


class SearchCodeParams(FrozenModel):
    query: str = Field(min_length=1, description="Words, identifiers or a question.")
    k: int = Field(default=10, ge=1, le=100, description="Number of hits.")
    language: str | None = Field(default=None, description="Only this language, e.g. python, typescript.")
    path_glob: str | None = Field(default=None, description="Only paths matching this glob, e.g. 'src/**'.")
    detail: bool = Field(default=False, description=_DETAIL)
    group_by_file: bool = Field(default=False, description=_GROUP)
    max_chars: int = Field(default=1500, ge=20, le=50_000, description=_HIT_CHARS)
