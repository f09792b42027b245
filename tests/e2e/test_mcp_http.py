"""``ided mcp --http`` driven by the MCP SDK's streamable-HTTP client: bound to 127.0.0.1, a bearer
token required (401 without it), real answers from the TypeScript and Python language servers."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.intel_tools import SEARCH_PATH, copy_workspace, require_server

pytestmark = pytest.mark.e2e

TOKEN = "test-token-0123456789abcdef"
START_TIMEOUT = 60.0
CALL_TIMEOUT = 90.0


@asynccontextmanager
async def http_server(workspace: Path, tmp_path: Path) -> AsyncGenerator[tuple[str, Path]]:
    """``python -m daemon mcp --http --port 0``; yields (url, stderr log) once it listens; stops it with SIGTERM."""
    env = {
        **os.environ,
        "IDED_MCP_TOKEN": TOKEN,
        "IDED_STATE_DIR": str(tmp_path / "state"),
        "IDED_EMBEDDING__ENABLED": "false",
        "IDED_INTEL__SEARCH_PATH": json.dumps(list(SEARCH_PATH)),
        "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
    }
    log = tmp_path / "mcp-http.log"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *["-P", "-m", "daemon", "mcp", "--standalone", "-w", str(workspace), "--http", "--port", "0"],
        env=env,
        cwd=str(workspace),  # started in the workspace, as an agent host does: inside the default roots
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    lines: list[str] = []

    async def read_url() -> str:
        assert process.stderr is not None
        while line := (await process.stderr.readline()).decode():
            lines.append(line)
            if "listening on " in line:
                return line.split("listening on ", 1)[1].split()[0]
        raise AssertionError("the server exited before listening: " + "".join(lines))

    try:
        url = await asyncio.wait_for(read_url(), START_TIMEOUT)

        async def drain() -> None:
            assert process.stderr is not None
            while line := (await process.stderr.readline()).decode():
                lines.append(line)

        drainer = asyncio.create_task(drain())
        yield url, log
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 30) == 0
        await asyncio.wait_for(drainer, 10)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        log.write_text("".join(lines))


def container(reference: dict[str, Any], key: str = "qualified_name") -> str | None:
    """A field of a reference's containing scope (None at module level)."""
    scope: dict[str, Any] | None = reference.get("container")
    return None if scope is None else str(scope[key])


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await asyncio.wait_for(client.call_tool(tool, arguments), CALL_TIMEOUT)
    text = "".join(getattr(block, "text", "") for block in result.content)
    assert not result.is_error, f"{tool} failed: {text}"
    assert result.structured_content is not None
    return result.structured_content


async def test_http_server_listens_on_loopback_and_refuses_requests_without_the_bearer_token(tmp_path: Path) -> None:
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    async with http_server(workspace, tmp_path) as (url, log):
        assert urlparse(url).hostname == "127.0.0.1"
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        headers = {"accept": "application/json, text/event-stream"}
        async with httpx.AsyncClient(timeout=30) as raw:
            missing = await raw.post(url, json=body, headers=headers)
            wrong = await raw.post(url, json=body, headers={**headers, "authorization": "Bearer not-the-token"})
        assert missing.status_code == 401
        assert wrong.status_code == 401
        assert "Bearer" in missing.headers["www-authenticate"]

        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as http_client,
            Client(streamable_http_client(url, http_client=http_client)) as client,
        ):
            node = await call(client, "get_ast_node", file="shapes/geometry.py", line=17, column=16)
            assert node["enclosing_function"]["qualified_name"] == "Point.distance_to"
            assert node["enclosing_class"]["name"] == "Point"
    assert log.read_text().rstrip().endswith("ided mcp: stopped")


async def test_http_server_answers_typescript_definitions_and_references_across_files(tmp_path: Path) -> None:
    require_server("typescript")
    workspace = copy_workspace("intel_typescript", tmp_path)
    async with (
        http_server(workspace, tmp_path) as (url, _log),
        create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as http_client,
        Client(streamable_http_client(url, http_client=http_client)) as client,
    ):
        # `priceWithTax(net, taxRate)` in checkout.ts is defined in cart.ts.
        definition = await call(client, "find_definition", file="src/checkout.ts", line=6, column=10)
        (found,) = definition["definitions"]
        assert found["location"]["path"] == "src/cart.ts"
        assert found["location"]["range"]["start_line"] == 9
        assert "Math.round" in found["source"]

        references = await call(client, "get_references", symbol="Cart.total")
        sites = {(r["location"]["path"], container(r, "name")) for r in references["references"]}
        assert ("src/checkout.ts", "checkout") in sites
        assert ("src/checkout.ts", "receipt") in sites

        signature = await call(client, "get_signature", symbol="priceWithTax")
        assert "priceWithTax(net: number, rate: number): number" in signature["signature"]
