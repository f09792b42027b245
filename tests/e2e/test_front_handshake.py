"""The early ``initialize`` answer of ``ided lsp`` and ``ided acp`` over real stdio keeps the fronts' contract.

- The early answer is the one pygls / the ACP SDK give (the same process with ``--late-handshake``
  answers only once loaded), for the params that change it.
- A configuration that does not load reaches the client over the protocol: the LSP shows it and
  refuses requests with it, the ACP agent answers ``session/new`` with it.
- Global options still apply on the direct path (``--set state_dir=``), and ``--help`` still goes
  through typer.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.lsp_support import WAIT_S, copy_fixture
from tests.e2e.test_lsp_transport_guard import RawPeer, frame

pytestmark = pytest.mark.e2e

BAD_KEY = "index.no_such_key"


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("IDED_", "XDG_"))}
    return env | {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
        "IDED_STATE_DIR": str(tmp_path / "state"),
        "IDED_EMBEDDING__ENABLED": "false",
        "IDED_ACP__ATTACH_DAEMON": "false",
        "IDED_ROOTS__ALLOWED": json.dumps([str(tmp_path)]),
        "HF_HUB_OFFLINE": "1",
    }


@asynccontextmanager
async def _front(tmp_path: Path, *args: str) -> AsyncGenerator[asyncio.subprocess.Process]:
    workspace = tmp_path / "ws"
    if not workspace.exists():
        copy_fixture(workspace)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-P", *args, cwd=str(workspace), env=_env(tmp_path),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        yield process
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), WAIT_S)
        except TimeoutError:
            process.kill()
            await process.wait()


async def _acp_exchange(process: asyncio.subprocess.Process, message: dict[str, Any]) -> dict[str, Any]:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    await process.stdin.drain()
    while True:
        reply: dict[str, Any] = json.loads(await asyncio.wait_for(process.stdout.readline(), WAIT_S))
        if reply.get("id") == message["id"] and "method" not in reply:
            return reply


LSP_PARAMS: list[dict[str, Any]] = [
    {"capabilities": {}},
    {"processId": None, "rootUri": None, "capabilities": {"general": {"positionEncodings": ["utf-32", "utf-8"]}}},
    {"capabilities": {"general": {"positionEncodings": ["utf-7"]}}, "initializationOptions": {"standardIntel": True}},
    {"capabilities": {"textDocument": {"hover": {"contentFormat": ["markdown"]}}}, "trace": "off", "locale": "en"},
    {  # what Neovim 0.11 and VS Code declare: pygls then answers willSave/willSaveWaitUntil false
        "capabilities": {
            "textDocument": {"synchronization": {"willSave": True, "willSaveWaitUntil": True, "didSave": True}},
            "general": {"positionEncodings": ["utf-8", "utf-16", "utf-32"]},
        }
    },
    {"capabilities": {"textDocument": {"synchronization": {"willSave": False}}}},
]


@pytest.mark.parametrize("params", LSP_PARAMS, ids=range(len(LSP_PARAMS)))
async def test_the_lsp_early_initialize_answer_is_the_one_pygls_gives(tmp_path: Path, params: dict[str, Any]) -> None:
    request = frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    answers: list[dict[str, Any]] = []
    for args in (["-m", "daemon", "lsp"], ["-m", "daemon.lsp", "--late-handshake"]):
        async with _front(tmp_path, *args) as process:
            peer = RawPeer.over_stdio(process)
            answers.append(await peer.reply_to(request))
            # the replayed initialize was not answered twice: the next answer is the shutdown's
            assert await peer.reply_to(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})) == {
                "jsonrpc": "2.0",
                "id": 2,
                "result": None,
            }
            await peer.send(frame({"jsonrpc": "2.0", "method": "exit"}))
            assert await asyncio.wait_for(process.wait(), WAIT_S) == 0
    early, late = answers
    assert early == late and "capabilities" in early["result"]


ACP_PARAMS: list[dict[str, Any]] = [
    {"protocolVersion": 1},
    {
        "protocolVersion": 3,
        "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": False}, "terminal": True},
        "clientInfo": {"name": "test", "version": "1", "title": None},
    },
]


@pytest.mark.parametrize("params", ACP_PARAMS, ids=range(len(ACP_PARAMS)))
async def test_the_acp_early_initialize_answer_is_the_one_the_sdk_gives(tmp_path: Path, params: dict[str, Any]) -> None:
    answers: list[dict[str, Any]] = []
    for args in (["-m", "daemon", "acp"], ["-m", "daemon.acp", "--late-handshake"]):
        async with _front(tmp_path, *args) as process:
            answers.append(
                await _acp_exchange(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
            )
            # the replayed initialize was not answered twice: the next answer is the session list's
            listed = await _acp_exchange(process, {"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {}})
            assert listed["result"] == {"sessions": []}
    early, late = answers
    assert early == late and early["result"]["agentInfo"]["name"] == "ided"


async def test_the_acp_early_session_new_is_the_sdks_answer_and_its_session_is_served_at_once(tmp_path: Path) -> None:
    """The first ``session/new`` is answered before the SDK loads (``daemon.acp.early_session``): the same
    answer but its id, one session created, and a request for it sent the moment its id is known is served."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    params: dict[str, Any] = {"cwd": str(tmp_path / "ws"), "mcpServers": []}
    new: dict[str, Any] = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": params}
    answers: list[dict[str, Any]] = []
    for name in ("early", "late"):
        setting = f"state_dir={tmp_path / f'state-{name}'}"
        late = ["daemon.acp", "--late-handshake", "--set", setting]
        args = ["daemon", "--set", setting, "acp"] if name == "early" else late
        async with _front(tmp_path, "-m", *args) as process:
            await _acp_exchange(process, init)
            answer = await _acp_exchange(process, new)
            session_id = answer["result"]["sessionId"]
            set_mode = {"sessionId": session_id, "modeId": "ask"}
            moved = await _acp_exchange(
                process, {"jsonrpc": "2.0", "id": 3, "method": "session/set_mode", "params": set_mode}
            )
            assert "error" not in moved, moved
            listed = await _acp_exchange(process, {"jsonrpc": "2.0", "id": 4, "method": "session/list", "params": {}})
            assert [s["sessionId"] for s in listed["result"]["sessions"]] == [session_id]
        answers.append(answer["result"] | {"sessionId": "<id>"})
    early, late = answers
    assert early == late and early["modes"]["currentModeId"] == "code"


