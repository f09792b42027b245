"""Every capability of the registry (``daemon.service.intel.capabilities``) is exposed by every front.

One daemon on a real workspace with a real language server; through it: the daemon's own RPC
methods, the daemon-client transport of the ``Workspace`` port, the agents' LangChain tools, the
MCP server over stdio (the MCP SDK's client), the ACP front's ``_ided/intel/*`` extension methods over
stdio (the ACP SDK's client) and the LSP front's ``ided/*`` methods over stdio (the pytest-lsp
client). A registry entry that one front lacks fails here, and so does an entry with no example below
(adding a capability means adding its example).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from typing import Any, cast

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from pydantic import BaseModel

from daemon.acp.intel import ext_method_name
from daemon.config import load_config
from daemon.lsp.intel_wire import SERVED, lsp_field_names
from daemon.service.intel.agent_tools import code_intel_tools
from daemon.service.intel.capabilities import BY_NAME, CAPABILITIES
from daemon.service.wire.api import Methods
from daemon.service.wire.client import DaemonClient
from daemon.service.workspace.remote import DaemonWorkspace
from tests.e2e.acp_support import initialize, spawn_ided_acp
from tests.e2e.lsp_support import lsp_client
from tests.e2e.test_mcp_stdio import CALL_TIMEOUT, _env, call
from tests.intel_tools import copy_workspace, require_server

pytestmark = pytest.mark.e2e

EXAMPLES: dict[str, dict[str, Any]] = {
    "get_signature": {"symbol": "shapes.geometry.centroid"},
    "get_type": {"file": "app.py", "line": 9, "column": 5},
    "find_definition": {"symbol": "Reporter"},
    "get_references": {"symbol": "centroid"},
    "get_ast_node": {"file": "app.py", "line": 11, "column": 12},
    "document_symbols": {"file": "shapes/geometry.py"},
    "workspace_symbols": {"query": "centroid", "language": "python"},
    "call_hierarchy": {"symbol": "centroid", "direction": "incoming"},
    "diagnostics": {"file": "app.py"},
    "search_code": {"query": "centroid of points"},
    "search_docs": {"query": "shapes"},
    "index_status": {},
}
"""Arguments for each capability on the ``intel_python`` fixture."""

NO_MATCH = ("xyzzy plugh grault", "call frobnicate_quuxinator() on the points")
"""Queries every front must answer with ``matches: none``: nonsense, and a name defined only in an
ignored file (``build/``, written by the test) beside words the workspace does hold."""


def _lsp_calls(workspace: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """Capability name -> (LSP method, wire params) for every capability the LSP front serves itself."""
    app = {"textDocument": {"uri": (workspace / "app.py").as_uri()}, "position": {"line": 10, "character": 11}}
    return {
        "find_definition": ("ided/intel/definition", {"symbol": "Reporter"}),
        "get_references": ("ided/intel/references", {"symbol": "centroid", "includeDeclaration": True}),
        "get_signature": ("ided/intel/signature", {"symbol": "shapes.geometry.centroid"}),
        "get_type": (
            "ided/intel/type",
            {"textDocument": {"uri": (workspace / "app.py").as_uri()}, "position": {"line": 8, "character": 4}},
        ),
        "get_ast_node": ("ided/intel/astNode", app),
        "search_code": ("ided/index/search", {"query": "centroid of points", "kind": "code"}),
        "search_docs": ("ided/index/search", {"query": "shapes", "kind": "docs"}),
        "index_status": ("ided/index/status", {}),
    }


def test_every_capability_has_an_example_and_a_place_on_the_lsp_front() -> None:
    assert set(EXAMPLES) == set(BY_NAME)
    assert all((c in SERVED) is (c.lsp_elsewhere is None) for c in BY_NAME.values())
    calls = _lsp_calls(Path("/"))
    assert {c.name for c in SERVED} <= set(calls)
    assert all(calls[c.name][0] == c.lsp_method for c in SERVED)


def _check_lsp_answer(name: str, method: str, answer: Any) -> None:
    """An answer; a derived ``ided/intel/*`` one carries the capability's own fields and no others."""
    assert isinstance(answer, dict) and answer, (name, method, answer)
    if method == BY_NAME[name].lsp_method:
        keys = set(cast("dict[str, Any]", answer))
        assert keys <= lsp_field_names(BY_NAME[name])[1], (name, sorted(keys))


def _answer(capability_name: str, raw: Any) -> BaseModel:
    return BY_NAME[capability_name].result.model_validate(raw)


async def test_every_front_exposes_every_capability_over_one_daemon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    (workspace / "build").mkdir()
    (workspace / "build" / "generated.py").write_text("def frobnicate_quuxinator():\n    return 42\n")
    (workspace / ".gitignore").write_text("build/\n")
    state = tmp_path / "state"
    env = _env(state, tmp_path / "home")
    for key, value in env.items():
        monkeypatch.setenv(key, value)  # the daemon, the MCP server and the LSP server inherit it
    config = load_config(workspace, env=env)
    remote = await DaemonWorkspace.attach(config, client="cli", start=True)
    raw = await DaemonClient.attach(config, client="other", start=False)
    try:
        await raw.call(Methods.INDEX_REINDEX, None, wait_s=120)  # answers once the pass is done

        # the daemon's RPC methods, called as any client would
        for capability in CAPABILITIES:
            if capability.method is not None:
                _answer(capability.name, await raw.call(capability.method, EXAMPLES[capability.name]))

        # the daemon-client transport of the Workspace port
        for capability in CAPABILITIES:
            answer = await capability.run(remote, capability.parse(EXAMPLES[capability.name]))
            assert isinstance(answer, capability.result), capability.name

        # the agents' LangChain tools
        tools = {tool.name: tool for tool in code_intel_tools(remote)}
        assert list(tools) == [c.name for c in CAPABILITIES]
        for capability in CAPABILITIES:
            tool = tools[capability.name]
            assert tool.args_schema is capability.params and tool.description == capability.description
            answer = await asyncio.wait_for(tool.ainvoke(EXAMPLES[capability.name]), CALL_TIMEOUT)
            assert isinstance(answer, capability.result), (capability.name, answer)

        # the MCP server over stdio, attached to the same daemon
        params = StdioServerParameters(
            command=sys.executable,
            args=["-P", "-m", "daemon", "mcp", "-w", str(workspace)],
            env=env,
            cwd=str(workspace),
        )
        with (tmp_path / "mcp-stderr.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=CALL_TIMEOUT) as mcp:
                listed = {tool.name: tool for tool in (await mcp.list_tools()).tools}
                assert list(listed) == [c.name for c in CAPABILITIES]
                for capability in CAPABILITIES:
                    tool = listed[capability.name]
                    assert tool.title == capability.title
                    assert tool.annotations is not None and tool.annotations.read_only_hint is capability.read_only
                    assert set(tool.input_schema.get("properties", {})) == set(capability.params.model_fields)
                    _answer(capability.name, await call(mcp, capability.name, **EXAMPLES[capability.name]))
                assert (await call(mcp, "search_code", **EXAMPLES["search_code"]))["matches"] != "none"
                for query in NO_MATCH:
                    assert (await call(mcp, "search_code", query=query))["matches"] == "none", query

        # the ACP front's extension methods (`_ided/intel/<name>`), ided acp attached to the same daemon
        acp_env = {**env, "IDED_ACP__ATTACH_DAEMON": "true", "IDED_PIPELINE__RESILIENCE__CACHE": "false"}
        async with spawn_ided_acp(tmp_path, acp_env, cwd=workspace) as agent:
            await initialize(agent.conn)
            sid = (await asyncio.wait_for(agent.conn.new_session(cwd=str(workspace)), CALL_TIMEOUT)).session_id
            for capability in CAPABILITIES:
                params = {"sessionId": sid, **EXAMPLES[capability.name]}
                raw_answer = await asyncio.wait_for(
                    agent.conn.ext_method(ext_method_name(capability), params), CALL_TIMEOUT
                )
                _answer(capability.name, raw_answer)
            found = await agent.conn.ext_method("ided/intel/search_code", {"sessionId": sid, **EXAMPLES["search_code"]})
            assert found["matches"] != "none"
            for query in NO_MATCH:
                found = await agent.conn.ext_method("ided/intel/search_code", {"sessionId": sid, "query": query})
                assert found["matches"] == "none", query

        # the LSP front over stdio, attached to the same daemon
        async with lsp_client(workspace, state) as lsp:
            for name, (method, wire) in _lsp_calls(workspace).items():
                answer = await lsp.ided(method, wire)
                _check_lsp_answer(name, method, answer)
                if name == "get_type":  # `first` on app.py line 9, at the client's 0-based position
                    assert answer["type"] == "Point" and answer["typeDefinitions"][0]["name"] == "Point", answer
            for query in NO_MATCH:
                answer = await lsp.ided("ided/index/search", {"query": query, "kind": "code"})
                assert answer["matches"] == "none", (query, answer)
    finally:
        if not raw.closed:  # the LSP client stops the daemon when it exits
            with contextlib.suppress(ConnectionError):
                await raw.call(Methods.SHUTDOWN, None)
            await asyncio.wait_for(raw.wait_closed(), 30)
        await raw.close()
        await remote.aclose()
