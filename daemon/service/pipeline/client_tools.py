"""MCP servers a client lends a session, connected, and their tools as LangChain tools for the agents.

An IDE passes MCP servers with a session (ACP ``session/new`` ``mcpServers``): a command to spawn
(stdio) or a URL (streamable HTTP). ``ClientMcpServers`` connects them all at once with the MCP SDK's
``mcp.Client``, each under ``connect_timeout`` (a server that does not start, exits, or does not
speak MCP in time is reported as a ``ServerFailure`` and left out: the session works without it),
lists their tools and wraps each one as a LangChain ``BaseTool``:

- name ``mcp__<server>__<tool>`` (characters outside ``[A-Za-z0-9_-]`` become ``_``; at most 64
  characters, the limit model providers put on tool names), so a client's tool never shadows one of
  ided's own tools nor another server's;
- the tool's MCP input JSON schema as its args schema (the server validates the arguments);
- the description prefixed with the server's name; kind ``read`` for tools annotated
  ``readOnlyHint``, ``fetch`` for other ``openWorldHint`` tools, else ``other``.

Client tools are offered to every agent (the workflows' ``mcp_tools`` lists filter ided's own
code-intel tools only); in read-only runs only the tools the server marks ``readOnlyHint`` are
offered. A call runs under ``call_timeout``; a failed call (``isError``, a dead server, a timeout)
raises ``McpServerError``, which the agent receives as the tool's error text.

Each server's connection lives in its own task (the SDK's transports are anyio task groups that must
be entered and left by one task); ``aclose`` ends them all (stdio servers get their stdin closed,
then are terminated), bounded by ``CLOSE_TIMEOUT_S``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import re
import sys
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, cast

import httpx2
from langchain_core.tools import BaseTool, StructuredTool
from mcp import Client
from mcp.client._transport import TransportStreams
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import (
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    Implementation,
    ResourceLink,
    TextContent,
    TextResourceContents,
    Tool,
)

from daemon.errors import McpServerError
from daemon.orchestration.agents import TOOL_KIND_KEY

__all__ = [
    "CALL_TIMEOUT_S",
    "CLOSE_TIMEOUT_S",
    "CONNECT_TIMEOUT_S",
    "MCP_SERVER_KEY",
    "READ_ONLY_KEY",
    "ClientMcpServers",
    "ConnectReport",
    "HttpServer",
    "McpServerSpec",
    "ServerFailure",
    "StdioServer",
    "tool_name",
]

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 20.0
"""Upper bound for starting one server, the MCP handshake and listing its tools (a Python MCP server
alone needs ~1.5 s to import the SDK on these machines)."""
CALL_TIMEOUT_S = 110.0
"""Upper bound for one tool call (below the agents' own 120 s bound, so the server's error wins)."""
CLOSE_TIMEOUT_S = 5.0
"""How long closing one server may take before its task is cancelled."""
MCP_SERVER_KEY = "ided_mcp_server"
"""``BaseTool.metadata`` key naming the client MCP server a tool comes from."""
READ_ONLY_KEY = "ided_read_only"
"""``BaseTool.metadata`` key: the server annotates the tool ``readOnlyHint``."""

_NAME_LIMIT = 64
_TOOL_PAGES = 20
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True, kw_only=True)
class StdioServer:
    """A server to spawn; it speaks MCP on its stdin/stdout."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict[str, str])
    """Merged over the MCP SDK's safe default environment (PATH, HOME, ...)."""
    cwd: Path | None = None


@dataclass(frozen=True, kw_only=True)
class HttpServer:
    """A server at a streamable-HTTP endpoint."""

    name: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict[str, str])


McpServerSpec = StdioServer | HttpServer


@dataclass(frozen=True, kw_only=True)
class ServerFailure:
    name: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class ConnectReport:
    """What connecting the servers gave: tool names per connected server, and the failures."""

    tools: Mapping[str, tuple[str, ...]]
    failures: tuple[ServerFailure, ...]


def tool_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>`` with unsafe characters replaced, cut to 64 characters with a hash."""
    name = f"mcp__{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"
    if len(name) <= _NAME_LIMIT:
        return name
    digest = hashlib.sha1(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: _NAME_LIMIT - 9]}_{digest}"


def _args_schema(tool: Tool) -> dict[str, Any]:
    schema = dict(tool.input_schema)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    schema.pop("title", None)
    return schema


def _result_text(result: CallToolResult) -> str:
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent):
            parts.append(f"[image {block.mime_type}, {len(block.data)} base64 chars]")
        elif isinstance(block, EmbeddedResource):
            resource = block.resource
            text = resource.text if isinstance(resource, TextResourceContents) else "[binary]"
            parts.append(f"[resource {resource.uri}]\n{text}")
        elif isinstance(block, ResourceLink):
            parts.append(f"[link {block.uri}] {block.name}")
        else:
            parts.append(f"[{block.type} content]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    return "\n".join(parts)


def _innermost(exc: BaseException) -> BaseException:
    """The first leaf of the SDK's (anyio's) exception groups."""
    inner = cast("tuple[BaseException, ...]", getattr(exc, "exceptions", ()))
    grouped = issubclass(type(exc), BaseExceptionGroup) and bool(inner)
    return _innermost(inner[0]) if grouped else exc


def _describe(exc: BaseException) -> str:
    """A readable cause: the innermost error's type and text."""
    leaf: BaseException = _innermost(exc)
    text = str(leaf).strip()
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__


