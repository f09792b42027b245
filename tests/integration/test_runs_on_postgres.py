"""Runs and checkpoints on a real Postgres: the checkpointer, the runtime, ``ided runs`` and ``ided runs migrate``.

The server is the session's throw-away cluster (tests/postgres_support.py); each test has a database
of its own. Checkpoint tests run on SQLite as well, through one parametrised fixture.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from pydantic import BaseModel
from typer.testing import CliRunner, Result

from daemon.cli.app import app
from daemon.config import CheckpointConfig, PipelineConfig, RunsConfig
from daemon.core.run_models import DecisionKind, RunStatus
from daemon.errors import ErrorCode, PipelineError
from daemon.orchestration.checkpoints import open_checkpointer
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.postgres_run_store import PostgresRunStore
from daemon.orchestration.resilience import ResilienceLayer
from daemon.orchestration.run_store import host_name
from daemon.orchestration.run_store_open import connect_run_store
from daemon.orchestration.sqlite_run_store import SqliteRunStore, runs_db_path
from daemon.trust import TrustStore
from tests.pipeline_support import (
    FAST_RESILIENCE,
    WAIT,
    choose,
    everyone_succeeds,
    open_runtime,
    replay_config,
    write_script,
)
from tests.run_store_writers import record

FEATURE = "feature_with_iterative_testing"
runner = CliRunner()


class Note(BaseModel):
    text: str = ""


def _ask(state: Note) -> dict[str, str]:
    name = interrupt("whom to greet?")
    return {"text": f"{state.text}hello {name}"}


def greeting_graph(saver: BaseCheckpointSaver[str]) -> Any:
    """START -> ask (stops at interrupt) -> END, compiled with ``saver`` (typed Any: LangGraph's overloads)."""
    builder: Any = StateGraph(Note)
    builder.add_node("ask", _ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=saver)


async def test_a_graph_stopped_at_an_interrupt_resumes_from_a_new_connection(
    tmp_path: Path, runs_database_url: str | None
) -> None:
    database_url = runs_database_url
    thread: Any = {"configurable": {"thread_id": "run-1"}}
    async with open_checkpointer(CheckpointConfig(), tmp_path, database_url=database_url) as saver:
        first = await greeting_graph(saver).ainvoke(Note(text="> "), thread)
        assert "__interrupt__" in first
    async with open_checkpointer(CheckpointConfig(), tmp_path, database_url=database_url) as saver:
        graph = greeting_graph(saver)
        assert (await graph.aget_state(thread)).next == ("ask",)
        done = await graph.ainvoke(Command(resume="ada"), thread)
    assert done["text"] == "> hello ada"


async def test_two_workspaces_run_workflows_into_one_database_and_each_lists_its_own(
    tmp_path: Path, postgres_url: str
) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {
                "role": "orchestrator",
                "answer": choose(FEATURE, requirements_analysis="SKIP", code_review="SKIP", documentation="SKIP"),
            },
            everyone_succeeds(),
        ],
    )
    finished: dict[str, str] = {}
    for workspace in ("ws-a", "ws-b"):
        runs = RunsConfig(database_url=postgres_url, workspace_id=workspace)
        async with open_runtime(tmp_path / workspace, replay_config(script), runs=runs) as runtime:
            started = await runtime.start("Add a multiply function")
            final = await runtime.wait(started.run_id, wait_seconds=WAIT)
            assert final.status is RunStatus.SUCCEEDED and final.workspace == workspace
            assert (await runtime.state(started.run_id)) is not None  # the checkpoint is in Postgres
            finished[workspace] = final.run_id
    runs = RunsConfig(database_url=postgres_url, workspace_id="ws-a")
    async with open_runtime(tmp_path / "ws-a", replay_config(script), runs=runs) as runtime:
        assert [r.run_id for r in await runtime.list_runs()] == [finished["ws-a"]]
        every = {r.run_id: r.workspace for r in await runtime.list_runs(all_workspaces=True)}
        assert every == {finished["ws-a"]: "ws-a", finished["ws-b"]: "ws-b"}
        other = await runtime.decision_log(finished["ws-b"])
        assert other[-1].kind.value == "stop"
    assert not (tmp_path / "ws-a" / "pipeline" / "runs.sqlite3").exists()
    assert not (tmp_path / "ws-a" / "pipeline" / "checkpoints.sqlite3").exists()


