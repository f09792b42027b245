"""``ided acp`` against raw, malformed frames on real stdio: each gets its JSON-RPC error (or is
dropped when it is a stray response), and the agent keeps serving the requests that follow."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.acp_support import WAIT_S, env_for, fixture_repo

pytestmark = pytest.mark.e2e


async def read_reply(stdout: asyncio.StreamReader) -> dict[str, Any]:
    line = await asyncio.wait_for(stdout.readline(), WAIT_S)
    assert line, "the agent closed stdout"
    reply = json.loads(line)
    assert isinstance(reply, dict)
    return reply  # pyright: ignore[reportUnknownVariableType]


async def test_malformed_frames_get_json_rpc_errors_and_the_agent_keeps_serving(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **env_for(tmp_path, None)}
    with (tmp_path / "stderr.log").open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-P",
            "-m",
            "daemon",
            "acp",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=err.fileno(),
            env=env,
        )
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout

        async def exchange(raw: bytes) -> dict[str, Any]:
            stdin.write(raw + b"\n")
            await stdin.drain()
            return await read_reply(stdout)

        cases: list[tuple[bytes, int, Any]] = [
            (b"[]", -32600, None),
            (b"1", -32600, None),
            (b"null", -32600, None),
            (b"{not json", -32700, None),
            (b"[" * 1000 + b"]" * 1000, -32600, None),
            (b"[" * 100_000, -32600, None),
            (b"\xff\xfe{}", -32700, None),
            (b'[{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":1}}]', -32600, None),
            (b'{"jsonrpc":"1.0","id":2,"method":"initialize","params":{}}', -32600, 2),
            (b'{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}', -32600, None),
            (b'{"jsonrpc":"2.0","id":3,"method":"initialize","params":[1]}', -32602, 3),
            (b'{"jsonrpc":"2.0","id":5,"method":7,"params":{}}', -32600, 5),
            (b'{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":1}}', -32602, 6),
            (b'{"jsonrpc":"2.0","id":7,"method":"no/such_method","params":{}}', -32601, 7),
        ]
        for raw, code, reply_id in cases:
            reply = await exchange(raw)
            assert reply.get("id") == reply_id and reply.get("error", {}).get("code") == code, (raw, reply)
        # a stray response (unusable id, or no pending request) is dropped without an answer
        stdin.write(b'{"jsonrpc":"2.0","id":[1],"result":1}\n{"jsonrpc":"2.0","id":99,"result":{}}\n')
        ok = await exchange(b'{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":1}}')
        assert ok["id"] == 10 and ok["result"]["agentCapabilities"]["loadSession"] is True
        bad_session = await exchange(b'{"jsonrpc":"2.0","id":11,"method":"session/new","params":{"mcpServers":[]}}')
        assert bad_session["id"] == 11 and bad_session["error"]["code"] == -32602
        not_a_folder = json.dumps(
            {"jsonrpc": "2.0", "id": 12, "method": "session/new", "params": {"cwd": "relative/dir", "mcpServers": []}}
        )
        refused = await exchange(not_a_folder.encode())
        assert refused["error"]["code"] == -32602 and "absolute path" in json.dumps(refused["error"]["data"])
        good = json.dumps(
            {"jsonrpc": "2.0", "id": 13, "method": "session/new", "params": {"cwd": str(repo), "mcpServers": []}}
        )
        created = await exchange(good.encode())
        assert created["id"] == 13 and created["result"]["sessionId"].startswith("s-")
        stdin.close()
        assert await asyncio.wait_for(proc.wait(), WAIT_S) == 0
    assert "Traceback" not in (tmp_path / "stderr.log").read_text()
