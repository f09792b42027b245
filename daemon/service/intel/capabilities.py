"""The registry: every code-intel and search capability, declared once.

The MCP tools (``mcp_servers.code_intel``), the agents' LangChain tools (``agent_tools``), the
daemon's ``intel/*`` RPC methods (``intel_host``), the in-process transport (``workspace_local``)
and the LSP front's ``ided/intel/*`` bindings are all derived from ``CAPABILITIES``. Adding a
capability is one entry here (and its tests: each front's test asserts it exposes every entry).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from daemon.core.intel_models import (
    AstNodeResult,
    CallHierarchyResult,
    DefinitionResult,
    DiagnosticsResult,
    IntelStatus,
    ReferencesResult,
    SignatureResult,
    SymbolsResult,
    TypeResult,
)
from daemon.core.models import ChunkKind, SearchFilters
from daemon.core.ports import Workspace
from daemon.service.intel.capability import Capability, ToolKind
from daemon.service.intel.params import (
    AstNodeParams,
    CallHierarchyParams,
    DefinitionParams,
    DiagnosticsParams,
    DocumentSymbolsParams,
    NoParams,
    ReferencesParams,
    SearchCodeParams,
    SearchDocsParams,
    SignatureParams,
    TypeParams,
    WorkspaceSymbolsParams,
)
from daemon.service.intel.search_answer import SearchAnswer, search_answer

if TYPE_CHECKING:  # the service (language servers, index) loads only where it runs, not with the registry
    from daemon.service.intel.code_intel import CodeIntelService

__all__ = [
    "AST_NODE",
    "BY_METHOD",
    "BY_NAME",
    "CALL_HIERARCHY",
    "CAPABILITIES",
    "DEFINITION",
    "DIAGNOSTICS",
    "DOCUMENT_SYMBOLS",
    "INDEX_STATUS",
    "REFERENCES",
    "SEARCH_CODE",
    "SEARCH_DOCS",
    "SIGNATURE",
    "TYPE",
    "WORKSPACE_SYMBOLS",
]

P = TypeVar("P", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)


async def _search_code(ws: Workspace, p: SearchCodeParams) -> SearchAnswer:
    filters = SearchFilters(kind=ChunkKind.CODE, language=p.language, path_glob=p.path_glob)
    result = await ws.search(p.query, k=p.k, filters=filters)
    return search_answer(result, detail=p.detail, max_chars=p.max_chars, group_by_file=p.group_by_file)


async def _search_docs(ws: Workspace, p: SearchDocsParams) -> SearchAnswer:
    result = await ws.search(p.query, k=p.k, filters=SearchFilters(kind=ChunkKind.DOCS))
    return search_answer(result, detail=p.detail, max_chars=p.max_chars, group_by_file=p.group_by_file)


def _title(name: str) -> str:
    return name.replace("_", " ").capitalize()


def _served(
    name: str,
    method: str,
    params: type[P],
    result: type[R],
    kind: ToolKind,
    description: str,
    *,
    work: Callable[[CodeIntelService, P], Awaitable[R]],
    lsp_elsewhere: str | None = None,
) -> Capability[P, R]:
    """A capability the daemon serves as ``intel/<method>``, answered by ``work`` (the service's method, named
    by reference so that pyright checks it)."""
    return Capability(
        name=name,
        method=f"intel/{method}",
        params=params,
        result=result,
        title=_title(name),
        kind=kind,
        description=description,
        work=work,
        lsp_elsewhere=lsp_elsewhere,
    )


def _routed(
    name: str,
    params: type[P],
    result: type[R],
    description: str,
    route: Callable[[Workspace, P], Awaitable[R]],
    *,
    lsp_elsewhere: str,
) -> Capability[P, R]:
    """A search capability: answered by the workspace's ``search`` (through ``route``), not by a daemon method."""
    return Capability(
        name=name,
        params=params,
        result=result,
        title=_title(name),
        kind="search",
        description=description,
        route=route,
        lsp_elsewhere=lsp_elsewhere,
    )


SIGNATURE = _served(
    "get_signature",
    "signature",
    SignatureParams,
    SignatureResult,
    "read",
    "Exact signature (with types) and documentation of a function, method, class or variable, from the\n"
    "language server's hover. Give a symbol name ('Class.method', 'module.func') or file + line (+ column).\n"
    "When the server has nothing, the Tree-sitter signature is returned and `source` says 'tree_sitter'.",
    work=lambda s, p: s.get_signature(p),
)

TYPE = _served(
    "get_type",
    "type",
    TypeParams,
    TypeResult,
    "read",
    "The type of a variable, parameter, attribute, function or expression, as the language server infers\n"
    "it (its hover), and where that type is declared (its type definition). Give a symbol name or the\n"
    "position of a use as file + line + column; a callable's type is '(params) -> returns'.",
    work=lambda s, p: s.get_type(p),
)

DEFINITION = _served(
    "find_definition",
    "definition",
    DefinitionParams,
    DefinitionResult,
    "search",
    "Where a symbol is defined (following imports across files) with the definition's source code.\n"
    "Give a symbol name ('Class.method', 'module.func', 'ns::func') or the position of a use as\n"
    "file + line + column. Locations outside the workspace (library stubs) have in_workspace=false.",
    work=lambda s, p: s.find_definition(p),
)

