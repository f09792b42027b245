"""The one JSON-RPC decoder every transport uses: whatever the bytes, a message or a coded reject."""

from __future__ import annotations

import pytest

from daemon.core.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_NESTING_DEPTH,
    PARSE_ERROR,
    JsonRpcReject,
    read_message,
)


def _reject(body: bytes, **kw: bool) -> tuple[int, int | str | None]:
    with pytest.raises(JsonRpcReject) as caught:
        read_message(body, protocol="TEST", **kw)
    return caught.value.code, caught.value.msg_id


@pytest.mark.parametrize(
    ("body", "reply_id"),
    [
        (b"[" * 1000 + b"]" * 1000, None),
        (b"[" * 100_000, None),
        (b'[{"a":' * 3000, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"m","params":' + b'{"a":' * 400 + b"1" + b"}" * 400 + b"}", 1),
        (b'{"jsonrpc":"2.0","id":2,"method":"m","params":{"x":' + b"[{}," * 300 + b"1" + b"]" * 300 + b"}}", 2),
        (b'{"jsonrpc":"2.0","id":3,"method":"m","params":' + b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"}", None),
    ],
)
def test_json_nested_deeper_than_the_limit_is_an_invalid_request_not_a_crash(body: bytes, reply_id: int | None) -> None:
    assert _reject(body) == (INVALID_REQUEST, reply_id)


def test_a_request_too_deep_for_the_limit_but_not_for_the_decoder_is_answered_by_its_id() -> None:
    body = b'{"jsonrpc":"2.0","id":"r1","method":"m","params":{"x":' + b"[" * 500 + b"]" * 500 + b"}}"
    assert _reject(body) == (INVALID_REQUEST, "r1")


def test_a_lone_surrogate_anywhere_is_an_invalid_request_and_an_escaped_pair_is_text() -> None:
    lone = b'{"jsonrpc":"2.0","id":9,"method":"m","params":{"text":"a\\udc00b"}}'
    assert _reject(lone) == (INVALID_REQUEST, 9)
    pair = read_message(b'{"jsonrpc":"2.0","id":9,"method":"m","params":{"text":"\\ud83d\\ude00"}}', protocol="T")
    assert pair is not None and pair.params == {"text": "\U0001f600"}


def test_nesting_at_the_limit_is_accepted() -> None:
    depth_inside = MAX_NESTING_DEPTH - 2  # the message object and its params object are two levels
    body = b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":' + b"[" * depth_inside + b"]" * depth_inside + b"}}"
    message = read_message(body, protocol="TEST")
    assert message is not None and message.kind == "request"


@pytest.mark.parametrize("body", [b"\xff\xfe{}", b"{not json", b"NaN", b'{"a": Infinity}', b"", b"1" * 5000])
def test_bytes_that_are_not_json_are_a_parse_error(body: bytes) -> None:
    assert _reject(body) == (PARSE_ERROR, None)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"[]", (INVALID_REQUEST, None)),
        (b"null", (INVALID_REQUEST, None)),
        (b'{"jsonrpc":"1.0","id":2,"method":"m"}', (INVALID_REQUEST, 2)),
        (b'{"jsonrpc":"2.0","id":true,"method":"m"}', (INVALID_REQUEST, None)),
        (b'{"jsonrpc":"2.0","id":"\\ud800","method":"m"}', (INVALID_REQUEST, None)),
        (b'{"jsonrpc":"2.0","id":3,"method":""}', (INVALID_REQUEST, 3)),
        (b'{"jsonrpc":"2.0","id":4,"method":"m","params":"x"}', (INVALID_REQUEST, 4)),
        (b'{"jsonrpc":"2.0","id":5}', (INVALID_REQUEST, 5)),
        (b'{"jsonrpc":"2.0","id":6,"result":1,"error":{}}', (INVALID_REQUEST, 6)),
    ],
)
def test_values_that_are_not_json_rpc_messages_are_invalid_requests(
    body: bytes, expected: tuple[int, int | str | None]
) -> None:
    assert _reject(body) == expected


def test_array_params_are_invalid_params_where_the_protocol_wants_an_object() -> None:
    body = b'{"jsonrpc":"2.0","id":7,"method":"m","params":[1]}'
    assert _reject(body, params_array=False) == (INVALID_PARAMS, 7)
    message = read_message(body, protocol="TEST")
    assert message is not None and message.params == [1]


def test_a_response_with_an_unusable_id_is_dropped_and_null_params_mean_none() -> None:
    assert read_message(b'{"jsonrpc":"2.0","id":[1],"result":1}', protocol="TEST") is None
    note = read_message(b'{"jsonrpc":"2.0","method":"n","params":null}', protocol="TEST")
    assert note is not None and note.kind == "notification" and "params" not in note.raw
    reply = read_message(b'{"jsonrpc":"2.0","id":"a","result":null}', protocol="TEST")
    assert reply is not None and reply.kind == "response" and reply.id == "a"
