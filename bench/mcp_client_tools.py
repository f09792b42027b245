"""What a client's MCP server costs the agents: ``daemon.service.pipeline.client_tools`` over a real stdio server.

Measures, with a tiny MCP server (one echo tool) written to a temp dir and spawned over stdio:
- connect: ``ClientMcpServers.ready()`` (spawn, MCP handshake, tools/list), N servers at once;
- a call through the LangChain wrapper (``BaseTool.ainvoke``, what the agents' toolbox runs) against
  the same call on the MCP SDK's ``Client`` directly: p50 / p95 over ``--calls`` calls;
- close: ``aclose()`` of all servers.

Usage: ``uv run --frozen python bench/mcp_client_tools.py [--servers 3] [--calls 200]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from daemon.service.pipeline.client_tools import ClientMcpServers, StdioServer

SERVER = '''
from mcp.server import MCPServer

server = MCPServer("echo")


@server.tool()
def echo(text: str) -> str:
    """The text, back."""
    return text


server.run()
'''


def quantiles(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
    return f"p50 {statistics.median(ms):.2f} ms, p95 {p95:.2f} ms"


async def main(servers: int, calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "echo_server.py"
        script.write_text(SERVER)
        specs = [StdioServer(name=f"echo{i}", command=sys.executable, args=(str(script),)) for i in range(servers)]
        lent = ClientMcpServers(specs)
        start = time.perf_counter()
        report = await lent.ready()
        connect_s = time.perf_counter() - start
        assert not report.failures, report.failures
        print(f"connect {servers} stdio server(s) at once: {connect_s:.2f} s ({len(lent.tools())} tools)")

        tool = lent.tools()[0]
        wrapped: list[float] = []
        for i in range(calls):
            t = time.perf_counter()
            await tool.ainvoke({"text": f"call {i}"})
            wrapped.append(time.perf_counter() - t)
        print(f"call through the LangChain tool ({tool.name}): {quantiles(wrapped)}")

        params = StdioServerParameters(command=sys.executable, args=[str(script)])
        async with Client(stdio_client(params)) as direct:
            plain: list[float] = []
            for i in range(calls):
                t = time.perf_counter()
                await direct.call_tool("echo", {"text": f"call {i}"})
                plain.append(time.perf_counter() - t)
        print(f"same call on mcp.Client directly: {quantiles(plain)}")

        start = time.perf_counter()
        await lent.aclose()
        print(f"close {servers} server(s): {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="MCP client tools: connect, call and close costs")
    parser.add_argument("--servers", type=int, default=3)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.servers, args.calls))
