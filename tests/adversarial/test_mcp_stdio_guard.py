"""``ided mcp`` on stdio answers malformed JSON-RPC lines with their error code (the SDK alone
logs them and answers nothing), through the decoder every ided transport shares."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.fuzz_support import FRONTS, prepare_workdir

pytestmark = pytest.mark.e2e

WAIT_S = 60.0


async def test_malformed_lines_get_their_json_rpc_error_and_the_server_keeps_serving(
    tmp_path: Path, isolated_home: Path
) -> None:
    spec = FRONTS["mcp"]
    prepare_workdir(tmp_path)
    process = await asyncio.create_subprocess_exec(
        *spec.argv(tmp_path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=spec.env(tmp_path),
        cwd=str(tmp_path / "repo"),
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    async def exchange(raw: bytes) -> dict[str, Any]:
        stdin.write(raw + b"\n")
        await stdin.drain()
        while True:
            line = await asyncio.wait_for(stdout.readline(), WAIT_S)
            assert line, "the server closed stdout"
            reply = json.loads(line)
            if "method" not in reply:  # skip the server's own notifications
                return reply

    try:
        for message in spec.handshake(tmp_path):
            stdin.write(json.dumps(message).encode() + b"\n")
        await stdin.drain()
        hello = json.loads(await asyncio.wait_for(stdout.readline(), WAIT_S))
        assert hello["id"] == "hello" and "serverInfo" in hello["result"]
        cases: list[tuple[bytes, int, Any]] = [
            (b"{not json", -32700, None),
            (b"\xff\xfe{}", -32700, None),
            (b"[" * 1000 + b"]" * 1000, -32600, None),
            (
                b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"x":' + b"[" * 150 + b"]" * 150 + b"}}",
                -32600,
                2,
            ),
            (b"[]", -32600, None),
            (b"7", -32600, None),
            (b'{"jsonrpc":"1.0","id":3,"method":"ping"}', -32600, 3),
            (b'{"jsonrpc":"2.0","id":4,"method":5}', -32600, 4),
            (b'{"jsonrpc":"2.0","id":5,"method":"tools/list","params":"x"}', -32600, 5),
            (b'{"jsonrpc":"2.0","id":6,"method":"tools/list","params":[1]}', -32602, 6),
            (b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', -32600, None),
            (b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"t":"\\udc00"}}', -32600, 7),
        ]
        for raw, code, reply_id in cases:
            reply = await exchange(raw)
            assert (reply.get("id"), reply.get("error", {}).get("code")) == (reply_id, code), (raw, reply)
        assert (await exchange(b'{"jsonrpc":"2.0","id":8,"method":"ping"}')) == {
            "jsonrpc": "2.0",
            "id": 8,
            "result": {},
        }
        tools = await exchange(b'{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}')
        assert any(tool["name"] == "get_ast_node" for tool in tools["result"]["tools"])
        stdin.close()
        assert await asyncio.wait_for(process.wait(), WAIT_S) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
