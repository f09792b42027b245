"""``daemon.acp.early_session``: the first ``session/new`` answered before the ACP SDK loads, over real pipes.

It answers only a ``session/new`` it can vouch for, in a folder whose configuration loads and that
is admitted, and then the session exists on disk; everything else is handed back byte for byte.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from daemon.acp.early_session import answer_new_session
from daemon.acp.handshake import Handshake, answer_initialize
from daemon.acp.sessions import SessionStore

INIT: dict[str, Any] = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}


@pytest.fixture
def workspace(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("IDED_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.chdir(ws)
    yield ws


def _new(msg_id: int | str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": "session/new", "params": params}


def _exchange(lines: list[dict[str, Any] | bytes], settings: list[str]) -> tuple[Handshake, Any, list[dict[str, Any]]]:
    """Run both early answers over pipes fed with ``lines``; what they returned and what they wrote."""
    client_out, agent_in = os.pipe()
    agent_out, client_in = os.pipe()
    for line in lines:
        os.write(agent_in, line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n")
    os.close(agent_in)
    try:
        handshake = answer_initialize(client_out, client_in)
        assert handshake.early is not None
        handshake, session = answer_new_session(
            handshake, workspace=None, settings=settings, read_fd=client_out, write_fd=client_in
        )
    finally:
        os.close(client_in)
        os.close(client_out)
    with os.fdopen(agent_out, "rb") as written:
        return handshake, session, [json.loads(line) for line in written.read().splitlines()]


def test_a_plain_session_new_is_answered_and_its_session_is_on_disk(workspace: Path, tmp_path: Path) -> None:
    new = _new("n", {"cwd": str(workspace), "mcpServers": []})
    after = b'{"jsonrpc":"2.0","id":7,"method":"session/list","params":{}}\n'
    handshake, session, written = _exchange([INIT, new, after], [])
    assert session is not None and handshake.pending == after
    assert [w["id"] for w in written] == [0, "n"]
    result = written[1]["result"]
    assert result == session.answered.result and session.answered.message == new
    assert result["sessionId"] == session.record.session_id
    assert [m["id"] for m in result["modes"]["availableModes"]] == ["ask", "code"]
    stored = SessionStore(tmp_path / "state").get(session.record.session_id)
    assert stored.cwd == str(workspace)


UNVOUCHED: list[dict[str, Any]] = [
    {"cwd": "relative/path", "mcpServers": []},
    {"cwd": "/no/such/folder/here", "mcpServers": []},
    {"mcpServers": []},
    {"cwd": "<ws>", "mcpServers": [{"name": "x", "command": "y", "args": [], "env": []}]},
    {"cwd": "<ws>"},
    {"cwd": "<ws>", "mcpServers": [], "additionalDirectories": ["/tmp"]},
    {"cwd": "<ws>", "mcpServers": [], "surprise": 1},
]


@pytest.mark.parametrize(
    "params",
    UNVOUCHED,
    ids=["relative", "missing", "no-cwd", "mcp-servers", "no-mcp-servers", "extra-dirs", "unknown-key"],
)
def test_a_session_new_it_cannot_vouch_for_is_left_to_the_agent(
    workspace: Path, tmp_path: Path, params: dict[str, Any]
) -> None:
    params = {k: (str(workspace) if v == "<ws>" else v) for k, v in params.items()}
    new = json.dumps(_new(2, params)).encode() + b"\n"
    handshake, session, written = _exchange([INIT, new], [])
    assert session is None and handshake.pending == new
    assert [w["id"] for w in written] == [0]
    assert not (tmp_path / "state" / "acp").exists()


def test_a_configuration_that_does_not_load_or_another_first_request_is_left_to_the_agent(
    workspace: Path, tmp_path: Path
) -> None:
    new = _new(2, {"cwd": str(workspace), "mcpServers": []})
    for settings in (["index.no_such_key=1"], ["no-equals"]):
        handshake, session, written = _exchange([INIT, new], settings)
        assert session is None and json.loads(handshake.pending) == new and len(written) == 1
    listing = b'{"jsonrpc":"2.0","id":3,"method":"session/list","params":{}}\n'
    handshake, session, written = _exchange([INIT, listing, b"partial"], [])
    assert session is None and handshake.pending == listing + b"partial" and len(written) == 1
    assert not (tmp_path / "state" / "acp").exists()