def ided(workspace: Path, *args: str) -> Result:
    settings = ["--set", "pipeline.resilience.cache=false"]
    return runner.invoke(app, [*settings, *args], catch_exceptions=False, env={"PWD": str(workspace)})


def make_workspace(root: Path, name: str, database_url: str | None) -> Path:
    ws = root / name
    ws.mkdir()
    lines = [f'state_dir = "{root / (name + "-state")}"', "[runs]", f'workspace_id = "{name}"']
    if database_url:
        lines.append(f'database_url = "{database_url}"')
    (ws / ".ided.toml").write_text("\n".join(lines) + "\n")
    TrustStore.default().add(ws)  # your own projects: their .ided.toml names the shared run store
    return ws


def test_ided_runs_lists_every_writers_runs_and_this_workspaces_with_a_flag(
    tmp_path: Path, isolated_home: Path, postgres_url: str
) -> None:
    a = make_workspace(tmp_path, "alpha", postgres_url)
    b = make_workspace(tmp_path, "beta", postgres_url)
    ids: dict[str, str] = {}
    for ws in (a, b):
        result = ided(ws, "run", "Fix the crash when the config is empty", "-w", str(ws), "--json")
        assert result.exit_code == 3  # no model: the run is planned and recorded
        ids[ws.name] = json.loads(result.stdout)["run_id"]
    listed = ided(a, "runs", "-w", str(a), "--json")
    assert {r["run_id"]: r["workspace"] for r in json.loads(listed.stdout)} == {
        ids["alpha"]: "alpha",
        ids["beta"]: "beta",
    }
    mine = ided(a, "runs", "-w", str(a), "--this-workspace", "--json")
    assert [r["run_id"] for r in json.loads(mine.stdout)] == [ids["alpha"]]
    human = ided(b, "runs", "-w", str(b))
    assert "[alpha]" in human.stdout and "[beta]" in human.stdout
    shown = ided(b, "runs", "show", ids["alpha"], "-w", str(b), "--json")
    assert json.loads(shown.stdout)["record"]["workspace"] == "alpha"


def test_migrate_copies_a_workspaces_runs_logs_events_and_checkpoints_once(
    tmp_path: Path, isolated_home: Path, postgres_url: str
) -> None:
    ws = make_workspace(tmp_path, "gamma", None)
    state = tmp_path / "gamma-state"
    thread: Any = {"configurable": {"thread_id": "r-new"}}

    async def write_locally() -> None:
        local = SqliteRunStore(runs_db_path(state), workspace_id="gamma")
        try:
            old = record("r-old", created_at="2026-01-01T10:00:00.000000+00:00", request="naïve \x00 text")
            await local.create(old)
            await local.log("r-old", DecisionKind.SELECTION, "picked \x00 bug_fix", {"why": "✓"})
            await local.create(record("r-new"))
            await local.update("r-new", status=RunStatus.INTERRUPTED)
        finally:
            local.close()
        async with open_checkpointer(CheckpointConfig(), state) as saver:
            await greeting_graph(saver).ainvoke(Note(), thread)

    asyncio.run(write_locally())
    first = ided(ws, "runs", "migrate", "--to", postgres_url, "-w", str(ws), "--json")
    assert first.exit_code == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["copied"] == ["r-old", "r-new"] and report["skipped"] == [] and report["checkpoints"] >= 2
    again = json.loads(ided(ws, "runs", "migrate", "--to", postgres_url, "-w", str(ws), "--json").stdout)
    assert again["copied"] == [] and again["skipped"] == ["r-old", "r-new"]

    async def read_shared() -> str:
        runs = RunsConfig(database_url=postgres_url, workspace_id="gamma")
        shared = connect_run_store(runs, state_dir=state, workspace=ws)
        try:
            assert [r.run_id for r in await shared.list()] == ["r-new", "r-old"]
            old = await shared.get("r-old")
            assert old.request == "naïve \x00 text" and old.workspace == "gamma"
            assert [(d.seq, d.summary, d.data) for d in await shared.decisions("r-old")] == [
                (1, "picked \x00 bug_fix", {"why": "✓"})
            ]
            assert (await shared.get("r-new")).status is RunStatus.INTERRUPTED
        finally:
            shared.close()
        async with open_checkpointer(CheckpointConfig(), state, database_url=postgres_url) as saver:
            done = await greeting_graph(saver).ainvoke(Command(resume="bo"), thread)
        return str(done["text"])

    assert asyncio.run(read_shared()) == "hello bo"


