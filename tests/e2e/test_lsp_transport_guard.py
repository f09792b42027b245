"""Raw bytes on ``ided lsp``'s stdin: every malformed frame gets a JSON-RPC error and the server
stays up. No ``initialized`` is sent, so no daemon starts: these tests exercise the transport."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.lsp_support import WAIT_S, copy_fixture, server_args

pytestmark = pytest.mark.e2e

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002


def frame(message: dict[str, Any] | str | bytes) -> bytes:
    body = message if isinstance(message, bytes) else (message if isinstance(message, str) else json.dumps(message))
    data = body.encode() if isinstance(body, str) else body
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


class RawPeer:
    """Raw frames to a server process, over its stdio or a socket."""

    def __init__(
        self, process: asyncio.subprocess.Process, writer: asyncio.StreamWriter, reader: asyncio.StreamReader
    ) -> None:
        self.process = process
        self._stdin = writer
        self._stdout = reader

    @classmethod
    def over_stdio(cls, process: asyncio.subprocess.Process) -> RawPeer:
        assert process.stdin is not None and process.stdout is not None
        return cls(process, process.stdin, process.stdout)

    async def send(self, data: bytes) -> None:
        self._stdin.write(data)
        await self._stdin.drain()

    async def receive(self) -> dict[str, Any]:
        async def read() -> dict[str, Any]:
            length = 0
            while True:
                line = await self._stdout.readline()
                assert line, "the server closed stdout"
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            return json.loads(await self._stdout.readexactly(length))

        return await asyncio.wait_for(read(), WAIT_S)

    async def reply_to(self, data: bytes) -> dict[str, Any]:
        await self.send(data)
        return await self.receive()


@pytest.fixture
async def peer(tmp_path: Path, isolated_home: Path) -> AsyncGenerator[RawPeer]:
    workspace = copy_fixture(tmp_path / "ws")
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *server_args(tmp_path / "state"),
        cwd=str(workspace),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    raw = RawPeer.over_stdio(process)
    try:
        yield raw
    finally:
        if process.returncode is None:
            process.kill()
        await asyncio.wait_for(process.wait(), WAIT_S)


async def _initialize(peer: RawPeer) -> None:
    reply = await peer.reply_to(
        frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    )
    assert "capabilities" in reply["result"]


def _code(reply: dict[str, Any]) -> int | None:
    return reply.get("error", {}).get("code")


async def test_a_request_before_initialize_is_refused_with_server_not_initialized(peer: RawPeer) -> None:
    reply = await peer.reply_to(frame({"jsonrpc": "2.0", "id": 7, "method": "ided/index/status"}))
    assert (reply["id"], _code(reply)) == (7, SERVER_NOT_INITIALIZED)


async def test_malformed_frames_get_json_rpc_errors_and_the_server_stays_up(peer: RawPeer) -> None:
    await _initialize(peer)
    cases: list[tuple[bytes, int | str | None, int]] = [
        (frame("this is not json"), None, PARSE_ERROR),
        (frame(b"\xff\xfe{}"), None, PARSE_ERROR),
        (frame("[]"), None, INVALID_REQUEST),
        (frame("[1, 2]"), None, INVALID_REQUEST),
        (frame(b"[" * 1000 + b"]" * 1000), None, INVALID_REQUEST),
        (
            frame(b'{"jsonrpc":"2.0","id":1,"method":"x","params":' + b'{"a":' * 2000 + b"1" + b"}" * 2001),
            None,
            INVALID_REQUEST,
        ),
        (frame("1"), None, INVALID_REQUEST),
        (frame("null"), None, INVALID_REQUEST),
        (frame({"jsonrpc": "1.0", "id": 2, "method": "ided/index/status"}), 2, INVALID_REQUEST),
        (frame({"jsonrpc": "2.0", "id": True, "method": "ided/index/status"}), None, INVALID_REQUEST),
        (frame({"jsonrpc": "2.0", "id": 3, "method": 5}), 3, INVALID_REQUEST),
        (frame({"jsonrpc": "2.0", "id": 4, "method": "ided/index/search", "params": "query"}), 4, INVALID_REQUEST),
        (frame({"jsonrpc": "2.0", "id": 5, "method": "no/such/method", "params": {}}), 5, METHOD_NOT_FOUND),
        (frame({"jsonrpc": "2.0", "id": "s", "method": "$/unknown"}), "s", METHOD_NOT_FOUND),
        (frame({"jsonrpc": "2.0", "id": 6, "method": "ided/index/search"}), 6, INVALID_PARAMS),
        (frame({"jsonrpc": "2.0", "id": 7, "method": "ided/index/search", "params": {"k": 3}}), 7, INVALID_PARAMS),
        (frame({"jsonrpc": "2.0", "id": 8, "method": "workspace/symbol", "params": {"query": 5}}), 8, INVALID_PARAMS),
        (frame({"jsonrpc": "2.0", "id": 9, "method": "workspace/symbol"}), 9, INVALID_PARAMS),
        (
            frame({"jsonrpc": "2.0", "id": 10, "method": "ided/intel/astNode", "params": {"position": {"line": "x"}}}),
            10,
            INVALID_PARAMS,
        ),
        (b"hello there\r\n\r\n", None, PARSE_ERROR),
        (frame({"jsonrpc": "2.0", "id": 11}), 11, INVALID_REQUEST),
    ]
    for data, expected_id, expected_code in cases:
        reply = await peer.reply_to(data)
        assert (reply["id"], _code(reply)) == (expected_id, expected_code), data
        assert reply["error"]["message"]

    # the details name the field that is wrong
    reply = await peer.reply_to(
        frame({"jsonrpc": "2.0", "id": 12, "method": "ided/index/search", "params": {"query": 1}})
    )
    assert "$.params.query" in reply["error"]["message"]

    # a notification that does not fit its type is dropped without a reply; the next request is answered
    await peer.send(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": 3}}))
    reply = await peer.reply_to(
        frame({"jsonrpc": "2.0", "id": 13, "method": "workspace/symbol", "params": {"query": ""}})
    )
    assert reply == {"jsonrpc": "2.0", "id": 13, "result": []}


async def test_bytes_glued_before_a_frame_are_reported_and_the_frame_is_still_served(peer: RawPeer) -> None:
    await _initialize(peer)
    valid = frame({"jsonrpc": "2.0", "id": 21, "method": "workspace/symbol", "params": {"query": ""}})
    await peer.send(b"garbage-without-newline" + valid)
    first, second = await peer.receive(), await peer.receive()
    assert (first["id"], _code(first)) == (None, PARSE_ERROR)
    assert second == {"jsonrpc": "2.0", "id": 21, "result": []}


async def test_shutdown_refuses_later_requests_and_exit_ends_with_code_zero(peer: RawPeer) -> None:
    await _initialize(peer)
    assert (await peer.reply_to(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))) == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": None,
    }
    late = await peer.reply_to(
        frame({"jsonrpc": "2.0", "id": 3, "method": "workspace/symbol", "params": {"query": ""}})
    )
    assert (late["id"], _code(late)) == (3, INVALID_REQUEST)
    await peer.send(frame({"jsonrpc": "2.0", "method": "exit"}))
    assert await asyncio.wait_for(peer.process.wait(), WAIT_S) == 0


async def test_exit_without_shutdown_ends_with_code_one(peer: RawPeer) -> None:
    await _initialize(peer)
    await peer.send(frame({"jsonrpc": "2.0", "method": "exit"}))
    assert await asyncio.wait_for(peer.process.wait(), WAIT_S) == 1


async def test_tcp_transport_serves_one_client_on_loopback_and_exits_cleanly(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = copy_fixture(tmp_path / "ws")
    args = [*server_args(tmp_path / "state"), "--tcp", "--port", "0"]
    process = await asyncio.create_subprocess_exec(
        sys.executable, *args, cwd=str(workspace),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stderr is not None
    try:

        async def listening_port() -> int:
            assert process.stderr is not None
            while True:
                line = (await process.stderr.readline()).decode()
                assert line, "the server exited before listening"
                if "ided lsp listening on" in line:
                    return int(line.rsplit(",", 1)[1].strip(" )\n"))

        port = await asyncio.wait_for(listening_port(), WAIT_S)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        peer = RawPeer(process, writer, reader)
        await _initialize(peer)
        bad = await peer.reply_to(frame("not json"))
        assert _code(bad) == PARSE_ERROR
        assert (await peer.reply_to(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})))["id"] == 2
        await peer.send(frame({"jsonrpc": "2.0", "method": "exit"}))
        assert await asyncio.wait_for(process.wait(), WAIT_S) == 0
        writer.close()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
