"""ided's code-intel and search tools as LangChain tools for the pipeline's agents (in-process).

The same functions the MCP server exposes (``mcp_servers.code_intel``), called directly on a
``CodeIntelService`` (this process's language servers and index) or a ``RemoteCodeIntel`` (the
workspace daemon's): search_code, search_docs, find_definition, get_references, get_signature,
document_symbols, workspace_symbols, call_hierarchy and diagnostics. Each tool answers with its
result model; a ``DaemonError`` (unknown symbol, server not ready) becomes the tool's error text,
which the agent sees and can act on. Tools carry ``metadata`` marking them as code-intel (so the
workflow's ``mcp_tools`` list filters them per agent) and naming their kind (search or read).

The answers describe the user's workspace (the index and language servers follow it), not a run's
worktree: agents read their own edits with ``read_file``.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, ConfigDict, Field

from daemon.orchestration.agents import CODE_INTEL_MARK, TOOL_KIND_KEY
from daemon.service.code_intel import CodeIntelService
from daemon.service.remote_code_intel import RemoteCodeIntel

__all__ = ["INTEL_TOOL_NAMES", "code_intel_tools"]

logger = logging.getLogger(__name__)

CodeIntel = CodeIntelService | RemoteCodeIntel

_SYMBOL = "Symbol name: 'Class.method', 'module.func', 'ns::func' or a bare name."
_FILE = "Workspace-relative file path (with line) instead of a symbol."


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _SearchArgs(_Args):
    query: str = Field(min_length=1, description="Words, identifiers or a question.")
    k: int = Field(default=8, ge=1, le=50, description="Number of hits.")


class _CodeSearchArgs(_SearchArgs):
    language: str | None = Field(default=None, description="Only this language, e.g. python.")
    path_glob: str | None = Field(default=None, description="Only paths matching this glob, e.g. 'src/**'.")


class _TargetArgs(_Args):
    symbol: str | None = Field(default=None, description=_SYMBOL)
    file: str | None = Field(default=None, description=_FILE)
    line: int | None = Field(default=None, ge=1, description="1-based line in `file`.")
    column: int | None = Field(default=None, ge=1, description="1-based column in `line`.")


class _CallsArgs(_TargetArgs):
    direction: Literal["incoming", "outgoing"] = Field(
        default="incoming", description="incoming: who calls it; outgoing: what it calls."
    )


class _FileArgs(_Args):
    file: str = Field(description="Workspace-relative file path.")


class _SymbolQueryArgs(_Args):
    query: str = Field(min_length=1, description="Symbol name or its beginning.")


def _tool(name: str, description: str, args: type[BaseModel], kind: str, coroutine: Any) -> BaseTool:
    return StructuredTool.from_function(
        coroutine=coroutine,
        name=name,
        description=description,
        args_schema=args,
        metadata={CODE_INTEL_MARK: True, TOOL_KIND_KEY: kind},
    )


def code_intel_tools(intel: CodeIntel) -> list[BaseTool]:
    """The code-intel tools over ``intel``, ready to pass to ``PipelineRuntime.start(extra_tools=...)``."""

    async def search_code(
        query: str, k: int = 8, language: str | None = None, path_glob: str | None = None
    ) -> BaseModel:
        return await intel.search_code(query, k=k, language=language, path_glob=path_glob, max_chars=1500)

    async def search_docs(query: str, k: int = 8) -> BaseModel:
        return await intel.search_docs(query, k=k, max_chars=1500)

    async def find_definition(
        symbol: str | None = None, file: str | None = None, line: int | None = None, column: int | None = None
    ) -> BaseModel:
        return await intel.find_definition(symbol, file=file, line=line, column=column)

    async def get_references(
        symbol: str | None = None, file: str | None = None, line: int | None = None, column: int | None = None
    ) -> BaseModel:
        return await intel.get_references(symbol, file=file, line=line, column=column)

    async def get_signature(
        symbol: str | None = None, file: str | None = None, line: int | None = None, column: int | None = None
    ) -> BaseModel:
        return await intel.get_signature(symbol, file=file, line=line, column=column)

    async def call_hierarchy(
        symbol: str | None = None,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        direction: Literal["incoming", "outgoing"] = "incoming",
    ) -> BaseModel:
        return await intel.call_hierarchy(symbol, file=file, line=line, column=column, direction=direction)

    async def document_symbols(file: str) -> BaseModel:
        return await intel.document_symbols(file)

    async def workspace_symbols(query: str) -> BaseModel:
        return await intel.workspace_symbols(query)

    async def diagnostics(file: str) -> BaseModel:
        return await intel.diagnostics(file)

    return [
        _tool(
            "search_code", "Search the workspace's code index (BM25 + vectors).", _CodeSearchArgs, "search", search_code
        ),
        _tool("search_docs", "Search the workspace's documentation sections.", _SearchArgs, "search", search_docs),
        _tool(
            "find_definition",
            "Where a symbol is defined, with its source (language server).",
            _TargetArgs,
            "search",
            find_definition,
        ),
        _tool(
            "get_references",
            "Every use of a symbol across the workspace (language server).",
            _TargetArgs,
            "search",
            get_references,
        ),
        _tool("get_signature", "Signature and documentation of a symbol (hover).", _TargetArgs, "read", get_signature),
        _tool("call_hierarchy", "Callers or callees of a function.", _CallsArgs, "search", call_hierarchy),
        _tool("document_symbols", "Outline of one file.", _FileArgs, "read", document_symbols),
        _tool("workspace_symbols", "Find symbol definitions by name.", _SymbolQueryArgs, "search", workspace_symbols),
        _tool(
            "diagnostics", "Errors and warnings the language server reports for a file.", _FileArgs, "read", diagnostics
        ),
    ]


INTEL_TOOL_NAMES: tuple[str, ...] = (
    "search_code",
    "search_docs",
    "find_definition",
    "get_references",
    "get_signature",
    "call_hierarchy",
    "document_symbols",
    "workspace_symbols",
    "diagnostics",
)
