"""Unlucky disks and broken state, through the real CLI and ``ided mcp``: coded errors, never tracebacks.

* a full disk (a small tmpfs where mounting is permitted; a file-size limit, ``RLIMIT_FSIZE`` with
  SIGXFSZ ignored, everywhere): ``disk_full`` before the store could die of SIGBUS, and the index
  goes on once there is room;
* a state directory that cannot be written (a file in the way; read-only, as a read-only mount or,
  without root, a directory without write permission): ``state_unwritable`` from every command;
* an ``.ided.toml`` that is not UTF-8: ``config_invalid`` from the CLI, and an MCP server that still
  initializes and answers every tool with that error;
* a workspace held by another process: ``workspace_busy`` naming the holder with the right hint, a
  second daemon ``daemon_running``, and a daemon started while a command holds the index waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Generator
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from daemon.errors import ErrorCode
from mcp_servers.code_intel.server import TOOL_NAMES

pytestmark = pytest.mark.e2e

FILES = 1200
TIMEOUT_S = 180


def _make_workspace(root: Path, files: int = FILES) -> Path:
    for i in range(files):
        folder = root / f"pkg{i % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i}.py").write_text(
            f'def handler_{i}(request):\n    """Answer request {i}."""\n    return request.reply({i})\n'
        )
    return root


def _ided(
    workspace: Path, state: Path, *args: str, settings: tuple[str, ...] = (), limit_bytes: int | None = None
) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "daemon", "--set", f"state_dir={state}", "--set", "embedding.enabled=false"]
    for pair in ("daemon.idle_shutdown_seconds=0", *settings):
        argv += ["--set", pair]

    def file_size_limit() -> None:  # a write past it fails with EFBIG instead of killing the process
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        assert limit_bytes is not None
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run(
        [*argv, *args],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        preexec_fn=file_size_limit if limit_bytes is not None else None,
        check=False,
    )


def _assert_coded(result: subprocess.CompletedProcess[str], code: ErrorCode) -> None:
    assert result.returncode == 1, (result.returncode, result.stderr[-2000:])
    assert f"docs/errors.md#{code.value}" in result.stderr, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert "Fatal Python error" not in result.stderr


@contextlib.contextmanager
def _tmpfs(where: Path, size_mb: int, *, read_only: bool = False) -> Generator[Path]:
    """A small tmpfs at ``where`` (needs root and mount permission: skipped with the reason otherwise)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    where.mkdir(parents=True, exist_ok=True)
    options = f"size={size_mb}m" + (",ro" if read_only else "")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"mount is not permitted here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _remount(where: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(where)], check=True)


@pytest.fixture
def workspace(tmp_path: Path, isolated_home: Path) -> Path:
    return _make_workspace(tmp_path / "ws")


# -- disk full ----------------------------------------------------------------------------------


def test_a_file_size_limit_is_a_disk_full_error_not_a_crash(workspace: Path, tmp_path: Path) -> None:
    result = _ided(workspace, tmp_path / "state", "index", limit_bytes=4 * 2**20)
    _assert_coded(result, ErrorCode.DISK_FULL)
    assert "ulimit -f" in result.stderr


def test_a_full_disk_stops_the_pass_with_disk_full_and_the_next_pass_loses_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    with _tmpfs(tmp_path / "disk", 24) as disk:
        state = disk / "state"
        before = _ided(workspace, state, "index")  # 24 MiB is below the default 64 MiB to keep free
        _assert_coded(before, ErrorCode.DISK_FULL)
        assert "min_free_disk_mb" in before.stderr

        # a margin the store can start under, but not finish: the pass stops mid-way, coded, no SIGBUS
        mid = _ided(workspace, state, "index", settings=("index.min_free_disk_mb=14",))
        _assert_coded(mid, ErrorCode.DISK_FULL)

        _remount(disk, "size=512m")  # space comes back
        again = _ided(workspace, state, "index", "--json")
        assert again.returncode == 0, again.stderr[-2000:]
        status = _ided(workspace, state, "status", "--json")
        assert '"files_indexed": 1200' in status.stdout
        assert '"chunks": 1200' in status.stdout