class _Connection:
    """One server: a task that enters the SDK client, lists the tools, and holds it until closed."""

    def __init__(self, spec: McpServerSpec, *, call_timeout: float, errlog: TextIO) -> None:
        self.spec = spec
        self._call_timeout = call_timeout
        self._errlog = errlog
        self._client: Client | None = None
        self._ready: asyncio.Future[list[Tool]] = asyncio.get_running_loop().create_future()
        self._closing = asyncio.Event()
        self._held = False
        self._task = asyncio.create_task(self._own(), name=f"mcp server {spec.name}")

    def _transport(self) -> AbstractAsyncContextManager[TransportStreams]:
        spec = self.spec
        if isinstance(spec, StdioServer):
            params = StdioServerParameters(
                command=spec.command,
                args=list(spec.args),
                env=dict(spec.env) or None,
                cwd=str(spec.cwd) if spec.cwd is not None else None,
            )
            return stdio_client(params, errlog=self._errlog)
        http = httpx2.AsyncClient(headers=dict(spec.headers), timeout=httpx2.Timeout(30.0, read=300.0))
        return _with_http_client(streamable_http_client(spec.url, http_client=http), http)

    def _settle(self, tools: list[Tool] | None = None, error: BaseException | None = None) -> None:
        if self._ready.done():
            return
        if error is not None:
            self._ready.set_exception(error)
        else:
            self._ready.set_result(tools or [])

    async def _own(self) -> None:
        try:
            async with Client(
                self._transport(),
                read_timeout_seconds=self._call_timeout,
                client_info=Implementation(name="ided", version="0"),
            ) as client:
                tools: list[Tool] = []
                cursor: str | None = None
                for _ in range(_TOOL_PAGES):
                    page = await client.list_tools(cursor=cursor)
                    tools += page.tools
                    cursor = page.next_cursor
                    if not cursor:
                        break
                self._client = client
                self._held = True
                self._settle(tools)
                await self._closing.wait()
        except Exception as exc:  # the SDK's transports fail in many ways; each one is this server's failure
            if self._ready.done():
                logger.warning("MCP server '%s' stopped: %s", self.spec.name, _describe(exc))
            self._settle(error=exc)
        finally:
            self._client = None
            self._held = False
            self._settle(error=McpServerError(f"MCP server '{self.spec.name}' ended before it answered"))

    async def connect(self, limit_s: float) -> list[Tool]:
        try:
            return await asyncio.wait_for(asyncio.shield(self._ready), limit_s)
        except TimeoutError:
            self._ready.cancel()  # nobody waits for it any more
            await self.close()
            raise McpServerError(
                f"MCP server '{self.spec.name}' did not start and list its tools within {limit_s:g}s"
            ) from None
        except McpServerError:
            await self.close()
            raise
        except Exception as exc:
            await self.close()
            raise McpServerError(
                f"MCP server '{self.spec.name}' could not be connected: {_describe(exc)}", cause=exc
            ) from exc

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        client = self._client
        name = self.spec.name
        if client is None:
            raise McpServerError(f"MCP server '{name}' is not connected (it stopped or was closed)")
        try:
            result = await asyncio.wait_for(client.call_tool(tool, arguments), self._call_timeout)
        except TimeoutError:
            raise McpServerError(
                f"MCP tool '{tool}' of server '{name}' did not answer within {self._call_timeout:g}s"
            ) from None
        except Exception as exc:  # a dead server, a protocol error: the agent sees the cause
            raise McpServerError(f"MCP tool '{tool}' of server '{name}' failed: {_describe(exc)}", cause=exc) from exc
        text = _result_text(result)
        if result.is_error:
            raise McpServerError(f"MCP tool '{tool}' of server '{name}' answered an error: {text or '(no text)'}")
        return text

    async def close(self) -> None:
        """Leave the client (stdio: stdin closed, then the process terminated); a handshake still in
        progress is cancelled at once."""
        self._closing.set()
        if self._task.done():
            return
        if not self._held:
            self._task.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), CLOSE_TIMEOUT_S)
        except TimeoutError:
            logger.warning("MCP server '%s' did not close within %gs; cancelled", self.spec.name, CLOSE_TIMEOUT_S)
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # our caller is being cancelled, not just the server's task


