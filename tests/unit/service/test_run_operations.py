"""Each run operation is declared once (``RunService``'s attributes); the daemon's handlers, the wire and the
in-process service are derived from those declarations."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from daemon.config import Config, load_config
from daemon.errors import DaemonError, PipelineError
from daemon.service.runs.host import RunHost
from daemon.service.runs.loans import RunLoan
from daemon.service.runs.local import reviewing
from daemon.service.runs.operation import METHOD_PREFIX, RunLaunch, RunOperation
from daemon.service.runs.params import LaunchParams, RunStart, StartParams
from daemon.service.runs.review import RunReview
from daemon.service.runs.service import OPERATIONS, RunService
from daemon.service.wire.client import DaemonClient
from daemon.service.wire.link import Reattaching
from daemon.service.wire.rpc import RpcConnection
from daemon.service.workspace.remote import DaemonWorkspace
from tests.vcs_support import make_repo

CHANGING = {"prepare", "start", "execute", "resume", "feedback", "cancel", "accept", "reject", "rollback", "cleanup"}
"""The operations that change something: a client never sends one of them twice."""


def _config(tmp_path: Path, workspace: Path) -> Config:
    return load_config(
        workspace,
        env={"HOME": str(tmp_path / "home")},
        overrides={"state_dir": str(tmp_path / "state")},
        user_file=tmp_path / "no-user-config.toml",
    )


@pytest.fixture
async def connection() -> AsyncIterator[RpcConnection]:
    """The daemon's end of a real connection (what the handlers of one connection are made for)."""
    ours, theirs = socket.socketpair()
    conn = RpcConnection(*await asyncio.open_unix_connection(sock=ours), name="daemon")
    other = RpcConnection(*await asyncio.open_unix_connection(sock=theirs), name="front")
    try:
        yield conn
    finally:
        await conn.close()
        await other.close()


def test_every_operation_is_declared_once_and_served_as_its_own_method() -> None:
    declared = [name for name, value in vars(RunService).items() if isinstance(value, RunOperation | RunLaunch)]
    assert list(OPERATIONS) == declared
    assert all(op.name == name and op.method == METHOD_PREFIX + name for name, op in OPERATIONS.items())
    assert {"start", "accept", "show", "trust", "is_repository"} <= set(OPERATIONS)
    assert {name for name, op in OPERATIONS.items() if op.changes} == CHANGING
    assert {name for name, op in OPERATIONS.items() if isinstance(op, RunLaunch)} == {
        "start",
        "execute",
        "resume",
        "feedback",
    }


async def test_the_daemon_serves_exactly_the_declared_operations(tmp_path: Path, connection: RpcConnection) -> None:
    config = _config(tmp_path, tmp_path)

    async def publish(method: str, params: object) -> None: ...

    async def never() -> DaemonClient:
        raise AssertionError("the host opens nothing before a request")

    host = RunHost(config, DaemonWorkspace(Reattaching(config.workspace, never)), publish)
    assert set(host.handlers_for(connection)) == {op.method for op in OPERATIONS.values()}
    assert host.handlers() == {}
    assert not host.busy  # nothing opened: a daemon no one asks for runs loads no pipeline


def test_the_wire_refuses_params_the_declaration_does_not_name() -> None:
    for name, op in OPERATIONS.items():
        with pytest.raises(ValidationError):
            op.parse({"run_id": "r", "plan_of_someone_else": 1})  # an unknown field, whatever else fits
        if name not in {"trust", "is_repository", "list_runs", "cleanup"}:
            with pytest.raises(ValidationError):
                op.parse({})  # a required field missing
    assert OPERATIONS["get"].parse({"run_id": "r1"}) == OPERATIONS["get"].params("r1")
    with pytest.raises(ValidationError):
        OPERATIONS["get"].parse({"run_id": ""})


def test_a_lending_launch_sends_what_it_lends_and_never_takes_a_loan_from_the_wire() -> None:
    start = OPERATIONS["start"]
    params = StartParams(RunStart(request="add multiply", mode="ask"), trusted=True, loan=RunLoan())
    wire = start.dump(params)
    assert "loan" not in wire and wire["trusted"] is True and wire["run"]["request"] == "add multiply"
    with pytest.raises(ValidationError, match="instance of RunLoan"):
        start.parse({**wire, "loan": {"file_reader": "/etc/passwd"}})
    parsed = start.parse({**wire, "lent": {"loan_id": "l1", "reads_files": True}})
    assert isinstance(parsed, StartParams) and parsed.loan is None and parsed.lent is not None
    assert parsed.lent.loan_id == "l1" and parsed.run == params.run


def test_the_typed_client_takes_the_declared_signature() -> None:
    params = OPERATIONS["execute"].params("r1", trusted=False)
    assert params == LaunchParams("r1", trusted=False)
    with pytest.raises(ValidationError):
        OPERATIONS["execute"].params("r1", False)  # pyright refuses this too: trusted is keyword-only
    assert OPERATIONS["wait"].wait_s(OPERATIONS["wait"].params("r1", wait_seconds=5)) == 35
    assert OPERATIONS["get"].wait_s(OPERATIONS["get"].params("r1")) == 120


async def test_the_review_operations_answer_in_this_process_over_a_review_alone(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"calc.py": "def add(a, b):\n    return a + b\n"})
    async with RunReview.open(_config(tmp_path, repo)) as review:
        runs = reviewing(review)
        assert not runs.in_daemon
        assert await runs.is_repository() is True
        assert (await runs.cleanup(older_than_days=0)).removed_runs == ()
        with pytest.raises(DaemonError, match="no-such-run"):
            await runs.branch("no-such-run")
        with pytest.raises(PipelineError, match="only a run's review is open"):
            await runs.get("no-such-run")
        await runs.aclose()
