"""``ided mcp`` over stdio, driven by the MCP SDK's own stdio client, on fixture workspaces with
real language servers: answers across files, bad input, crash recovery and the not-ready answer."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcp_servers.code_intel.server import TOOL_NAMES
from tests.intel_tools import SEARCH_PATH, copy_workspace, require_server

pytestmark = pytest.mark.e2e

CALL_TIMEOUT = 90.0


def _env(state: Path, home: Path, **intel: Any) -> dict[str, str]:
    env = {
        "IDED_STATE_DIR": str(state),
        "IDED_EMBEDDING__ENABLED": "false",
        "IDED_INTEL__SEARCH_PATH": json.dumps(list(SEARCH_PATH)),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "HF_HUB_OFFLINE": "1",
    }
    for key, value in intel.items():
        env[f"IDED_INTEL__{key.upper()}"] = json.dumps(value)
    return env


@asynccontextmanager
async def mcp_session(workspace: Path, tmp_path: Path, **intel: Any) -> AsyncGenerator[tuple[Client, Path]]:
    """``python -m daemon mcp -w WORKSPACE`` behind the SDK's stdio client; yields (client, stderr log)."""
    errlog_path = tmp_path / "mcp-stderr.log"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-P", "-m", "daemon", "mcp", "--standalone", "-w", str(workspace)],
        env=_env(tmp_path / "state", tmp_path / "home", **intel),
        cwd=str(workspace),
    )
    with errlog_path.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=CALL_TIMEOUT) as client:
            yield client, errlog_path


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


def without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in cast("dict[str, Any]", value).items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in cast("list[Any]", value)]
    return value


async def call_error(client: Client, tool: str, **arguments: Any) -> str:
    result = await asyncio.wait_for(client.call_tool(tool, arguments), CALL_TIMEOUT)
    assert result.is_error, f"{tool} unexpectedly succeeded: {result.structured_content}"
    return "".join(getattr(block, "text", "") for block in result.content)


async def test_stdio_server_answers_definitions_references_signatures_and_ast_nodes_across_python_files(
    tmp_path: Path,
) -> None:
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    async with mcp_session(workspace, tmp_path) as (client, errlog):
        tools = await client.list_tools()
        assert {t.name for t in tools.tools} == set(TOOL_NAMES)
        assert all(t.annotations is not None and t.annotations.read_only_hint for t in tools.tools)
        assert all(t.title and t.title[0].isupper() for t in tools.tools)
        assert all(t.description and "\n " not in t.description for t in tools.tools)  # dedented

        # A use in app.py resolves to the method defined in another file.
        definition = await call(client, "find_definition", file="app.py", line=10, column=17)
        (found,) = definition["definitions"]
        assert found["location"]["path"] == "shapes/geometry.py"
        assert found["location"]["range"]["start_line"] == 15
        assert "return math.hypot" in found["source"]

        references = await call(client, "get_references", symbol="Point.distance_to")
        sites = {(r["location"]["path"], r["location"]["range"]["start_line"]) for r in references["references"]}
        assert {("app.py", 10), ("shapes/report.py", 15), ("shapes/geometry.py", 15)} <= sites
        containers = {r["location"]["path"]: container(r) for r in references["references"]}
        assert containers["app.py"] == "main"
        assert containers["shapes/report.py"] == "spread"

        signature = await call(client, "get_signature", symbol="centroid")
        assert signature["source"] == "hover"
        assert "points: list[Point]" in signature["signature"]
        assert "-> Point" in signature["signature"]
        assert "arithmetic mean" in (signature["documentation"] or "")

        node = await call(client, "get_ast_node", file="shapes/report.py", line=26, column=18)
        assert node["node"]["type"] == "identifier"
        assert node["node"]["text"] == "centroid"
        assert node["enclosing_function"]["qualified_name"] == "Reporter.render"
        assert node["enclosing_class"]["name"] == "Reporter"
        assert any(a["type"] == "call" for a in node["ancestors"])

        # What a model reads is the structured answer as compact JSON: no indentation, no null fields.
        outline = await asyncio.wait_for(
            client.call_tool("document_symbols", {"file": "shapes/geometry.py"}), CALL_TIMEOUT
        )
        text = "".join(getattr(block, "text", "") for block in outline.content)
        assert outline.structured_content is not None and outline.structured_content["symbols"]
        assert json.loads(text) == without_nulls(outline.structured_content)
        assert text == json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)

        # Bad input is a tool error that names the problem; the server keeps serving.
        assert "outside the workspace" in await call_error(client, "get_ast_node", file="../../etc/passwd", line=1)
        assert "was not found" in await call_error(client, "find_definition", symbol="NoSuchThing.method")
        assert "outside" in await call_error(client, "find_definition", file="app.py", line=999, column=1)
        status = await call(client, "index_status")
        assert any(s["state"] == "ready" for s in status["servers"])
    assert errlog.read_text().rstrip().endswith("ided mcp: stopped")


async def test_stdio_server_recovers_when_the_language_server_is_killed_mid_session(tmp_path: Path) -> None:
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    async with mcp_session(workspace, tmp_path) as (client, _errlog):
        # by position, so the language server answers (a name is answered from the index while it starts)
        first = await call(client, "find_definition", file="app.py", line=11, column=12)
        assert first["definitions"][0]["location"]["path"] == "shapes/report.py"
        assert first["answered_by"] == "language_server"
        status = await call(client, "index_status")
        (python,) = [s for s in status["servers"] if "python" in s["languages"]]
        assert python["pid"] is not None
        os.killpg(python["pid"], signal.SIGKILL)  # the server's process group: its wrapper and node alike

        again = await call(client, "get_references", symbol="centroid")
        assert {r["location"]["path"] for r in again["references"]} >= {"shapes/report.py", "shapes/geometry.py"}
        status = await call(client, "index_status")
        (python,) = [s for s in status["servers"] if "python" in s["languages"]]
        assert python["restarts"] == 1
        assert python["pid"] not in (None, first)


async def test_stdio_server_answers_not_ready_instead_of_an_empty_result_while_the_server_starts(
    tmp_path: Path,
) -> None:
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    async with mcp_session(workspace, tmp_path, ready_wait_seconds=0, prestart=False) as (client, _errlog):
        message = await call_error(client, "get_references", symbol="centroid")
        assert "not ready" in message
        assert "starting" in message


async def test_ided_mcp_serves_a_folder_named_with_w_that_ided_run_accepts(tmp_path: Path) -> None:
    # neither under the home folder nor the folder it is started in: `ided run -w DIR` takes it, so does `ided mcp`
    workspace = copy_workspace("intel_python", tmp_path)
    launch = tmp_path / "launch"
    launch.mkdir()
    env = {k: v for k, v in _env(tmp_path / "state", tmp_path / "home").items() if k != "IDED_ROOTS__ALLOWED"}
    env["PATH"] = os.environ.get("PATH", "")
    assert not workspace.resolve().is_relative_to(Path.home().resolve())
    planned = await asyncio.create_subprocess_exec(
        sys.executable, "-P", "-m", "daemon", "run", "Add a multiply function", "--dry-run", "-w", str(workspace),
        cwd=launch, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, dry_err = await asyncio.wait_for(planned.communicate(), CALL_TIMEOUT)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-P", "-m", "daemon", "mcp", "--standalone", "-w", str(workspace)],
        env=env,
        cwd=str(launch),
    )
    with (tmp_path / "mcp-stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=CALL_TIMEOUT) as client:
            status = await call(client, "index_status")
    assert planned.returncode == 0, dry_err.decode()
    assert status["workspace"] == str(workspace.resolve())
