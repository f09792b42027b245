"""The workspace daemon as users run it: real subprocesses, real socket, real watcher."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from daemon.config import Config, load_config
from daemon.core.models import SearchMode
from daemon.service.intel.capabilities import AST_NODE, DEFINITION
from daemon.service.wire.api import DaemonStatus, Methods, SearchParams
from daemon.service.wire.client import DaemonClient
from daemon.service.wire.files import read_record
from daemon.service.workspace.command import command_workspace

pytestmark = pytest.mark.e2e

FIXTURE = Path(__file__).parents[1] / "fixtures" / "workspaces" / "polyglot"


def _overrides(state: Path, **daemon: object) -> dict[str, Any]:
    return {
        "state_dir": str(state),
        "embedding": {"enabled": False},
        "daemon": {"idle_shutdown_seconds": 0, "debounce_ms": 20, **daemon},
    }


@pytest.fixture
def workspace(tmp_path: Path, isolated_home: Path) -> Path:
    dest = tmp_path / "ws"
    shutil.copytree(FIXTURE, dest)
    return dest


def _config(workspace: Path, overrides: dict[str, Any]) -> Config:
    return load_config(workspace, overrides=overrides)


async def _attach(config: Config, overrides: dict[str, Any], **kw: Any) -> DaemonClient:
    return await DaemonClient.attach(config, client="other", overrides=overrides, **kw)


async def _stop(client: DaemonClient) -> None:
    pid = client.daemon_pid
    await client.call(Methods.SHUTDOWN, None)
    await client.close()
    await _wait_gone(pid)


async def _wait_gone(pid: int, wait_s: float = 20) -> None:
    """Wait for a process (not necessarily our child) to exit, via a pidfd: no polling."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    exited = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_reader(fd, exited.set)
    try:
        await asyncio.wait_for(exited.wait(), wait_s)
    finally:
        loop.remove_reader(fd)
        os.close(fd)


async def _first_pass_done(client: DaemonClient) -> DaemonStatus:
    async def poll() -> DaemonStatus:
        while True:
            status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
            if status.index.last_update is not None and status.busy is None:
                return status
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(poll(), 60)


async def test_attach_starts_one_daemon_that_serves_search_and_sees_saves(workspace: Path, tmp_path: Path) -> None:
    overrides = _overrides(tmp_path / "state")
    config = _config(workspace, overrides)
    events: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()

    async def on_note(method: str, params: dict[str, Any]) -> None:
        await events.put((method, params))

    client = await _attach(config, overrides, subscribe=True, on_notification=on_note)
    try:
        status = await _first_pass_done(client)
        assert status.index.files_indexed == 4
        second = await _attach(config, overrides)
        assert second.daemon_pid == client.daemon_pid  # one daemon, shared
        clients = (await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)).clients
        assert len(clients) == 2
        await second.close()

        (workspace / "src" / "saved.py").write_text("def freshly_saved_function():\n    return 1\n")

        async def changed() -> dict[str, Any]:
            while True:
                method, params = await events.get()
                if method == Methods.INDEX_CHANGED and "src/saved.py" in params["paths"]:
                    return params

        note = await asyncio.wait_for(changed(), 10)
        assert note["report"]["files_indexed"] == 1
        result = await client.call(
            Methods.INDEX_SEARCH, SearchParams(query="freshly_saved_function", mode=SearchMode.LEXICAL)
        )
        assert result["hits"][0]["chunk"]["path"] == "src/saved.py"
    finally:
        await _stop(client)
    assert read_record(config.state_path) is None
    assert not (config.state_path / "daemon.sock").exists()


