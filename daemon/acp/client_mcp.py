"""The MCP servers an ACP client passes in ``session/new`` / ``session/load``, lent to the session's runs.

Protocol code only: ACP's server descriptions become the service layer's specs
(``daemon.service.pipeline.client_tools``), which connects them and wraps their tools for the agents.
stdio servers are spawned in the session's folder; ``http`` servers are reached with their headers;
``sse`` and ``acp`` servers are not supported (``mcpCapabilities`` says so) and are reported like a
server that failed to start. Failures reach the client as one agent message naming each server and
the cause, sent once connecting has ended; the session works without those servers.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from acp.schema import AcpMcpServer, HttpMcpServer, McpServerStdio, SseMcpServer

from daemon.service.pipeline.client_tools import (
    ClientMcpServers,
    ConnectReport,
    HttpServer,
    McpServerSpec,
    ServerFailure,
    StdioServer,
)

__all__ = ["AcpMcpServerSpec", "failure_text", "lend_servers"]

logger = logging.getLogger(__name__)

AcpMcpServerSpec = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio


def _spec(server: AcpMcpServerSpec, cwd: Path) -> McpServerSpec | ServerFailure:
    if isinstance(server, McpServerStdio):
        return StdioServer(
            name=server.name,
            command=server.command,
            args=tuple(server.args),
            env={e.name: e.value for e in server.env},
            cwd=cwd,
        )
    if isinstance(server, HttpMcpServer):
        return HttpServer(name=server.name, url=server.url, headers={h.name: h.value for h in server.headers})
    transport = "sse" if isinstance(server, SseMcpServer) else "acp"
    return ServerFailure(
        name=server.name,
        reason=f"MCP server '{server.name}': transport '{transport}' is not supported by ided (stdio and http are)",
    )


def lend_servers(servers: Sequence[AcpMcpServerSpec], cwd: Path) -> tuple[ClientMcpServers, tuple[ServerFailure, ...]]:
    """The session's servers, connecting in the background, and those refused outright."""
    specs: list[McpServerSpec] = []
    refused: list[ServerFailure] = []
    for server in servers:
        spec = _spec(server, cwd)
        if isinstance(spec, ServerFailure):
            logger.warning("%s", spec.reason)
            refused.append(spec)
        else:
            specs.append(spec)
    lent = ClientMcpServers(specs)
    lent.start()
    return lent, tuple(refused)


def failure_text(report: ConnectReport, refused: Sequence[ServerFailure] = ()) -> str | None:
    """The message for the client when some servers are left out; None when all connected."""
    failures = [*refused, *report.failures]
    if not failures:
        return None
    lines = [f"- {f.reason}" for f in failures]
    offered = [f"{name} ({len(tools)} tools)" for name, tools in report.tools.items()]
    tail = f"Tools offered from: {', '.join(offered)}." if offered else "No MCP tools are offered to the agents."
    return (
        "Some MCP servers of this session could not be used; the session works without them:\n"
        + "\n".join(lines)
        + f"\n{tail}\n"
    )
