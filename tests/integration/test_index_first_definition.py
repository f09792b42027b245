"""A definition by name is answered from the index at once while the language server still starts,
and by the server once it is ready; a Tree-sitter scan without either gives the index's answer. The
server is the real basedpyright, held before it starts until the test opens a gate (a FIFO its
launcher reads from): no timing decides which answer comes."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from daemon.core.intel_models import DefinitionResult, LanguageServerState
from daemon.core.models import SearchMode
from daemon.service.intel.code_intel import CodeIntelService
from daemon.service.intel.params import DefinitionParams
from daemon.service.intel.scanned_definitions import SCAN_NOTE, ScannedDefinitions
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
        # prestart may not have reached the server yet on a loaded machine: the call itself starts it then
        starting = ("language server basedpyright is starting", "language server basedpyright is not_started")
        assert any(says in note for note in first.notes for says in starting), first.notes

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


@pytest.mark.parametrize("name", ["Reporter.render", "centroid", "shapes.centroid", "shapes.geometry.Point", "Point"])
async def test_a_scan_without_index_or_server_gives_the_answer_the_index_gives(tmp_path: Path, name: str) -> None:
    """What ``ided mcp`` answers while its workspace opens (``ScannedDefinitions``) is the service's
    index answer: the same definitions, targets and notes, plus the note saying it came from a scan."""
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    gate = _gated_server(tmp_path)
    intel = {"search_path": [str(tmp_path / "gated-bin"), *SEARCH_PATH], "prestart": True, "ready_wait_seconds": 60}
    config = workspace_config(workspace, tmp_path / "state", intel=intel)
    scanned = await asyncio.to_thread(ScannedDefinitions(config).answer, DefinitionParams(symbol=name))
    async with CodeIntelService.open(config) as service:
        # a search waits for the startup pass (it holds the index): the name is then answered from the index
        await asyncio.wait_for(asyncio.to_thread(service.index.search, "Reporter", 1, None, SearchMode.LEXICAL), 60)
        indexed = await asyncio.wait_for(service.find_definition(DefinitionParams(symbol=name)), 30)
        await asyncio.to_thread(_open_gate, gate)
    assert indexed.answered_by == "index" and scanned is not None
    assert scanned.definitions == indexed.definitions and scanned.definitions
    assert (scanned.query, scanned.total, scanned.truncated, scanned.server, scanned.answered_by) == (
        indexed.query,
        indexed.total,
        indexed.truncated,
        indexed.server,
        indexed.answered_by,
    )
    assert scanned.notes[-1] == SCAN_NOTE
    assert scanned.notes[:-1] == tuple(n for n in indexed.notes if not n.startswith("answered from the workspace"))
    assert not any("Tree-sitter scan" in note for note in indexed.notes)  # the index's own answer


async def test_a_scan_told_to_stop_gives_no_answer(tmp_path: Path) -> None:
    workspace = copy_workspace("intel_python", tmp_path)
    scanned = ScannedDefinitions(workspace_config(workspace, tmp_path / "state"))

    def answer(stop: bool = False, **params: Any) -> DefinitionResult | None:
        return scanned.answer(DefinitionParams(**params), stop=lambda: stop)

    assert await asyncio.to_thread(answer, True, symbol="Reporter.render") is None
    found = await asyncio.to_thread(answer, symbol="Reporter.render")
    assert found is not None and found.definitions[0].location.path == "shapes/report.py"
    assert await asyncio.to_thread(answer, symbol="NoSuchThing") is None  # the workspace says it is not found
    assert await asyncio.to_thread(answer, file="app.py", line=11, column=12) is None  # positions: the server


async def test_a_scan_leaves_a_name_no_language_server_would_answer_to_the_workspace(tmp_path: Path) -> None:
    """With the Python server disabled the service answers a name with an error saying so, never the index:
    the scan gives no answer either, so the workspace's error is what the client sees."""
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    intel = {"servers": {"python": {"enabled": False}}}
    config = workspace_config(workspace, tmp_path / "state", intel=intel)
    params = DefinitionParams(symbol="Reporter.render")
    assert await asyncio.to_thread(ScannedDefinitions(config).answer, params) is None
    enabled = ScannedDefinitions(workspace_config(workspace, tmp_path / "state"))
    assert await asyncio.to_thread(enabled.answer, params) is not None