@contextlib.asynccontextmanager
async def _with_http_client(
    transport: AbstractAsyncContextManager[TransportStreams], http: httpx2.AsyncClient
) -> AsyncGenerator[TransportStreams]:
    """The streamable-HTTP transport over a client we configured (headers), closed with it."""
    async with http, transport as streams:
        yield streams


def _kind(tool: Tool) -> str:
    hints = tool.annotations
    if hints is not None and hints.read_only_hint:
        return "read"
    if hints is not None and hints.open_world_hint:
        return "fetch"
    return "other"


def _as_langchain(connection: _Connection, tool: Tool, name: str) -> BaseTool:
    server = connection.spec.name

    async def call(**arguments: Any) -> str:
        return await connection.call(tool.name, arguments)

    description = tool.description or tool.title or tool.name
    read_only = bool(tool.annotations is not None and tool.annotations.read_only_hint)
    return StructuredTool(
        name=name,
        description=f"[MCP server '{server}', tool '{tool.name}'] {description}",
        args_schema=_args_schema(tool),
        coroutine=call,
        metadata={TOOL_KIND_KEY: _kind(tool), MCP_SERVER_KEY: server, READ_ONLY_KEY: read_only},
    )


class ClientMcpServers:
    """The MCP servers of one session: ``start`` connects them in the background, ``ready`` waits for
    that (each server bounded by ``connect_timeout``), ``tools`` gives the agents' tools, ``aclose``
    ends every server."""

    def __init__(
        self,
        specs: Sequence[McpServerSpec],
        *,
        connect_timeout: float = CONNECT_TIMEOUT_S,
        call_timeout: float = CALL_TIMEOUT_S,
        errlog: TextIO | None = None,
    ) -> None:
        self.specs = tuple(specs)
        self._connect_timeout = connect_timeout
        self._call_timeout = call_timeout
        self._errlog = errlog or sys.stderr
        self._connections: list[_Connection] = []
        self._tools: list[BaseTool] = []
        self._connecting: asyncio.Task[ConnectReport] | None = None
        self._closed = False

    def start(self) -> None:
        """Begin connecting (idempotent); ``ready`` waits for the outcome."""
        if self._connecting is None and not self._closed:
            self._connecting = asyncio.create_task(self._connect_all(), name="mcp servers connect")

    async def ready(self) -> ConnectReport:
        """The connection outcome (starts connecting when ``start`` was not called)."""
        self.start()
        if self._connecting is None:  # closed before it started
            return ConnectReport(tools={}, failures=())
        return await asyncio.shield(self._connecting)

    async def _connect_all(self) -> ConnectReport:
        connections = [_Connection(spec, call_timeout=self._call_timeout, errlog=self._errlog) for spec in self.specs]
        self._connections = connections
        results = await asyncio.gather(*(c.connect(self._connect_timeout) for c in connections), return_exceptions=True)
        tools: dict[str, tuple[str, ...]] = {}
        failures: list[ServerFailure] = []
        taken: set[str] = set()
        for connection, result in zip(connections, results, strict=True):
            name = connection.spec.name
            if isinstance(result, BaseException):
                reason = result.message if isinstance(result, McpServerError) else _describe(result)
                logger.warning("%s", reason)
                failures.append(ServerFailure(name=name, reason=reason))
                continue
            names: list[str] = []
            for tool in result:
                wrapped = tool_name(name, tool.name)
                suffix = 2
                while wrapped in taken:
                    wrapped = tool_name(f"{name}_{suffix}", tool.name)
                    suffix += 1
                taken.add(wrapped)
                self._tools.append(_as_langchain(connection, tool, wrapped))
                names.append(wrapped)
            tools[name] = tuple(names)
            logger.info("MCP server '%s' connected: %d tool(s)", name, len(names))
        return ConnectReport(tools=tools, failures=tuple(failures))

    def tools(self, *, read_only: bool = False) -> tuple[BaseTool, ...]:
        """The connected servers' tools; ``read_only``: only those annotated ``readOnlyHint``."""
        if read_only:
            return tuple(t for t in self._tools if (t.metadata or {}).get(READ_ONLY_KEY))
        return tuple(self._tools)

    async def aclose(self) -> None:
        """End every server (idempotent)."""
        self._closed = True
        if self._connecting is not None and not self._connecting.done():
            self._connecting.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._connecting
        await asyncio.gather(*(c.close() for c in self._connections), return_exceptions=True)
        self._connections = []
        self._tools = []