async def test_an_lsp_config_that_does_not_load_is_reported_over_the_protocol(tmp_path: Path) -> None:
    async with _front(tmp_path, "-m", "daemon", "--set", f"{BAD_KEY}=1", "lsp") as process:
        peer = RawPeer.over_stdio(process)
        root = (tmp_path / "ws").as_uri()
        answer = await peer.reply_to(
            frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}, "rootUri": root}})
        )
        assert "capabilities" in answer["result"]
        await peer.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        shown = await peer.receive()
        while shown.get("method") != "window/showMessage":
            shown = await peer.receive()
        assert BAD_KEY in shown["params"]["message"]
        refused = await peer.reply_to(frame({"jsonrpc": "2.0", "id": 2, "method": "ided/index/status", "params": {}}))
        assert BAD_KEY in refused["error"]["message"]
        assert (await peer.reply_to(frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})))["id"] == 3
        await peer.send(frame({"jsonrpc": "2.0", "method": "exit"}))
        assert await asyncio.wait_for(process.wait(), WAIT_S) == 0


async def test_an_acp_config_that_does_not_load_is_the_answer_to_session_new(tmp_path: Path) -> None:
    async with _front(tmp_path, "-m", "daemon", "--set", f"{BAD_KEY}=1", "acp") as process:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
        assert (await _acp_exchange(process, init))["result"]["protocolVersion"] == 1
        new: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": str(tmp_path / "ws"), "mcpServers": []},
        }
        refused = await _acp_exchange(process, new)
        assert BAD_KEY in json.dumps(refused["error"])


async def test_global_settings_apply_on_the_direct_path(tmp_path: Path) -> None:
    state = tmp_path / "elsewhere"
    async with _front(tmp_path, "-m", "daemon", "--set", f"state_dir={state}", "acp") as process:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
        await _acp_exchange(process, init)
        new: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": str(tmp_path / "ws"), "mcpServers": []},
        }
        session_id = (await _acp_exchange(process, new))["result"]["sessionId"]
    assert any(session_id in path.name for path in state.rglob("*")), sorted(state.rglob("*"))
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize(("front", "option"), [("lsp", "--tcp"), ("acp", "--workspace")])
def test_front_help_still_comes_from_typer(tmp_path: Path, front: str, option: str) -> None:
    done = subprocess.run(
        [sys.executable, "-P", "-m", "daemon", front, "--help"],
        capture_output=True, text=True, timeout=120, check=True, env=_env(tmp_path),
    )  # fmt: skip
    assert "Usage:" in done.stdout and option in done.stdout


async def test_lsp_client_capabilities_that_do_not_fit_are_ignored_and_the_client_is_told(tmp_path: Path) -> None:
    params = {"capabilities": {"textDocument": {"hover": {"dynamicRegistration": "yes"}}}}
    async with _front(tmp_path, "-m", "daemon", "lsp") as process:
        peer = RawPeer.over_stdio(process)
        answer = await peer.reply_to(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}))
        assert "capabilities" in answer["result"]
        await peer.send(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        seen = [await peer.receive()]
        while seen[-1].get("id") != 2:
            seen.append(await peer.receive())
        shown = [m["params"]["message"] for m in seen if m.get("method") == "window/showMessage"]
        assert any("do not fit" in message and "dynamic_registration" in message for message in shown), seen
        await peer.send(frame({"jsonrpc": "2.0", "method": "exit"}))
        assert await asyncio.wait_for(process.wait(), WAIT_S) == 0