REFERENCES = _served(
    "get_references",
    "references",
    ReferencesParams,
    ReferencesResult,
    "search",
    "Every use of a symbol across the workspace, each with the function/class that contains it\n"
    "(`container`), from the language server. Give a symbol name or file + line + column. `total` and\n"
    "`files` count all references even when the list is cut to max_results.",
    work=lambda s, p: s.get_references(p),
)

AST_NODE = _served(
    "get_ast_node",
    "ast_node",
    AstNodeParams,
    AstNodeResult,
    "read",
    "The Tree-sitter syntax node at file:line:column, its ancestors up to the root (type, range, text\n"
    "excerpt, field name) and the enclosing function and class. Works without a language server, for any\n"
    "language with a bundled grammar; `has_errors` tells whether the file has syntax errors.",
    work=lambda s, p: s.get_ast_node(p),
)

DOCUMENT_SYMBOLS = _served(
    "document_symbols",
    "document_symbols",
    DocumentSymbolsParams,
    SymbolsResult,
    "read",
    "Outline of one file: its classes, functions, methods, variables with kinds and nesting\n"
    "(`container`), from the language server, or from the Tree-sitter chunker when no server is\n"
    "available. Compact by default (two levels, no locals); `notes` say what was left out.",
    work=lambda s, p: s.document_symbols(p),
    lsp_elsewhere="not served: the editor's own language server answers textDocument/documentSymbol",
)

WORKSPACE_SYMBOLS = _served(
    "workspace_symbols",
    "workspace_symbols",
    WorkspaceSymbolsParams,
    SymbolsResult,
    "search",
    "Find symbol definitions by name across the workspace with the language servers' workspace-symbol\n"
    "search (classes, functions, methods, ...). Use it to locate something whose file you do not know;\n"
    "use search_code for natural-language questions.",
    work=lambda s, p: s.workspace_symbols(p),
    lsp_elsewhere="workspace/symbol, from the index (handlers/index.py)",
)

CALL_HIERARCHY = _served(
    "call_hierarchy",
    "call_hierarchy",
    CallHierarchyParams,
    CallHierarchyResult,
    "search",
    "Callers (incoming) or callees (outgoing) of a function or method, with the call sites, from the\n"
    "language server's call hierarchy. Fails with a clear error when the server does not support it.",
    work=lambda s, p: s.call_hierarchy(p),
    lsp_elsewhere="not served: the editor's own language server answers the call-hierarchy requests",
)

DIAGNOSTICS = _served(
    "diagnostics",
    "diagnostics",
    DiagnosticsParams,
    DiagnosticsResult,
    "read",
    "Errors and warnings the language server reports for one file's current content on disk (type\n"
    "errors, unresolved imports, syntax errors), with ranges and severity.",
    work=lambda s, p: s.diagnostics(p),
    lsp_elsewhere="not served: the editor's own language server publishes diagnostics",
)

SEARCH_CODE = _routed(
    "search_code",
    SearchCodeParams,
    SearchAnswer,
    "Search the workspace's code index (functions, classes, methods as chunks) with BM25 and, once\n"
    'complete, semantic vectors, ranked as one list. Use it for "where is X handled" questions; use\n'
    "find_definition/get_references for exact facts about a named symbol. Hits are lean (path, lines,\n"
    "symbol, one-line snippet, score) in score order; detail=true adds each hit's text. `vectors` says\n"
    "how complete the semantic vectors are.",
    _search_code,
    lsp_elsewhere="ided/index/search with kind=code (hits as LSP locations; handlers/index.py)",
)

SEARCH_DOCS = _routed(
    "search_docs",
    SearchDocsParams,
    SearchAnswer,
    "Search the workspace's documentation (Markdown/reST sections by heading) in ided's index, with\n"
    "BM25 and, once complete, semantic vectors. Lean hits; detail=true adds each section's text.",
    _search_docs,
    lsp_elsewhere="ided/index/search with kind=docs (handlers/index.py)",
)

INDEX_STATUS = Capability(
    name="index_status",
    method="intel/status",
    params=NoParams,
    result=IntelStatus,
    title=_title("index_status"),
    kind="read",
    description="State of ided's index (files, chunks, embedded fraction, last pass) and of each language server\n"
    "(ready, starting, indexing, failed, unavailable with the install hint).",
    work=lambda s, _p: s.index_status(),
    lsp_elsewhere="ided/index/status (handlers/index.py)",
)

CAPABILITIES: tuple[Capability[Any, Any], ...] = (
    SIGNATURE,
    TYPE,
    DEFINITION,
    REFERENCES,
    AST_NODE,
    DOCUMENT_SYMBOLS,
    WORKSPACE_SYMBOLS,
    CALL_HIERARCHY,
    DIAGNOSTICS,
    SEARCH_CODE,
    SEARCH_DOCS,
    INDEX_STATUS,
)
"""Every capability, in the order the MCP server lists its tools."""

BY_NAME: Mapping[str, Capability[Any, Any]] = {c.name: c for c in CAPABILITIES}
BY_METHOD: Mapping[str, Capability[Any, Any]] = {c.method: c for c in CAPABILITIES if c.method is not None}