def test_migrating_into_something_that_is_not_a_postgres_url_is_a_config_error(
    tmp_path: Path, isolated_home: Path
) -> None:
    ws = make_workspace(tmp_path, "delta", None)
    result = runner.invoke(app, ["runs", "migrate", "--to", "mysql://x/y", "-w", str(ws)], env={"PWD": str(ws)})
    assert result.exit_code != 0 and "postgresql://" in result.stderr


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_postgres_that_cannot_be_reached_is_run_store_failed_without_the_password(tmp_path: Path) -> None:
    url = f"postgresql://ided:s3cret@127.0.0.1:{_closed_port()}/nothing"
    with pytest.raises(PipelineError) as caught:
        connect_run_store(
            RunsConfig(database_url=url, connect_timeout_seconds=2), state_dir=tmp_path, workspace=tmp_path
        )
    assert caught.value.code is ErrorCode.RUN_STORE_FAILED
    assert "s3cret" not in caught.value.message and "127.0.0.1" in caught.value.message


def test_without_the_driver_runs_database_url_fails_naming_the_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if psycopg were not installed
    monkeypatch.delitem(sys.modules, "daemon.orchestration.postgres_run_store", raising=False)
    with pytest.raises(PipelineError) as caught:
        connect_run_store(RunsConfig(database_url="postgresql://x/y"), state_dir=tmp_path, workspace=tmp_path)
    assert caught.value.code is ErrorCode.DRIVER_MISSING
    assert "psycopg" in caught.value.message and "ided[postgres]" in caught.value.message


async def test_a_sqlite_file_from_before_workspace_ids_lists_its_runs_under_this_workspace(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "runs.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE runs (run_id TEXT PRIMARY KEY, created_at TEXT NOT NULL, status TEXT NOT NULL, "
        "workflow TEXT, cancel_requested INTEGER NOT NULL DEFAULT 0, record TEXT NOT NULL);"
    )
    legacy = record("r-legacy").model_dump(mode="json", exclude={"workspace", "host"})
    old.execute(
        "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?)",
        ("r-legacy", legacy["created_at"], "planned", None, 0, json.dumps(legacy)),
    )
    old.commit()
    old.close()
    store = SqliteRunStore(path, workspace_id="here")
    try:
        assert [r.run_id for r in await store.list()] == ["r-legacy"]
        await store.create(record("r-next"))
        assert [r.run_id for r in await store.list()] == ["r-next", "r-legacy"]
    finally:
        store.close()


async def test_a_run_executing_on_another_host_stays_running_and_a_cancel_only_flags_it(
    tmp_path: Path, postgres_url: str
) -> None:
    runs = RunsConfig(database_url=postgres_url, workspace_id="ws-a")
    config = PipelineConfig(resilience=FAST_RESILIENCE)
    no_models = ModelRegistry.none(ResilienceLayer(FAST_RESILIENCE))
    async with open_runtime(tmp_path / "state", config, models=no_models, runs=runs) as runtime:
        await runtime.store.create(record("remote", status=RunStatus.RUNNING, pid=1, host="another-machine"))
        await runtime.store.create(record("local-dead", status=RunStatus.RUNNING, pid=2**22 + 7, host=host_name()))
        assert (await runtime.get("remote")).status is RunStatus.RUNNING
        assert (await runtime.get("local-dead")).status is RunStatus.INTERRUPTED
        flagged = await runtime.cancel("remote")
        assert flagged.status is RunStatus.RUNNING and flagged.cancel_requested
        with pytest.raises(PipelineError, match="on another-machine"):
            await runtime.resume("remote")


