"""The framing every transport shares (Content-Length for LSP, lines for ACP and the daemon socket),
over a real asyncio.StreamReader fed with bytes."""

from __future__ import annotations

import asyncio
import json

from daemon.core.jsonrpc import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, JsonRpcReject, Message
from daemon.core.jsonrpc_framing import MAX_FRAME_BYTES, encode_frame, encode_line, frames, lines, messages


def _reader(data: bytes, limit: int = 2**16) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=limit)
    reader.feed_data(data)
    reader.feed_eof()
    return reader


async def _frames(data: bytes) -> list[bytes | JsonRpcReject]:
    return [item async for item in frames(_reader(data))]


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def test_consecutive_frames_come_out_as_their_bodies() -> None:
    assert await _frames(_frame(b'{"a":1}') + _frame(b"[]")) == [b'{"a":1}', b"[]"]


async def test_headers_are_case_insensitive_and_other_headers_are_ignored() -> None:
    data = b"content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}"
    assert await _frames(data) == [b"{}"]


async def test_a_header_block_without_content_length_is_a_parse_error_and_reading_goes_on() -> None:
    result = await _frames(b"hello\r\n\r\n" + _frame(b"{}"))
    assert isinstance(result[0], JsonRpcReject)
    assert result[0].code == PARSE_ERROR
    assert result[1:] == [b"{}"]


async def test_bytes_glued_before_a_header_are_reported_and_the_frame_is_kept() -> None:
    result = await _frames(b"junk" + _frame(b"{}"))
    assert isinstance(result[0], JsonRpcReject)
    assert result[1:] == [b"{}"]


async def test_a_frame_cut_short_by_end_of_input_yields_nothing() -> None:
    assert await _frames(b"Content-Length: 10\r\n\r\n{}") == []


async def test_a_frame_over_the_size_limit_is_skipped_with_an_invalid_request_error() -> None:
    size = MAX_FRAME_BYTES + 1
    result = await _frames(b"Content-Length: %d\r\n\r\n" % size + b" " * size + _frame(b"{}"))
    assert isinstance(result[0], JsonRpcReject)
    assert result[0].code == INVALID_REQUEST
    assert result[1:] == [b"{}"]


async def test_a_frame_error_answers_with_id_null() -> None:
    [error, _] = await _frames(b"junk" + _frame(b"{}"))
    assert isinstance(error, JsonRpcReject)
    assert error.reply() == {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": error.message}}


async def _lines(data: bytes, *, max_bytes: int = 100, limit: int = 2**16) -> list[bytes | JsonRpcReject]:
    return [item async for item in lines(_reader(data, limit), max_bytes=max_bytes)]


async def test_lines_come_out_whole_and_blank_lines_are_skipped() -> None:
    assert await _lines(b'{"a":1}\n\n  \n[]\n') == [b'{"a":1}\n', b"[]\n"]


async def test_a_last_line_without_its_newline_still_counts() -> None:
    assert await _lines(b"{}\n[]") == [b"{}\n", b"[]"]


async def test_a_line_over_max_bytes_is_an_invalid_request_and_reading_goes_on() -> None:
    result = await _lines(b"x" * 200 + b"\n{}\n")
    assert isinstance(result[0], JsonRpcReject)
    assert result[0].code == INVALID_REQUEST
    assert result[0].msg_id is None
    assert result[1:] == [b"{}\n"]


async def test_a_line_over_the_reader_buffer_is_skipped_whole() -> None:
    result = await _lines(b"y" * 5000 + b"\n{}\n", max_bytes=10_000, limit=1024)
    assert isinstance(result[0], JsonRpcReject)
    assert result[0].code == INVALID_REQUEST
    assert "5001 bytes" in result[0].message
    assert result[1:] == [b"{}\n"]


async def test_an_over_long_line_cut_by_end_of_input_yields_nothing() -> None:
    assert await _lines(b"z" * 5000, max_bytes=10_000, limit=1024) == []


async def test_messages_are_checked_and_rejects_keep_the_request_id() -> None:
    data = (
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":{}}\n'
        b'{"jsonrpc":"2.0","id":2,"method":"m","params":[1]}\n'
        b'{"jsonrpc":"2.0","id":null,"result":1}\n'
        b"not json\n"
    )
    out = [m async for m in messages(lines(_reader(data), max_bytes=1000), protocol="TEST", params_array=False)]
    assert isinstance(out[0], Message)
    assert (out[0].id, out[0].method) == (1, "m")
    assert isinstance(out[1], JsonRpcReject)
    assert (out[1].code, out[1].msg_id) == (INVALID_PARAMS, 2)
    assert isinstance(out[2], JsonRpcReject)  # the response with a null id is dropped, not answered
    assert (out[2].code, out[2].msg_id) == (PARSE_ERROR, None)
    assert len(out) == 3


def test_encodings_round_trip() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": "é"}
    assert json.loads(encode_line(message)) == message
    assert encode_line(message).endswith(b"\n")
    assert encode_line(message, ensure_ascii=False) == '{"jsonrpc":"2.0","id":1,"result":"é"}\n'.encode()
    frame = encode_frame(message)
    header, body = frame.split(b"\r\n\r\n", 1)
    assert header == b"Content-Length: %d" % len(body)
    assert json.loads(body) == message