def _command(workspace: Path, state: Path, *args: str) -> Any:
    """``ided ARGS --json`` as a user runs it, on this test's state directory; its JSON answer."""
    sets = [f"state_dir={state}", "embedding.enabled=false", "daemon.idle_shutdown_seconds=0"]
    argv = [sys.executable, "-m", "daemon", *(a for s in sets for a in ("--set", s)), *args, "--json"]
    done = subprocess.run(argv, cwd=workspace, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


async def test_search_and_status_commands_answer_alike_through_the_daemon_and_without_it(
    workspace: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    search = ("search", "area of a circle", "--mode", "lexical", "-k", "5")
    alone = await asyncio.to_thread(_command, workspace, state, *search)  # indexes first, in the command
    alone_status = await asyncio.to_thread(_command, workspace, state, "status")
    assert "pid" not in alone_status  # the index's own status: no daemon answered
    assert alone_status["files_indexed"] == 4

    overrides = _overrides(state)
    client = await _attach(_config(workspace, overrides), overrides)
    try:
        await _first_pass_done(client)
        # the daemon holds the index: a command that opened it itself would be refused (workspace_busy)
        through = await asyncio.to_thread(_command, workspace, state, *search)
        status = await asyncio.to_thread(_command, workspace, state, "status")
        async with command_workspace(_config(workspace, overrides), command="status") as port:
            served = await port.status()
    finally:
        await _stop(client)
    assert [(h["chunk"]["path"], h["chunk"]["name"]) for h in through["hits"]] == [
        (h["chunk"]["path"], h["chunk"]["name"]) for h in alone["hits"]
    ]
    assert alone["hits"], alone
    assert status["pid"] == client.daemon_pid  # `daemon/status`'s answer, as before
    assert "cli" in [c["client"] for c in status["clients"]]  # the status command itself, attached
    assert status["index"]["files_indexed"] == alone_status["files_indexed"]
    assert served.daemon is not None and served.daemon.pid == client.daemon_pid  # the port says who answered
    async with command_workspace(_config(workspace, overrides), command="status") as port:
        assert (await port.status()).daemon is None  # the daemon is gone: this process opened the index


async def test_a_second_daemon_for_the_same_workspace_is_refused(workspace: Path, tmp_path: Path) -> None:
    overrides = _overrides(tmp_path / "state")
    config = _config(workspace, overrides)
    client = await _attach(config, overrides)
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "daemon", "--set", f"state_dir={tmp_path / 'state'}", "daemon", "-w", str(workspace),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        _, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 1
        assert f"already serves {workspace}" in err.decode()
    finally:
        await _stop(client)


async def test_a_killed_daemon_is_replaced_and_keeps_its_index(workspace: Path, tmp_path: Path) -> None:
    overrides = _overrides(tmp_path / "state")
    config = _config(workspace, overrides)
    client = await _attach(config, overrides)
    await _first_pass_done(client)
    pid = client.daemon_pid
    os.kill(pid, signal.SIGKILL)
    await client.wait_closed()
    await client.close()
    await _wait_gone(pid)
    assert read_record(config.state_path) is not None  # stale leftovers

    again = await _attach(config, overrides)
    try:
        assert again.daemon_pid != pid
        status = await _first_pass_done(again)
        report = status.index.last_report
        assert report is not None
        assert (report.files_indexed, report.files_unchanged) == (0, 4)  # no rebuild
        assert status.index.chunks > 0
    finally:
        await _stop(again)


async def test_the_daemon_stops_itself_when_idle(workspace: Path, tmp_path: Path) -> None:
    overrides = _overrides(tmp_path / "state", idle_shutdown_seconds=3)
    config = _config(workspace, overrides)
    client = await _attach(config, overrides)
    pid = client.daemon_pid
    await client.close()
    await _wait_gone(pid, 30)
    assert read_record(config.state_path) is None


async def test_a_daemon_no_editor_attached_to_stops_on_the_shorter_limit_and_says_so(
    workspace: Path, tmp_path: Path
) -> None:
    overrides = _overrides(tmp_path / "state", idle_shutdown_seconds=3600, idle_shutdown_no_editor_seconds=2)
    config = _config(workspace, overrides)
    agent = await DaemonClient.attach(config, client="mcp", overrides=overrides)
    pid = agent.daemon_pid
    status = await agent.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
    assert (status.idle_limit_seconds, status.editor_attached) == (2, False)
    command = await asyncio.create_subprocess_exec(
        *[sys.executable, "-P", "-m", "daemon", "--set", f"state_dir={tmp_path / 'state'}"],
        *["status", "-w", str(workspace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(command.communicate(), 120)
    shown = out.decode()
    assert "stops 2s after the last client leaves (no editor has attached)" in shown, shown
    await agent.close()
    await _wait_gone(pid, 60)  # the hour-long limit would keep it far longer
    assert read_record(config.state_path) is None


async def test_once_an_editor_attached_the_daemon_keeps_the_longer_idle_limit(workspace: Path, tmp_path: Path) -> None:
    overrides = _overrides(tmp_path / "state", idle_shutdown_seconds=3600, idle_shutdown_no_editor_seconds=2)
    config = _config(workspace, overrides)
    editor = await DaemonClient.attach(config, client="lsp", overrides=overrides)
    await editor.close()
    agent = await DaemonClient.attach(config, client="mcp", overrides=overrides)
    try:
        status = await agent.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
        assert (status.idle_limit_seconds, status.editor_attached) == (3600, True)
    finally:
        await _stop(agent)


async def test_malformed_frames_get_errors_and_the_connection_survives(workspace: Path, tmp_path: Path) -> None:
    overrides = _overrides(tmp_path / "state")
    config = _config(workspace, overrides)
    client = await _attach(config, overrides)
    try:
        record = read_record(config.state_path)
        assert record is not None
        reader, writer = await asyncio.open_unix_connection(record.socket)
        replies: list[dict[str, Any]] = []
        for frame in (b"not json\n", b"[1,2]\n", b"null\n", b"[" * 1000 + b"]" * 1000 + b"\n",
                      b'{"jsonrpc":"2.0","id":7,"method":"nope"}\n',
                      b'{"jsonrpc":"2.0","id":8,"method":"index/search","params":{"query":""}}\n',
                      b'{"jsonrpc":"2.0","id":9,"method":"daemon/status"}\n'):  # fmt: skip
            writer.write(frame)
            await writer.drain()
            replies.append(json.loads(await asyncio.wait_for(reader.readline(), 30)))
        codes = [r.get("error", {}).get("code") for r in replies]
        assert codes == [-32700, -32600, -32600, -32600, -32601, -32602, None]
        assert replies[-1]["result"]["pid"] == client.daemon_pid
        writer.close()
    finally:
        await _stop(client)


async def test_the_daemon_answers_code_intel_from_its_own_index_and_language_servers(
    tmp_path: Path, isolated_home: Path
) -> None:
    from tests.intel_tools import copy_workspace, intel_settings, require_server

    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    overrides = {**_overrides(tmp_path / "state"), "intel": intel_settings()}
    config = _config(workspace, overrides)
    client = await _attach(config, overrides)
    try:
        await _first_pass_done(client)
        by_position = await client.call(DEFINITION.daemon_method, {"file": "app.py", "line": 11, "column": 12})
        assert by_position["definitions"][0]["location"]["path"] == "shapes/report.py"
        by_name = await client.call(DEFINITION.daemon_method, {"symbol": "Reporter"})
        assert by_name["definitions"][0]["location"]["path"] == "shapes/report.py"
        status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
        python = next(s for s in status.servers if "python" in s.languages)
        assert python.state.value == "ready" and python.requests >= 2
        node = await client.call(AST_NODE.daemon_method, {"file": "app.py", "line": 11, "column": 12})
        assert node["node"]["type"] == "identifier"
        outside = client.call(DEFINITION.daemon_method, {"file": "../etc/passwd", "line": 1})
        with pytest.raises(Exception, match="outside the workspace"):
            await outside
    finally:
        await _stop(client)


async def test_a_branch_switch_touching_many_files_is_indexed_as_one_batch(workspace: Path, tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(workspace), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("-c", "user.email=t@e", "-c", "user.name=t", "commit", "-q", "-m", "the four fixture files")
    git("checkout", "-q", "-b", "feature")
    # Into a directory that exists on both branches, so the watcher sees one event per file (a new
    # directory can arrive as one event for the directory alone: the indexer's tests cover that).
    for i in range(60):
        (workspace / "src" / f"gen_module_{i}.py").write_text(f"def generated_function_{i}():\n    return {i}\n")
    git("add", "-A")
    git("-c", "user.email=t@e", "-c", "user.name=t", "commit", "-q", "-m", "many files")
    git("checkout", "-q", "main")  # the 60 files are gone on main

    overrides = _overrides(tmp_path / "state", batch_threshold=20, debounce_ms=200)
    config = _config(workspace, overrides)
    events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def on_note(method: str, params: dict[str, Any]) -> None:
        if method == Methods.INDEX_CHANGED:
            await events.put(params)

    client = await _attach(config, overrides, subscribe=True, on_notification=on_note)
    try:
        assert (await _first_pass_done(client)).index.files_indexed == 4
        while not events.empty():
            events.get_nowait()
        git("checkout", "-q", "feature")  # 60 files appear at once

        async def batches_until_indexed() -> list[dict[str, Any]]:
            notes: list[dict[str, Any]] = []
            while True:
                notes.append(await events.get())
                status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
                if status.index.files_indexed == 4 + 60:
                    return notes

        notes = await asyncio.wait_for(batches_until_indexed(), 60)
        assert len(notes) <= 3, [len(n["paths"]) for n in notes]  # a batch or two, never a storm of 60
        assert any(n["paths"] == [] for n in notes)  # past the threshold: one full pass
        result = await client.call(
            Methods.INDEX_SEARCH, SearchParams(query="generated_function_59", mode=SearchMode.LEXICAL)
        )
        assert result["hits"][0]["chunk"]["path"] == "src/gen_module_59.py"
        status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
        assert status.index.files_indexed == 4 + 60
    finally:
        await _stop(client)


async def test_a_directory_moved_in_whole_is_indexed_and_moving_it_out_unindexes_it(
    workspace: Path, tmp_path: Path
) -> None:
    # A rename reaches the watcher as one event for the directory, none for the files inside it.
    outside = tmp_path / "outside" / "vendored"
    outside.mkdir(parents=True)
    for i in range(5):
        (outside / f"part_{i}.py").write_text(f"def moved_in_function_{i}():\n    return {i}\n")
    overrides = _overrides(tmp_path / "state")
    config = _config(workspace, overrides)
    client = await _attach(config, overrides)

    async def files_indexed_becomes(n: int) -> None:
        while True:
            status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
            if status.index.files_indexed == n:
                return
            await asyncio.sleep(0.05)

    try:
        assert (await _first_pass_done(client)).index.files_indexed == 4
        outside.rename(workspace / "vendored")
        await asyncio.wait_for(files_indexed_becomes(4 + 5), 30)
        result = await client.call(
            Methods.INDEX_SEARCH, SearchParams(query="moved_in_function_3", mode=SearchMode.LEXICAL)
        )
        assert result["hits"][0]["chunk"]["path"] == "vendored/part_3.py"
        (workspace / "vendored").rename(outside)
        await asyncio.wait_for(files_indexed_becomes(4), 30)
    finally:
        await _stop(client)


async def test_sigterm_stops_the_daemon_cleanly(workspace: Path, tmp_path: Path) -> None:
    overrides = _overrides(tmp_path / "state")
    config = _config(workspace, overrides)
    client = await _attach(config, overrides)
    await _first_pass_done(client)
    pid = client.daemon_pid
    os.kill(pid, signal.SIGTERM)
    await asyncio.wait_for(client.wait_closed(), 30)
    await client.close()
    await _wait_gone(pid)
    assert read_record(config.state_path) is None  # a clean exit removes its record and socket
    assert not (config.state_path / "daemon.sock").exists()
    assert "daemon crashed" not in (config.state_path / "daemon.log").read_text()
