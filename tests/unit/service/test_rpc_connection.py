"""The daemon socket's RpcConnection over a real Unix socket pair: bad lines are answered and the
connection stays up (the framing and checks are the shared JSON-RPC core's)."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest

from daemon.core.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR
from daemon.service.wire.rpc import RpcConnection


async def _echo(params: dict[str, Any]) -> Any:
    return {"echo": params}


@pytest.fixture
async def wire() -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    """A client's end of a socket whose other end an RpcConnection serves (reader buffer: 1 KiB)."""
    server_sock, client_sock = socket.socketpair()
    server_reader, server_writer = await asyncio.open_unix_connection(sock=server_sock, limit=1024)
    server = RpcConnection(server_reader, server_writer, handlers={"echo": _echo}, name="test")
    serving = asyncio.create_task(server.serve())
    reader, writer = await asyncio.open_unix_connection(sock=client_sock)
    try:
        yield reader, writer
    finally:
        writer.close()
        await asyncio.wait_for(serving, 30)


async def _reply(reader: asyncio.StreamReader) -> dict[str, Any]:
    return json.loads(await asyncio.wait_for(reader.readline(), 30))


async def test_bad_lines_are_answered_and_the_connection_serves_on(
    wire: tuple[asyncio.StreamReader, asyncio.StreamWriter],
) -> None:
    reader, writer = wire
    writer.write(b"not json\n")
    writer.write(b'{"jsonrpc":"2.0","id":7,"method":"echo","params":[1]}\n')
    writer.write(b'{"jsonrpc":"2.0","id":8,"method":"nope","params":{}}\n')
    writer.write(b'{"jsonrpc":"2.0","id":9,"method":"echo","params":{"x":"' + b"y" * 5000 + b'"}}\n')
    writer.write(b'{"jsonrpc":"2.0","id":10,"method":"echo","params":{"x":1}}\n')
    await writer.drain()
    replies = [await _reply(reader) for _ in range(5)]  # requests run concurrently: any order
    by_id = {r["id"]: r for r in replies if r["id"] is not None}
    assert by_id[7]["error"]["code"] == INVALID_PARAMS
    assert by_id[8]["error"]["code"] == METHOD_NOT_FOUND
    assert by_id[10] == {"jsonrpc": "2.0", "id": 10, "result": {"echo": {"x": 1}}}
    unanswerable = sorted((r["error"]["code"], r["error"]["message"]) for r in replies if r["id"] is None)
    assert [code for code, _ in unanswerable] == [PARSE_ERROR, INVALID_REQUEST]
    assert "too long" in unanswerable[1][1]
