"""The code-intel MCP server: a thin MCPServer (MCP SDK 2.x) over the ``Workspace`` port.

The tools are derived from the capability registry (``daemon.service.intel.capabilities``): one tool per
entry, its input schema from the entry's params model, its output schema from its result model, its
title, description and read-only hint from the entry. Each call validates the arguments, runs the
capability on the workspace and returns the result model (structured output plus its JSON as
text). The one
catch-all of this front: a ``DaemonError`` becomes a ``ToolError`` (an ``is_error`` result whose
text names the file/symbol/cause); anything else is turned into an error result by the SDK
and logged. The lifespan yields at once an ``OpeningWorkspace`` that opens the workspace in the
background — in process (index + language-server pool) or attached to the daemon (``--attach``) —
for stdio and for streamable HTTP alike, and closes it on exit: ``initialize`` never waits for the
daemon, the index or a language server; a tool call waits for the opening (except ``find_definition``
by name, answered meanwhile from a Tree-sitter scan: ``early_definitions``), and an opening that
failed answers every call with its coded error. The modules behind the workspace (index, language
servers, daemon client) are imported by that background opening, in a thread, not by this module.

In an untrusted workspace whose repository had settings left out or ships programs ided does not run,
the trust notice (``daemon.core.trust_notice``) ends the server's instructions and is added, once, to
the first tool answer (or error) of the session, naming how to trust.

Transports: ``serve_stdio(config)`` and ``serve_http(config, token=..., port=...)``, the latter
bound to 127.0.0.1 behind a bearer token (``BearerTokenMiddleware``: 401 without it).
"""

from __future__ import annotations

import asyncio
import hmac
import importlib
import inspect
import logging
import socket
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field
from pydantic.fields import FieldInfo
from starlette.types import ASGIApp, Receive, Scope, Send

from daemon import __version__
from daemon.config import Config
from daemon.core.ports import Workspace
from daemon.errors import DaemonError
from daemon.service.intel.capabilities import CAPABILITIES, DEFINITION
from daemon.service.intel.capability import Capability
from daemon.service.intel.trust_notice import trust_notice
from daemon.service.wire.daemon_or_here import use_daemon
from daemon.service.workspace.choice import workspace_for
from daemon.service.workspace.opening import OpeningWorkspace, WorkspaceOpener
from mcp_servers.code_intel.early_definitions import EarlyDefinitions
from mcp_servers.code_intel.stdio_guard import GuardedStdioServer

__all__ = [
    "TOOL_NAMES",
    "BearerTokenMiddleware",
    "build_failed_server",
    "build_server",
    "serve_failed_stdio",
    "serve_http",
    "serve_stdio",
    "workspace_opener",
]

logger = logging.getLogger(__name__)

Served = Workspace | DaemonError
"""What the tools work on: the workspace, or the error that kept it from opening (``build_failed_server``)."""
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


class _Once:
    """The trust notice, handed out the first time it is asked for (None after, or when there is none)."""

    def __init__(self, text: str | None) -> None:
        self._text = text

    def take(self) -> str | None:
        text, self._text = self._text, None
        return text


async def _call(
    ctx: Ctx, capability: Capability[Any, Any], arguments: dict[str, Any], early: EarlyDefinitions | None = None
) -> BaseModel:
    workspace = ctx.request_context.lifespan_context
    if isinstance(workspace, DaemonError):
        raise ToolError(str(workspace))
    try:
        params = capability.parse(arguments)
        if early is not None:
            answer = await early.answer(workspace, params)
            if answer is not None:
                return answer
        return await capability.run(workspace, params)
    except DaemonError as exc:
        raise ToolError(str(exc)) from exc


def tool_result(answer: BaseModel) -> CallToolResult:
    """The answer as the client gets it: the result model as structured content, and as text the same JSON
    without indentation or null fields (what a model reads: the SDK's default text is indented JSON with
    every null, about 1.7x the characters of a ``document_symbols`` answer)."""
    return CallToolResult(
        content=[TextContent(type="text", text=answer.model_dump_json(exclude_none=True))],
        structured_content=answer.model_dump(mode="json"),
    )


