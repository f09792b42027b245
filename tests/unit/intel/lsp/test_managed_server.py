"""One warm server per language: lazy start, readiness gate, restart-once on crash or hang, crash-loop stop.

These drive the real Python language server from scripts/install-test-tools.sh.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp

from daemon.config import IntelConfig, LanguageServerConfig
from daemon.core.intel_models import LanguageServerState
from daemon.errors import InvalidToolInput, LanguageServerError, LanguageServerNotReady, LanguageServerSlow
from daemon.intel.lsp.client import LspClient
from daemon.intel.lsp.convert import lsp_targets
from daemon.intel.lsp.documents import OpenDocument
from daemon.intel.lsp.managed_server import node_options
from daemon.intel.lsp.pool import LanguageServerPool
from tests.intel_tools import copy_workspace, intel_config, require_server

TIMEOUT = 60.0


async def definition_of_distance_to(pool: LanguageServerPool, workspace: Path, **kwargs: Any) -> list[str]:
    """Ask for the definition of `first.distance_to` in app.py; returns the file names it points at."""

    async def op(client: LspClient, doc: OpenDocument | None) -> Any:
        assert doc is not None
        params = lsp.DefinitionParams(
            text_document=lsp.TextDocumentIdentifier(uri=doc.uri), position=doc.position(10, 17)
        )
        return await client.request(lsp.TEXT_DOCUMENT_DEFINITION, params, timeout_s=pool.config.request_timeout_seconds)

    result = await asyncio.wait_for(pool.run("python", op, path=workspace / "app.py", **kwargs), TIMEOUT)
    return [target.path.name for target in lsp_targets(result)]


def python_status(pool: LanguageServerPool) -> Any:
    return next(s for s in pool.statuses() if "python" in s.languages)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    require_server("python")
    return copy_workspace("intel_python", tmp_path)


async def test_the_server_starts_on_the_first_call_and_stays_warm_for_the_next(workspace: Path) -> None:
    async with LanguageServerPool(workspace, intel_config()) as pool:
        assert python_status(pool).state is LanguageServerState.NOT_STARTED
        assert python_status(pool).pid is None
        assert await definition_of_distance_to(pool, workspace) == ["geometry.py"]
        first = python_status(pool)
        assert first.state is LanguageServerState.READY
        assert await definition_of_distance_to(pool, workspace) == ["geometry.py"]
        assert python_status(pool).pid == first.pid
        assert python_status(pool).requests == 2


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


async def test_the_server_runs_with_the_configured_node_options_added_to_the_inherited_ones(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NODE_OPTIONS", "--trace-warnings")
    async with LanguageServerPool(workspace, intel_config()) as pool:
        assert await definition_of_distance_to(pool, workspace) == ["geometry.py"]
        pid = python_status(pool).pid
        assert pid is not None
        assert _environ(pid)["NODE_OPTIONS"] == "--trace-warnings --max-semi-space-size=4"


def test_node_options_the_environment_sets_win_and_empty_ones_change_nothing() -> None:
    ours = "--max-semi-space-size=2 --max-old-space-size=4096"
    assert node_options(ours, {}) == {"NODE_OPTIONS": ours}
    assert node_options(ours, {"NODE_OPTIONS": "--max-semi-space-size=16"}) == {
        "NODE_OPTIONS": "--max-semi-space-size=16 --max-old-space-size=4096"
    }
    assert node_options(ours, {"NODE_OPTIONS": "--max-semi-space-size=8 --max-old-space-size=512"}) == {}
    assert node_options("", {"NODE_OPTIONS": "--inspect"}) == {}


async def test_a_call_while_the_server_starts_answers_not_ready_with_how_long_it_has_been_starting(
    workspace: Path,
) -> None:
    async with LanguageServerPool(workspace, intel_config()) as pool:
        with pytest.raises(LanguageServerNotReady, match=r"is not ready: starting for \d+\.\d s"):
            await definition_of_distance_to(pool, workspace, ready_wait=0)
        assert await definition_of_distance_to(pool, workspace) == ["geometry.py"]


async def test_a_killed_server_is_restarted_and_the_next_call_answered(workspace: Path) -> None:
    async with LanguageServerPool(workspace, intel_config()) as pool:
        await definition_of_distance_to(pool, workspace)
        old_pid = python_status(pool).pid
        assert old_pid is not None
        os.killpg(old_pid, signal.SIGKILL)  # the whole process group: wrapper and node alike
        assert await definition_of_distance_to(pool, workspace) == ["geometry.py"]
        status = python_status(pool)
        assert status.restarts == 1
        assert status.pid not in (None, old_pid)


async def test_a_hung_server_is_killed_and_the_call_retried_once(workspace: Path) -> None:
    # the stopped server is found hung after this timeout and a ping's; the restarted one must then
    # answer its first request within it, which a cold basedpyright on a loaded machine took >2 s to
    async with LanguageServerPool(workspace, intel_config(request_timeout_seconds=8.0)) as pool:
        await definition_of_distance_to(pool, workspace)
        old_pid = python_status(pool).pid
        assert old_pid is not None
        os.killpg(old_pid, signal.SIGSTOP)  # the whole process group: wrapper and node alike
        assert await definition_of_distance_to(pool, workspace) == ["geometry.py"]
        status = python_status(pool)
        assert status.restarts == 1
        assert status.crashes_recent == 1
        assert status.pid not in (None, old_pid)


async def test_a_slow_request_on_a_live_server_is_cancelled_and_the_server_kept(workspace: Path) -> None:
    async with LanguageServerPool(workspace, intel_config()) as pool:
        assert await definition_of_distance_to(pool, workspace) == ["geometry.py"]
        pid = python_status(pool).pid

        async def impatient(client: LspClient, doc: OpenDocument | None) -> Any:
            assert doc is not None
            params = lsp.HoverParams(
                text_document=lsp.TextDocumentIdentifier(uri=doc.uri), position=doc.position(10, 17)
            )
            return await client.request(lsp.TEXT_DOCUMENT_HOVER, params, timeout_s=0)  # runs past it at once

        with pytest.raises(LanguageServerSlow, match=r"still answers, so it keeps running") as caught:
            await asyncio.wait_for(pool.run("python", impatient, path=workspace / "app.py"), TIMEOUT)
        assert caught.value.code.value == "language_server_slow"
        status = python_status(pool)
        assert (status.pid, status.restarts, status.crashes_recent) == (pid, 0, 0)
        assert status.state is LanguageServerState.READY
        assert await definition_of_distance_to(pool, workspace) == ["geometry.py"]


async def test_repeated_crashes_are_reported_and_not_restarted_in_a_loop(tmp_path: Path) -> None:
    starts = tmp_path / "starts.log"
    crasher = LanguageServerConfig(
        command=sys.executable,
        args=("-c", f"import sys; open({str(starts)!r}, 'a').write('x'); sys.exit(3)"),
    )
    config = IntelConfig(servers={"python": crasher}, max_restarts=2)
    (tmp_path / "app.py").write_text("x = 1\n")
    async with LanguageServerPool(tmp_path, config) as pool:
        for _ in range(3):
            with pytest.raises(LanguageServerError, match="exit"):
                await definition_of_distance_to(pool, tmp_path)
        for _ in range(2):
            with pytest.raises(LanguageServerError, match="crashed 3 times in the last 300 s; not restarted"):
                await definition_of_distance_to(pool, tmp_path)
        assert starts.read_text() == "xxx"
        assert python_status(pool).state is LanguageServerState.FAILED


async def test_a_language_without_an_installed_server_answers_with_the_install_hint(tmp_path: Path) -> None:
    (tmp_path / "Main.java").write_text("class Main {}\n")
    config = IntelConfig(search_path=(str(tmp_path),))
    async with LanguageServerPool(tmp_path, config) as pool:

        async def op(client: LspClient, doc: OpenDocument | None) -> None:
            raise AssertionError("no server should run")

        with pytest.raises(LanguageServerError, match=r"jdtls.*install"):
            await pool.run("java", op, path=tmp_path / "Main.java")
        with pytest.raises(InvalidToolInput, match="no language server is known for 'markdown'"):
            pool.server_for("markdown")
