"""The registry: every code-intel and search capability, declared once.

The MCP tools (``mcp_servers.code_intel``), the agents' LangChain tools (``agent_tools``), the
daemon's ``intel/*`` RPC methods (``intel_host``), the in-process transport (``workspace_local``)
and the LSP front's ``ided/intel/*`` bindings are all derived from ``CAPABILITIES``. Adding a
capability is one entry here (and its tests: each front's test asserts it exposes every entry).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from daemon.core.intel_models import (
    AstNodeResult,
    CallHierarchyResult,
    DefinitionResult,
    DiagnosticsResult,
    IntelStatus,
    ReferencesResult,
    SignatureResult,
    SymbolsResult,
)
from daemon.core.models import ChunkKind, SearchFilters, SearchResult
from daemon.core.ports import Workspace
from daemon.service.capability import Capability
from daemon.service.intel_params import (
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
    WorkspaceSymbolsParams,
)
from daemon.service.search_trim import trim_search_result

if TYPE_CHECKING:  # the service (language servers, index) loads only where it runs, not with the registry
    from daemon.service.code_intel import CodeIntelService

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
    "WORKSPACE_SYMBOLS",
]


async def _search_code(ws: Workspace, p: SearchCodeParams) -> SearchResult:
    filters = SearchFilters(kind=ChunkKind.CODE, language=p.language, path_glob=p.path_glob)
    return trim_search_result(await ws.search(p.query, k=p.k, filters=filters), p.max_chars)


async def _search_docs(ws: Workspace, p: SearchDocsParams) -> SearchResult:
    result = await ws.search(p.query, k=p.k, filters=SearchFilters(kind=ChunkKind.DOCS))
    return trim_search_result(result, p.max_chars)


# The work of each daemon method: a call on the service (a function, so this module needs no import of it).


async def _get_signature(service: CodeIntelService, p: SignatureParams) -> SignatureResult:
    return await service.get_signature(p)


async def _find_definition(service: CodeIntelService, p: DefinitionParams) -> DefinitionResult:
    return await service.find_definition(p)


async def _get_references(service: CodeIntelService, p: ReferencesParams) -> ReferencesResult:
    return await service.get_references(p)


async def _get_ast_node(service: CodeIntelService, p: AstNodeParams) -> AstNodeResult:
    return await service.get_ast_node(p)


async def _document_symbols(service: CodeIntelService, p: DocumentSymbolsParams) -> SymbolsResult:
    return await service.document_symbols(p)


async def _workspace_symbols(service: CodeIntelService, p: WorkspaceSymbolsParams) -> SymbolsResult:
    return await service.workspace_symbols(p)


async def _call_hierarchy(service: CodeIntelService, p: CallHierarchyParams) -> CallHierarchyResult:
    return await service.call_hierarchy(p)


async def _diagnostics(service: CodeIntelService, p: DiagnosticsParams) -> DiagnosticsResult:
    return await service.diagnostics(p)


SIGNATURE = Capability(
    name="get_signature",
    method="intel/signature",
    params=SignatureParams,
    result=SignatureResult,
    title="Get signature",
    kind="read",
    description="Exact signature (with types) and documentation of a function, method, class or variable, from the\n"
    "language server's hover. Give a symbol name ('Class.method', 'module.func') or file + line (+ column).\n"
    "When the server has nothing, the Tree-sitter signature is returned and `source` says 'tree_sitter'.",
    work=_get_signature,
)

DEFINITION = Capability(
    name="find_definition",
    method="intel/definition",
    params=DefinitionParams,
    result=DefinitionResult,
    title="Find definition",
    kind="search",
    description="Where a symbol is defined (following imports across files) with the definition's source code.\n"
    "Give a symbol name ('Class.method', 'module.func', 'ns::func') or the position of a use as\n"
    "file + line + column. Locations outside the workspace (library stubs) have in_workspace=false.",
    work=_find_definition,
)

REFERENCES = Capability(
    name="get_references",
    method="intel/references",
    params=ReferencesParams,
    result=ReferencesResult,
    title="Get references",
    kind="search",
    description="Every use of a symbol across the workspace, each with the function/class that contains it\n"
    "(`container`), from the language server. Give a symbol name or file + line + column. `total` and\n"
    "`files` count all references even when the list is cut to max_results.",
    work=_get_references,
)

AST_NODE = Capability(
    name="get_ast_node",
    method="intel/ast_node",
    params=AstNodeParams,
    result=AstNodeResult,
    title="Get ast node",
    kind="read",
    description="The Tree-sitter syntax node at file:line:column, its ancestors up to the root (type, range, text\n"
    "excerpt, field name) and the enclosing function and class. Works without a language server, for any\n"
    "language with a bundled grammar; `has_errors` tells whether the file has syntax errors.",
    work=_get_ast_node,
)

DOCUMENT_SYMBOLS = Capability(
    name="document_symbols",
    method="intel/document_symbols",
    params=DocumentSymbolsParams,
    result=SymbolsResult,
    title="Document symbols",
    kind="read",
    description="Outline of one file: its classes, functions, methods, variables with kinds and nesting\n"
    "(`container`), from the language server, or from the Tree-sitter chunker when no server is\n"
    "available. Compact by default (two levels, no locals); `notes` say what was left out.",
    work=_document_symbols,
)

WORKSPACE_SYMBOLS = Capability(
    name="workspace_symbols",
    method="intel/workspace_symbols",
    params=WorkspaceSymbolsParams,
    result=SymbolsResult,
    title="Workspace symbols",
    kind="search",
    description="Find symbol definitions by name across the workspace with the language servers' workspace-symbol\n"
    "search (classes, functions, methods, ...). Use it to locate something whose file you do not know;\n"
    "use search_code for natural-language questions.",
    work=_workspace_symbols,
)

CALL_HIERARCHY = Capability(
    name="call_hierarchy",
    method="intel/call_hierarchy",
    params=CallHierarchyParams,
    result=CallHierarchyResult,
    title="Call hierarchy",
    kind="search",
    description="Callers (incoming) or callees (outgoing) of a function or method, with the call sites, from the\n"
    "language server's call hierarchy. Fails with a clear error when the server does not support it.",
    work=_call_hierarchy,
)

DIAGNOSTICS = Capability(
    name="diagnostics",
    method="intel/diagnostics",
    params=DiagnosticsParams,
    result=DiagnosticsResult,
    title="Diagnostics",
    kind="read",
    description="Errors and warnings the language server reports for one file's current content on disk (type\n"
    "errors, unresolved imports, syntax errors), with ranges and severity.",
    work=_diagnostics,
)

SEARCH_CODE = Capability(
    name="search_code",
    params=SearchCodeParams,
    result=SearchResult,
    title="Search code",
    kind="search",
    description="Search the workspace's code index (functions, classes, methods as chunks) with BM25 and, when\n"
    'computed, semantic vectors fused by rank. Use it for "where is X handled" questions; use\n'
    "find_definition/get_references for exact facts about a named symbol.",
    route=_search_code,
)

SEARCH_DOCS = Capability(
    name="search_docs",
    params=SearchDocsParams,
    result=SearchResult,
    title="Search docs",
    kind="search",
    description="Search the workspace's documentation (Markdown/reST sections by heading) in ided's index, with\n"
    "BM25 and, when computed, semantic vectors.",
    route=_search_docs,
)

INDEX_STATUS = Capability(
    name="index_status",
    method="intel/status",
    params=NoParams,
    result=IntelStatus,
    title="Index status",
    kind="read",
    description="State of ided's index (files, chunks, embedded fraction, last pass) and of each language server\n"
    "(ready, starting, indexing, failed, unavailable with the install hint).",
    work=lambda s, _p: s.index_status(),
)

CAPABILITIES: tuple[Capability[Any, Any], ...] = (
    SIGNATURE,
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
