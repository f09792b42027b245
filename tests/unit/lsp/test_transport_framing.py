"""Framing of the guarded LSP transport, over a real asyncio.StreamReader fed with bytes."""

from __future__ import annotations

import asyncio

from daemon.lsp.transport_guard import INVALID_REQUEST, MAX_FRAME_BYTES, PARSE_ERROR, FrameError, frames


async def _frames(data: bytes) -> list[bytes | FrameError]:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    return [item async for item in frames(reader)]


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def test_consecutive_frames_come_out_as_their_bodies() -> None:
    assert await _frames(_frame(b'{"a":1}') + _frame(b"[]")) == [b'{"a":1}', b"[]"]


async def test_headers_are_case_insensitive_and_other_headers_are_ignored() -> None:
    data = b"content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}"
    assert await _frames(data) == [b"{}"]


async def test_a_header_block_without_content_length_is_a_parse_error_and_reading_goes_on() -> None:
    result = await _frames(b"hello\r\n\r\n" + _frame(b"{}"))
    assert isinstance(result[0], FrameError)
    assert result[0].code == PARSE_ERROR
    assert result[1:] == [b"{}"]


async def test_bytes_glued_before_a_header_are_reported_and_the_frame_is_kept() -> None:
    result = await _frames(b"junk" + _frame(b"{}"))
    assert isinstance(result[0], FrameError)
    assert result[1:] == [b"{}"]


async def test_a_frame_cut_short_by_end_of_input_yields_nothing() -> None:
    assert await _frames(b"Content-Length: 10\r\n\r\n{}") == []


async def test_a_frame_over_the_size_limit_is_skipped_with_an_invalid_request_error() -> None:
    size = MAX_FRAME_BYTES + 1
    result = await _frames(b"Content-Length: %d\r\n\r\n" % size + b" " * size + _frame(b"{}"))
    assert isinstance(result[0], FrameError)
    assert result[0].code == INVALID_REQUEST
    assert result[1:] == [b"{}"]