def _parameter(name: str, field: FieldInfo) -> inspect.Parameter:
    """The tool function's keyword parameter for one params field: its type, constraints and description."""
    annotation: Any = Annotated[(field.annotation, *field.metadata, Field(description=field.description))]
    default = inspect.Parameter.empty if field.is_required() else field.default
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def tool_function(
    capability: Capability[Any, Any], early: EarlyDefinitions | None = None, notice: _Once | None = None
) -> Callable[..., Awaitable[Any]]:
    """The capability as the function ``MCPServer.add_tool`` inspects: ``ctx`` and one parameter per params field.

    The SDK builds the tool's input schema from the signature and its output schema from the return
    annotation (the capability's result model, carried by ``Annotated[CallToolResult, ...]``), so both
    follow the registry entry; the tool answers ``tool_result``'s compact text beside the structured
    content. ``early``: how ``find_definition`` by name is answered while the workspace still opens
    (``early_definitions``). ``notice``: the trust notice, added to the first answer (or error) that takes it.
    """

    async def tool(ctx: Ctx, **arguments: Any) -> CallToolResult:
        try:
            result = tool_result(await _call(ctx, capability, arguments, early))
        except ToolError as exc:
            said = notice.take() if notice is not None else None
            if said is None:
                raise
            raise ToolError(f"{exc}\n\n{said}") from exc
        said = notice.take() if notice is not None else None
        if said is not None:
            result.content.append(TextContent(type="text", text=said))
        return result

    fields = capability.params.model_fields
    parameters = [
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Ctx),
        *(_parameter(name, field) for name, field in fields.items() if field.is_required()),
        *(_parameter(name, field) for name, field in fields.items() if not field.is_required()),
    ]
    tool.__name__ = tool.__qualname__ = capability.name
    tool.__doc__ = capability.description
    returns = Annotated[CallToolResult, capability.result]  # the output schema is the result model's
    tool.__signature__ = inspect.Signature(parameters, return_annotation=returns)  # type: ignore[attr-defined]
    tool.__annotations__ = {**{p.name: p.annotation for p in parameters}, "return": returns}
    return tool


TOOL_NAMES: tuple[str, ...] = tuple(c.name for c in CAPABILITIES)


def build_server(config: Config, *, background: bool = True, attach: bool = False) -> MCPServer[Served]:
    """An MCPServer with every code-intel tool; its lifespan opens and closes the service.

    ``attach``: the tools use the workspace daemon (one index and one set of language servers
    shared with every front) instead of a service of this process's own.
    """

    opener = workspace_opener(config, background=background, attach=attach)
    notice = trust_notice(config)

    @asynccontextmanager
    async def lifespan(_server: MCPServer[Served]) -> AsyncGenerator[Served]:
        workspace = OpeningWorkspace.start(opener)
        try:
            yield workspace
        finally:
            await workspace.aclose()

    return _with_tools(
        GuardedStdioServer(
            "ided-code-intel",
            version=__version__,
            instructions=INSTRUCTIONS if notice is None else f"{INSTRUCTIONS}\n\n{notice.message}",
            lifespan=lifespan,
            log_level=config.logging.level,
        ),
        early=EarlyDefinitions(config),
        notice=_Once(notice.message if notice is not None else None),
    )


def workspace_opener(config: Config, *, background: bool = True, attach: bool = False) -> WorkspaceOpener:
    """Opens the workspace this server serves: the daemon's (``attach``: ``daemon_or_here`` with
    ``daemon="start"``, started when none runs) or this process's own index and language servers. Its
    modules load in a thread, so the event loop keeps answering."""

    @asynccontextmanager
    async def open_here() -> AsyncGenerator[Workspace]:
        from daemon.service.workspace.local import LocalWorkspace

        async with LocalWorkspace.open(config, background=background) as local:
            yield local

    @asynccontextmanager
    async def open_workspace() -> AsyncGenerator[Workspace]:
        modules = "daemon.service.workspace.remote" if attach else "daemon.service.workspace.local"
        await asyncio.to_thread(importlib.import_module, modules)
        async with workspace_for(config, daemon=use_daemon(attach), client="mcp", local=open_here) as workspace:
            yield workspace

    return open_workspace


def build_failed_server(error: DaemonError) -> MCPServer[Served]:
    """The same tools, each answering ``error`` (e.g. ``config_invalid``): the client learns why instead of
    seeing the process exit before ``initialize``."""

    @asynccontextmanager
    async def lifespan(_server: MCPServer[Served]) -> AsyncGenerator[Served]:
        yield error

    return _with_tools(
        GuardedStdioServer("ided-code-intel", version=__version__, instructions=str(error), lifespan=lifespan)
    )


def _with_tools(
    server: MCPServer[Served], *, early: EarlyDefinitions | None = None, notice: _Once | None = None
) -> MCPServer[Served]:
    for capability in CAPABILITIES:
        server.add_tool(
            tool_function(capability, early if capability is DEFINITION else None, notice),
            name=capability.name,
            title=capability.title,
            description=capability.description,
            annotations=_READ_ONLY.model_copy(
                update={"title": capability.title, "read_only_hint": capability.read_only}
            ),
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
