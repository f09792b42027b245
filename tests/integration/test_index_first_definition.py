"""A definition by name is answered from the index at once while the language server still starts,
and by the server once it is ready. The server is the real basedpyright, held before it starts until
the test opens a gate (a FIFO its launcher reads from): no timing decides which answer comes."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
from pathlib import Path

import pytest

from daemon.core.intel_models import LanguageServerState
from daemon.service.code_intel import CodeIntelService
from daemon.service.intel_params import DefinitionParams
from tests.intel_tools import SEARCH_PATH, copy_workspace, require_server, workspace_config

pytestmark = pytest.mark.asyncio

LAUNCHER = """#!/bin/sh
read _ < "{gate}"
exec "{server}" "$@"
"""


def _gated_server(tmp_path: Path) -> Path:
    """A ``basedpyright-langserver`` that starts the real one once a line is written to the gate FIFO."""
    real = shutil.which("basedpyright-langserver", path=os.pathsep.join(SEARCH_PATH))
    if real is None:
        pytest.skip("basedpyright-langserver is not installed (run scripts/install-test-tools.sh)")
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    bin_dir = tmp_path / "gated-bin"
    bin_dir.mkdir()
    launcher = bin_dir / "basedpyright-langserver"
    launcher.write_text(LAUNCHER.format(gate=gate, server=real))
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    return gate


def _open_gate(gate: Path) -> None:
    with gate.open("w") as fh:  # blocks until the launcher has opened it for reading
        fh.write("go\n")


async def test_a_name_is_answered_from_the_index_while_the_server_starts_then_by_the_server(tmp_path: Path) -> None:
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    gate = _gated_server(tmp_path)
    intel = {"search_path": [str(tmp_path / "gated-bin"), *SEARCH_PATH], "prestart": True, "ready_wait_seconds": 60}
    config = workspace_config(workspace, tmp_path / "state", intel=intel)
    async with CodeIntelService.open(config) as service:
        server = service.pool.server_for("python")
        assert server.name == "basedpyright"
        first = await asyncio.wait_for(service.find_definition(DefinitionParams(symbol="Reporter.render")), 30)
        assert server.status().state is LanguageServerState.STARTING  # still held at the gate
        assert first.answered_by == "index" and first.server is None
        (definition,) = first.definitions
        assert (definition.location.path, definition.symbol) == ("shapes/report.py", "Reporter.render")
        assert definition.source is not None and definition.source.lstrip().startswith("def render(")
        assert any("language server basedpyright is starting" in note for note in first.notes)

        await asyncio.to_thread(_open_gate, gate)
        # the server's own answer, once it is ready (waited for by the call itself, within ready_wait)
        await asyncio.wait_for(service.pool.run("python", _loaded), 60)
        later = await asyncio.wait_for(service.find_definition(DefinitionParams(symbol="Reporter.render")), 60)
        assert later.answered_by == "language_server" and later.server == "basedpyright"
        (served,) = later.definitions
        assert (served.location.path, served.location.range.start_line) == (
            "shapes/report.py",
            definition.location.range.start_line,
        )


async def _loaded(_client: object, _doc: object) -> None:
    """An operation that only passes the pool's readiness gate: the server has loaded the workspace."""