def test_the_test_server_script_without_binaries_exits_3_naming_the_package(tmp_path: Path) -> None:
    script = Path(__file__).parents[2] / "scripts" / "postgres-test-server.sh"
    env = {"PATH": "/usr/bin:/bin", "PG_BIN": str(tmp_path / "no-postgres-here")}
    done = subprocess.run(
        ["bash", str(script), "start", str(tmp_path / "cluster")], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 3 and done.stdout == ""
    assert "apt-get install postgresql" in done.stderr and "no-postgres-here" in done.stderr
    assert not (tmp_path / "cluster").exists()


def _drop_connections(server_url: str, database_url: str) -> int:
    """Terminate every session on the test database, as a server restart would."""
    name = urlsplit(database_url).path.lstrip("/")
    with psycopg.connect(server_url, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (name,),
        ).fetchall()
    return len(rows)


async def test_dropped_connections_are_reopened_by_the_run_store_and_the_checkpointer(
    tmp_path: Path, postgres_server_url: str, postgres_url: str
) -> None:
    probing = PostgresRunStore(postgres_url, workspace_id="ws", probe_after_idle_seconds=0)
    plain = PostgresRunStore(postgres_url, workspace_id="ws", probe_after_idle_seconds=3600)
    thread: Any = {"configurable": {"thread_id": "run-1"}}
    try:
        await probing.create(record("r1"))
        async with open_checkpointer(CheckpointConfig(), tmp_path, database_url=postgres_url) as saver:
            graph = greeting_graph(saver)
            await graph.ainvoke(Note(), thread)
            await plain.get("r1")
            assert _drop_connections(postgres_server_url, postgres_url) >= 3
            assert (await probing.get("r1")).run_id == "r1"  # checked after idling, reopened
            with pytest.raises(PipelineError) as caught:  # not checked: this call sees the break...
                await plain.get("r1")
            assert caught.value.code is ErrorCode.RUN_STORE_FAILED
            assert (await plain.get("r1")).run_id == "r1"  # ...and the next one reconnects
            done = await graph.ainvoke(Command(resume="ada"), thread)
        assert done["text"] == "hello ada"
    finally:
        probing.close()
        plain.close()


async def _ided_run(settings: list[str], ws: Path, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "daemon",
        *settings,
        "run",
        "Add a multiply function",
        "--ask",
        "-w",
        str(ws),
        "--json",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )


async def test_ided_run_processes_of_two_workspaces_at_once_write_one_database_completely(
    tmp_path: Path, postgres_url: str
) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {
                "role": "orchestrator",
                "answer": choose(FEATURE, requirements_analysis="SKIP", code_review="SKIP", documentation="SKIP"),
                "repeat": True,
            },
            everyone_succeeds(),
        ],
    )
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("IDED_")}
    # faulthandler: a process that hangs is ended with SIGABRT below and prints every thread's stack
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), PYTHONFAULTHANDLER="1")
    runs_per_workspace = 2
    processes: list[asyncio.subprocess.Process] = []
    for name in ("alpha", "beta"):
        ws = tmp_path / name
        ws.mkdir()
        (ws / "calc.py").write_text("def add(a, b):\n    return a + b\n")
        settings = [
            *("--set", f"state_dir={tmp_path / (name + '-state')}"),
            *("--set", f"runs.database_url={postgres_url}"),
            *("--set", f"runs.workspace_id={name}"),
            *("--set", f"pipeline.replay_script={script}"),
        ]
        processes += [await _ided_run(settings, ws, env) for _ in range(runs_per_workspace)]
    reading = [asyncio.create_task(p.communicate()) for p in processes]
    _done, hung = await asyncio.wait(reading, timeout=240)
    if hung:
        # end the ones still running so that each prints where it waits (faulthandler), then read all
        # they said: the failure names its cause and leaves no pipe open
        for p in processes:
            if p.returncode is None:
                p.send_signal(signal.SIGABRT)
        said = await asyncio.gather(*reading)
        raise AssertionError(
            "\n\n".join(
                f"ided run #{i} (exit {p.returncode}):\n{err.decode()[-6000:]}"
                for i, (p, (_out, err)) in enumerate(zip(processes, said, strict=True))
            )
        )
    outputs = [task.result() for task in reading]
    records = [json.loads(out) for out, _err in outputs]
    assert all(p.returncode == 0 for p in processes), [err.decode()[-2000:] for _out, err in outputs]
    assert sorted(r["workspace"] for r in records) == ["alpha", "alpha", "beta", "beta"]

    runs = RunsConfig(database_url=postgres_url, workspace_id="alpha")
    store = connect_run_store(runs, state_dir=tmp_path, workspace=tmp_path)
    try:
        listed = await store.list(all_workspaces=True)
        assert sorted(r.run_id for r in listed) == sorted(r["run_id"] for r in records)
        assert all(r.status is RunStatus.SUCCEEDED for r in listed)
        for r in listed:
            events = await store.events(r.run_id)
            assert [e.seq for e in events] == list(range(1, len(events) + 1)) and len(events) > 4
            assert events[-1].event.value == "run_finished"
            decisions = await store.decisions(r.run_id)
            assert [d.seq for d in decisions] == list(range(1, len(decisions) + 1))
            assert decisions[-1].kind is DecisionKind.STOP
        assert len(await store.list()) == runs_per_workspace
    finally:
        store.close()
