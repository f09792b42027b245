"""ACP and MCP open no workspace outside what the user allows: system folders, strangers' folders, bad paths.

Through the real ``ided acp`` process (the SDK's client) with the default roots (the home folder and
the folder it was started in), and the real ``ided mcp`` command line. Prints one ``[adversarial]``
line per front with the escapes tried and refused.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from acp import RequestError

from tests.adversarial.hostile_workspace import Tally
from tests.e2e.acp_support import WAIT_S, env_for, fixture_repo, initialize, spawn_ided_acp

pytestmark = pytest.mark.e2e


def _hostile_folders(tmp_path: Path) -> dict[str, str]:
    """cwd -> the words the refusal must hold."""
    stranger = tmp_path / "stranger"  # exists, but under neither the home folder nor the launch folder
    stranger.mkdir()
    folders = {
        "/": "system folder",
        "/etc": "system folder",
        "/proc/self": "system folder",
        "/sys": "system folder",
        "/dev": "system folder",
        str(tmp_path / "does" / "not" / "exist"): "does not exist",
        "/" + "a" * 4999: "longer than the system allows",
        str(stranger): "outside the allowed roots",
    }
    # a system folder this machine does not have is left out
    return {f: w for f, w in folders.items() if f.startswith(str(tmp_path)) or len(f) > 100 or os.path.isdir(f)}


async def test_acp_session_new_refuses_folders_outside_the_allowed_roots_at_once(tmp_path: Path) -> None:
    tally = Tally("acp session/new")
    repo = fixture_repo(tmp_path)
    env = {k: v for k, v in env_for(tmp_path, None).items() if k != "IDED_ROOTS__ALLOWED"}  # the default roots
    async with spawn_ided_acp(tmp_path, env, cwd=repo) as agent:
        await initialize(agent.conn)
        for cwd, words in _hostile_folders(tmp_path).items():
            try:
                await asyncio.wait_for(agent.conn.new_session(cwd=cwd, mcp_servers=[]), WAIT_S)
            except RequestError as exc:
                tally.escape(True, cwd)
                assert exc.code == -32602
                assert "workspace_refused" in str(exc.data) and words in str(exc.data), exc.data
            else:
                tally.escape(False, f"session/new opened {cwd[:60]}")
        session = await asyncio.wait_for(agent.conn.new_session(cwd=str(repo), mcp_servers=[]), WAIT_S)
        assert session.session_id  # the launch folder itself is allowed
    print(tally.line())
    assert tally.leaks == []


def test_mcp_refuses_a_workspace_outside_the_allowed_roots_before_serving(tmp_path: Path) -> None:
    # a folder named on the command line is the user's choice, as for `ided run -w DIR`: only the roots the
    # user sets (here a folder of their own) limit it, and no setting admits a system folder or a bad path
    tally = Tally("mcp --workspace")
    launch = tmp_path / "launch"
    launch.mkdir()
    mine = tmp_path / "mine"
    mine.mkdir()
    env = {**env_for(tmp_path, None), "IDED_ROOTS__ALLOWED": json.dumps([str(mine)])}
    env["PATH"] = os.environ.get("PATH", "")
    for folder, words in _hostile_folders(tmp_path).items():
        done = subprocess.run(
            [sys.executable, "-P", "-m", "mcp_servers.code_intel", "--workspace", folder],
            cwd=launch,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=WAIT_S,
            check=False,
        )
        refused = done.returncode == 2 and "workspace_refused" in done.stderr and words in done.stderr
        tally.escape(refused, f"mcp served {folder[:60]}: rc {done.returncode}, {done.stderr[-300:]}")
    print(tally.line())
    assert tally.leaks == []
