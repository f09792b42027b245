"""The code-intel MCP server: a thin MCPServer (MCP SDK 2.x) over ``CodeIntelService``.

Each tool validates its arguments (pydantic, from the signature), calls one service method and
returns the service's result model (structured output plus its JSON as text). The one
catch-all of this front: a ``DaemonError`` becomes a ``ToolError`` (an ``is_error`` result whose
text names the file/symbol/cause); anything else is turned into an error result by the SDK
and logged. The lifespan opens the service (index + language-server pool) once per process —
for stdio and for streamable HTTP alike — and closes it on exit.

Transports: ``serve_stdio(config)`` and ``serve_http(config, token=..., port=...)``, the latter
bound to 127.0.0.1 behind a bearer token (``BearerTokenMiddleware``: 401 without it).
"""

from __future__ import annotations

import hmac
import inspect
import logging
import socket
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field
from starlette.types import ASGIApp, Receive, Scope, Send

from daemon import __version__
from daemon.config import Config
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
from daemon.core.models import SearchResult
from daemon.errors import DaemonError
from daemon.service.code_intel import CodeIntelService
from daemon.service.remote_code_intel import RemoteCodeIntel
from mcp_servers.code_intel.stdio_guard import GuardedStdioServer

__all__ = [
    "TOOL_NAMES",
    "BearerTokenMiddleware",
    "build_failed_server",
    "build_server",
    "serve_failed_stdio",
    "serve_http",
    "serve_stdio",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
CodeIntel = CodeIntelService | RemoteCodeIntel
Served = CodeIntel | DaemonError
"""What the tools work on: the service, or the error that kept it from opening (``build_failed_server``)."""
Ctx = Context[Served, Any]

INSTRUCTIONS = (
    "Precise code facts for this workspace from real language servers (kept warm) and Tree-sitter, "
    "plus search over ided's index. Name symbols as 'Class.method', 'module.func', a package's public "
    "name ('requests.Session.get', followed through re-exports) or 'ns::func', or "
    "give file + line (+ column), 1-based. Paths are workspace-relative. A 'not ready' error means a "
    "language server is still starting or indexing: retry in a few seconds rather than concluding "
    "that nothing exists."
)

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

Symbol = Annotated[
    str | None,
    Field(
        description="Symbol name: 'Class.method', 'module.func', a package's public name ('requests.get'), "
        "'ns::func' or a bare name."
    ),
]
File = Annotated[str | None, Field(description="Workspace-relative file path (with line) instead of a symbol.")]
Line = Annotated[int | None, Field(ge=1, description="1-based line in `file`.")]
Column = Annotated[
    int | None, Field(ge=1, description="1-based column (characters) in `line`; default: the first code on the line.")
]
MaxResults = Annotated[int, Field(ge=1, le=500, description="Return at most this many items (total is reported).")]
MaxChars = Annotated[int, Field(ge=20, le=50_000, description="Cut each text field to this many characters.")]
OutlineChars = Annotated[int, Field(ge=200, le=1_000_000, description="Stop listing symbols at this many characters.")]


async def _call(ctx: Ctx, method: Callable[[CodeIntel], Awaitable[T]]) -> T:
    service = ctx.request_context.lifespan_context
    if isinstance(service, DaemonError):
        raise ToolError(str(service))
    try:
        return await method(service)
    except DaemonError as exc:
        raise ToolError(str(exc)) from exc


async def get_signature(
    ctx: Ctx,
    symbol: Symbol = None,
    file: File = None,
    line: Line = None,
    column: Column = None,
    max_chars: MaxChars = 4000,
) -> SignatureResult:
    """Exact signature (with types) and documentation of a function, method, class or variable, from the
    language server's hover. Give a symbol name ('Class.method', 'module.func') or file + line (+ column).
    When the server has nothing, the Tree-sitter signature is returned and `source` says 'tree_sitter'."""
    return await _call(ctx, lambda s: s.get_signature(symbol, file=file, line=line, column=column, max_chars=max_chars))


async def find_definition(
    ctx: Ctx,
    symbol: Symbol = None,
    file: File = None,
    line: Line = None,
    column: Column = None,
    max_results: MaxResults = 10,
    max_chars: MaxChars = 2000,
) -> DefinitionResult:
    """Where a symbol is defined (following imports across files) with the definition's source code.
    Give a symbol name ('Class.method', 'module.func', 'ns::func') or the position of a use as
    file + line + column. Locations outside the workspace (library stubs) have in_workspace=false."""
    return await _call(
        ctx,
        lambda s: s.find_definition(
            symbol, file=file, line=line, column=column, max_results=max_results, max_chars=max_chars
        ),
    )


async def get_references(
    ctx: Ctx,
    symbol: Symbol = None,
    file: File = None,
    line: Line = None,
    column: Column = None,
    include_declaration: Annotated[bool, Field(description="Include the definition itself.")] = True,
    max_results: MaxResults = 50,
) -> ReferencesResult:
    """Every use of a symbol across the workspace, each with the function/class that contains it
    (`container`), from the language server. Give a symbol name or file + line + column. `total` and
    `files` count all references even when the list is cut to max_results."""
    return await _call(
        ctx,
        lambda s: s.get_references(
            symbol,
            file=file,
            line=line,
            column=column,
            include_declaration=include_declaration,
            max_results=max_results,
        ),
    )


async def get_ast_node(
    ctx: Ctx,
    file: Annotated[str, Field(description="Workspace-relative file path.")],
    line: Annotated[int, Field(ge=1, description="1-based line.")],
    column: Column = None,
    max_chars: Annotated[int, Field(ge=20, le=5000, description="Cut each node's text excerpt to this.")] = 200,
) -> AstNodeResult:
    """The Tree-sitter syntax node at file:line:column, its ancestors up to the root (type, range, text
    excerpt, field name) and the enclosing function and class. Works without a language server, for any
    language with a bundled grammar; `has_errors` tells whether the file has syntax errors."""
    return await _call(ctx, lambda s: s.get_ast_node(file, line, column, max_chars=max_chars))


async def document_symbols(
    ctx: Ctx,
    file: Annotated[str, Field(description="Workspace-relative file path.")],
    max_results: MaxResults = 200,
    depth: Annotated[int, Field(ge=1, le=64, description="Nesting kept: 1 top level only, 2 also class members.")] = 2,
    include_locals: Annotated[
        bool, Field(description="Also list what sits inside functions (parameters, locals, nested functions).")
    ] = False,
    max_chars: Annotated[
        int, Field(ge=200, le=1_000_000, description="Stop listing at this many characters.")
    ] = 20_000,
) -> SymbolsResult:
    """Outline of one file: its classes, functions, methods, variables with kinds and nesting
    (`container`), from the language server, or from the Tree-sitter chunker when no server is
    available. Compact by default (two levels, no locals); `notes` say what was left out."""
    return await _call(
        ctx,
        lambda s: s.document_symbols(
            file, max_results=max_results, depth=depth, include_locals=include_locals, max_chars=max_chars
        ),
    )


async def workspace_symbols(
    ctx: Ctx,
    query: Annotated[str, Field(min_length=1, description="Symbol name or its beginning (fuzzy per server).")],
    language: Annotated[str | None, Field(description="Only this language's server, e.g. python.")] = None,
    max_results: MaxResults = 50,
) -> SymbolsResult:
    """Find symbol definitions by name across the workspace with the language servers' workspace-symbol
    search (classes, functions, methods, ...). Use it to locate something whose file you do not know;
    use search_code for natural-language questions."""
    return await _call(ctx, lambda s: s.workspace_symbols(query, language=language, max_results=max_results))


async def call_hierarchy(
    ctx: Ctx,
    symbol: Symbol = None,
    file: File = None,
    line: Line = None,
    column: Column = None,
    direction: Annotated[
        Literal["incoming", "outgoing"], Field(description="incoming: who calls it; outgoing: what it calls.")
    ] = "incoming",
    max_results: MaxResults = 50,
) -> CallHierarchyResult:
    """Callers (incoming) or callees (outgoing) of a function or method, with the call sites, from the
    language server's call hierarchy. Fails with a clear error when the server does not support it."""
    return await _call(
        ctx,
        lambda s: s.call_hierarchy(
            symbol, file=file, line=line, column=column, direction=direction, max_results=max_results
        ),
    )


async def diagnostics(
    ctx: Ctx,
    file: Annotated[str, Field(description="Workspace-relative file path.")],
    max_results: MaxResults = 100,
) -> DiagnosticsResult:
    """Errors and warnings the language server reports for one file's current content on disk (type
    errors, unresolved imports, syntax errors), with ranges and severity."""
    return await _call(ctx, lambda s: s.diagnostics(file, max_results=max_results))


async def search_code(
    ctx: Ctx,
    query: Annotated[str, Field(min_length=1, description="Words, identifiers or a question.")],
    k: Annotated[int, Field(ge=1, le=100, description="Number of hits.")] = 10,
    language: Annotated[str | None, Field(description="Only this language, e.g. python, typescript.")] = None,
    path_glob: Annotated[str | None, Field(description="Only paths matching this glob, e.g. 'src/**'.")] = None,
    max_chars: MaxChars = 1500,
) -> SearchResult:
    """Search the workspace's code index (functions, classes, methods as chunks) with BM25 and, when
    computed, semantic vectors fused by rank. Use it for "where is X handled" questions; use
    find_definition/get_references for exact facts about a named symbol."""
    return await _call(
        ctx, lambda s: s.search_code(query, k=k, language=language, path_glob=path_glob, max_chars=max_chars)
    )


async def search_docs(
    ctx: Ctx,
    query: Annotated[str, Field(min_length=1, description="Words or a question.")],
    k: Annotated[int, Field(ge=1, le=100, description="Number of hits.")] = 10,
    max_chars: MaxChars = 1500,
) -> SearchResult:
    """Search the workspace's documentation (Markdown/reST sections by heading) in ided's index, with
    BM25 and, when computed, semantic vectors."""
    return await _call(ctx, lambda s: s.search_docs(query, k=k, max_chars=max_chars))


async def index_status(ctx: Ctx) -> IntelStatus:
    """State of ided's index (files, chunks, embedded fraction, last pass) and of each language server
    (ready, starting, indexing, failed, unavailable with the install hint)."""
    return await _call(ctx, lambda s: s.index_status())


_TOOLS: tuple[Callable[..., Awaitable[Any]], ...] = (
    get_signature,
    find_definition,
    get_references,
    get_ast_node,
    document_symbols,
    workspace_symbols,
    call_hierarchy,
    diagnostics,
    search_code,
    search_docs,
    index_status,
)
TOOL_NAMES: tuple[str, ...] = tuple(tool.__name__ for tool in _TOOLS)


def build_server(config: Config, *, background: bool = True, attach: bool = False) -> MCPServer[Served]:
    """An MCPServer with every code-intel tool; its lifespan opens and closes the service.

    ``attach``: the tools use the workspace daemon (one index and one set of language servers
    shared with every front) instead of a service of this process's own.
    """

    @asynccontextmanager
    async def lifespan(_server: MCPServer[Served]) -> AsyncGenerator[Served]:
        if attach:
            try:
                remote = await RemoteCodeIntel.attach(config)
            except DaemonError as exc:  # no daemon could start (state directory, disk): every tool says why
                logger.error("cannot attach to the workspace daemon [%s]: %s", exc.code.value, exc)
                yield exc
                return
            try:
                yield remote
            finally:
                await remote.aclose()
            return
        async with CodeIntelService.open(config, background=background) as service:
            yield service

    return _with_tools(
        GuardedStdioServer(
            "ided-code-intel",
            version=__version__,
            instructions=INSTRUCTIONS,
            lifespan=lifespan,
            log_level=config.logging.level,
        )
    )


def build_failed_server(error: DaemonError) -> MCPServer[Served]:
    """The same tools, each answering ``error`` (e.g. ``config_invalid``): the client learns why instead of
    seeing the process exit before ``initialize``."""

    @asynccontextmanager
    async def lifespan(_server: MCPServer[Served]) -> AsyncGenerator[Served]:
        yield error

    return _with_tools(
        GuardedStdioServer("ided-code-intel", version=__version__, instructions=str(error), lifespan=lifespan)
    )


def _with_tools(server: MCPServer[Served]) -> MCPServer[Served]:
    for tool in _TOOLS:
        title = tool.__name__.replace("_", " ").capitalize()
        server.add_tool(
            tool,
            title=title,
            description=inspect.cleandoc(tool.__doc__ or ""),
            annotations=_READ_ONLY.model_copy(update={"title": title}),
        )
    return server


async def serve_stdio(config: Config, *, attach: bool = False) -> None:
    await build_server(config, attach=attach).run_stdio_async()


async def serve_failed_stdio(error: DaemonError) -> None:
    """Serve MCP over stdio when the server cannot open (a bad configuration): every tool answers ``error``."""
    await build_failed_server(error).run_stdio_async()


class BearerTokenMiddleware:
    """ASGI middleware: HTTP requests without ``Authorization: Bearer <token>`` get 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if len(token) < 16:
            raise ValueError("the MCP HTTP token must be at least 16 characters")
        self._app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = b""
            for key, value in scope.get("headers", []):
                if key == b"authorization":
                    given = value
                    break
            if not hmac.compare_digest(given, self._expected):
                body = b'{"error": "unauthorized: send Authorization: Bearer <token> (see docs/mcp.md)"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="ided"'),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self._app(scope, receive, send)


def bind_loopback(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port`` (0 = any free port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


async def serve_http(
    config: Config,
    *,
    token: str,
    sock: socket.socket,
    on_ready: Callable[[str], None] | None = None,
    attach: bool = False,
) -> None:
    """Streamable HTTP on ``sock`` (bound to 127.0.0.1) at ``/mcp``, behind the bearer token."""
    import uvicorn

    server = build_server(config, attach=attach)
    app = BearerTokenMiddleware(server.streamable_http_app(host="127.0.0.1"), token)
    uv_config = uvicorn.Config(app, log_config=None, access_log=False, log_level=config.logging.level.lower())
    uv_server = uvicorn.Server(uv_config)
    host, port = sock.getsockname()[:2]
    url = f"http://{host}:{port}/mcp"
    logger.info("code-intel MCP server listening on %s", url)
    if on_ready is not None:
        on_ready(url)
    await uv_server.serve(sockets=[sock])