def test_a_detached_daemon_on_a_full_disk_says_why_and_logs_it(workspace: Path, tmp_path: Path) -> None:
    with _tmpfs(tmp_path / "disk", 24) as disk:
        result = _ided(workspace, disk / "state", "daemon", "--detach")
        _assert_coded(result, ErrorCode.DISK_FULL)

        started = _ided(workspace, disk / "state", "daemon", "--detach", settings=("index.min_free_disk_mb=14",))
        try:
            assert started.returncode == 0, started.stderr[-2000:]
        finally:
            _ided(workspace, disk / "state", "stop")
        log = (disk / "state" / "daemon.log").read_text()
        assert "[disk_full]" in log  # the first pass stopped and said so before anything else


# -- state directory that cannot be written ---------------------------------------------------------


@pytest.mark.parametrize(
    "command", [("status",), ("index",), ("search", "handler"), ("daemon",), ("daemon", "--detach")]
)
def test_a_state_dir_below_a_file_is_state_unwritable_for_every_command(
    workspace: Path, tmp_path: Path, command: tuple[str, ...]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    _assert_coded(_ided(workspace, blocker / "state", *command), ErrorCode.STATE_UNWRITABLE)


@contextlib.contextmanager
def _read_only(state: Path) -> Generator[None]:
    """Make ``state`` (already written) read-only: a read-only remount as root, else a mode without write."""
    if os.geteuid() == 0:
        _remount(state.parent, "ro")
        try:
            yield
        finally:
            _remount(state.parent, "rw")
    else:
        state.chmod(0o500)
        try:
            yield
        finally:
            state.chmod(0o700)


@pytest.mark.parametrize("command", [("status",), ("index",), ("daemon",), ("daemon", "--detach")])
def test_a_read_only_state_directory_is_state_unwritable(
    workspace: Path, tmp_path: Path, command: tuple[str, ...]
) -> None:
    with contextlib.ExitStack() as stack:
        disk = stack.enter_context(_tmpfs(tmp_path / "disk", 256)) if os.geteuid() == 0 else tmp_path
        state = disk / "state"
        first = _ided(workspace, state, "index")
        assert first.returncode == 0, first.stderr[-2000:]
        stack.enter_context(_read_only(state))
        _assert_coded(_ided(workspace, state, *command), ErrorCode.STATE_UNWRITABLE)


# -- a configuration that is not UTF-8 ------------------------------------------------------------------


def test_a_config_that_is_not_utf8_is_config_invalid_for_the_cli(workspace: Path, tmp_path: Path) -> None:
    (workspace / ".ided.toml").write_bytes(b'[index]\nexclude = ["\xff\xfe"]\n')
    result = _ided(workspace, tmp_path / "state", "status")
    _assert_coded(result, ErrorCode.CONFIG_INVALID)
    assert "not UTF-8" in result.stderr


async def _mcp_tool_errors(workspace: Path, state: Path, tmp_path: Path, mode: str) -> list[str]:
    """``ided mcp`` behind the SDK's stdio client: it lists every tool; returns what ``search_code`` (an error)
    and ``index_status`` (an error, or a status whose ``index_note`` says why there is no index) answer."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-P", "-m", "daemon", "mcp", mode, "-w", str(workspace)],
        env={
            "IDED_STATE_DIR": str(state),
            "IDED_EMBEDDING__ENABLED": "false",
            "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
            "HF_HUB_OFFLINE": "1",
        },
        cwd=str(workspace),
    )
    errlog_path = tmp_path / "mcp-stderr.log"
    answers: list[str] = []
    with errlog_path.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=60) as client:
            tools = await asyncio.wait_for(client.list_tools(), 60)
            assert {tool.name for tool in tools.tools} == set(TOOL_NAMES)
            # search first: it waits for the index to open (or fail), so the status after it knows why
            for name, arguments in (("search_code", {"query": "handler"}), ("index_status", {})):
                result = await asyncio.wait_for(client.call_tool(name, arguments), 60)
                text = "".join(getattr(block, "text", "") for block in result.content)
                assert result.is_error or name == "index_status", text
                answers.append(text)
    assert "Traceback" not in errlog_path.read_text()
    return answers


async def test_mcp_with_a_config_that_is_not_utf8_initializes_and_answers_config_invalid(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / ".ided.toml").write_bytes(b'[index]\nexclude = ["\xff\xfe"]\n')
    for text in await _mcp_tool_errors(workspace, tmp_path / "state", tmp_path, "--standalone"):
        assert "not UTF-8" in text and f"#{ErrorCode.CONFIG_INVALID.value}" in text


@pytest.mark.parametrize("mode", ["--attach", "--standalone"])
async def test_mcp_with_an_unwritable_state_dir_answers_state_unwritable(
    workspace: Path, tmp_path: Path, mode: str
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    for text in await _mcp_tool_errors(workspace, blocker / "state", tmp_path, mode):
        assert f"#{ErrorCode.STATE_UNWRITABLE.value}" in text


# -- a workspace held by another process --------------------------------------------------------------

_HOLDER = """
import sys
from pathlib import Path
from daemon.config import load_config
from daemon.index.workspace_index import WorkspaceIndex
config = load_config(Path(sys.argv[1]), overrides={"state_dir": sys.argv[2], "embedding": {"enabled": False}})
with WorkspaceIndex.open(config, holder=sys.argv[3]):
    print("holding", flush=True)
    sys.stdin.read()
"""


@contextlib.contextmanager
def _held(workspace: Path, state: Path, holder: str) -> Generator[subprocess.Popen[str]]:
    """A real process holding the workspace's index as ``holder`` until the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(workspace), str(state), holder],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdin is not None
    try:
        assert proc.stdout.readline().strip() == "holding"
        yield proc
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        proc.stdout.close()


def test_a_second_index_while_one_runs_says_to_wait_not_to_stop_a_daemon(workspace: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    with _held(workspace, state, "ided index") as holder:
        result = _ided(workspace, state, "index")
    _assert_coded(result, ErrorCode.WORKSPACE_BUSY)
    assert f"`ided index` (pid {holder.pid})" in result.stderr
    assert "wait for it to finish" in result.stderr
    assert "`ided stop` stops only a daemon" in result.stderr


def test_a_daemon_started_while_a_command_holds_the_index_waits_for_it(workspace: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    argv = [sys.executable, "-m", "daemon", "--set", f"state_dir={state}", "--set", "embedding.enabled=false"]
    argv += ["--set", "daemon.idle_shutdown_seconds=0", "daemon", "--detach"]
    with _held(workspace, state, "ided status"):
        daemon = subprocess.Popen(argv, cwd=workspace, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # the daemon's log says it waits (the one observable sign); then the holder lets go
        _wait_for_line(state / "daemon.log", "to release the index", daemon)
    _, err = daemon.communicate(timeout=TIMEOUT_S)
    try:
        assert daemon.returncode == 0, err
        status = _ided(workspace, state, "status", "--json")
        assert status.returncode == 0, status.stderr
        assert '"pid"' in status.stdout  # answered by the daemon
    finally:
        _ided(workspace, state, "stop")


def _wait_for_line(path: Path, needle: str, proc: subprocess.Popen[str]) -> None:
    """Block until ``path`` holds ``needle`` (read as it grows; bounded, and failing as soon as ``proc`` exits)."""
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        if path.exists() and needle in path.read_text():
            return
        assert proc.poll() is None, (
            f"the daemon exited with {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}"
        )
        time.sleep(0.05)
    raise AssertionError(f"{needle!r} never appeared in {path}")


def test_a_daemon_and_a_status_started_at_once_both_succeed(workspace: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    argv = [sys.executable, "-m", "daemon", "--set", f"state_dir={state}", "--set", "embedding.enabled=false"]
    argv += ["--set", "daemon.idle_shutdown_seconds=0", "--set", "logging.level=INFO", "daemon"]
    log_path = tmp_path / "daemon.log"
    with log_path.open("w") as log:
        daemon = subprocess.Popen(argv, cwd=workspace, stdout=subprocess.DEVNULL, stderr=log, text=True)
    try:
        status = _ided(workspace, state, "status", "--json")  # in-process, or through the daemon once it is up
        assert status.returncode == 0, status.stderr[-2000:]
        assert '"workspace"' in status.stdout
        _wait_for_line(log_path, "listening on", daemon)  # it did not die of the lock: it serves
        stopped = _ided(workspace, state, "stop")
        assert "stopped daemon pid" in stopped.stderr, stopped.stderr
        assert daemon.wait(timeout=TIMEOUT_S) == 0  # it served and stopped cleanly: it did not die of the lock
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()


def test_a_second_daemon_is_told_one_already_runs(workspace: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = _ided(workspace, state, "daemon", "--detach")
    assert first.returncode == 0, first.stderr
    try:
        second = _ided(workspace, state, "daemon")
        _assert_coded(second, ErrorCode.DAEMON_RUNNING)
        assert "`ided stop` stops it" in second.stderr
    finally:
        _ided(workspace, state, "stop")
