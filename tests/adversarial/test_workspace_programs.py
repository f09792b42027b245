"""A cloned repository's own programs never run until the user trusts its workspace.

The hostile repository commits, with the exec bit, what a language-server look-up or a server's own
defaults would pick up: ``venv/bin/basedpyright-langserver`` (a script that leaves a marker, then
runs the real server), ``.venv/bin/python`` (basedpyright runs it to learn its search paths),
``node_modules/.bin/typescript-language-server`` and ``node_modules/typescript/lib/tsserver.js``
(typescript-language-server prefers the workspace's TypeScript). It is cloned fresh, as a user
would, and served over MCP (real stdio, servers prestarted, the user's servers on ``PATH``): no
marker may appear, the answers come from the user's servers. Trusted (``ided trust``), the
workspace's programs are used: the markers appear, which shows the test can fail.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from daemon.trust import TrustStore
from tests.intel_tools import SEARCH_PATH, require_server
from tests.vcs_support import git, make_repo

pytestmark = pytest.mark.e2e

CALL_TIMEOUT = 120.0
TOOLS = Path(SEARCH_PATH[0]).parents[1].resolve()


APP_TS = "export function area(w: number, h: number): number {\n  return w * h;\n}\nconsole.log(area(2, 3));\n"


def _installed(name: str) -> Path:
    return next(Path(d) / name for d in SEARCH_PATH if (Path(d) / name).exists())


def _script(marker: Path, then: str) -> str:
    return f"#!/bin/sh\ntouch {marker}\n{then}\n"


def hostile_clone(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    """A repository that ships programs, cloned fresh; and the marker each program leaves."""
    markers = {name: tmp_path / f"RAN-{name}" for name in ("venv-server", "venv-python", "ts-server", "tsserver")}
    real_pyright = _installed("basedpyright-langserver")
    real_ts = _installed("typescript-language-server")
    files = {
        "calc.py": "def add(a, b):\n    return a + b\n\n\nprint(add(1, 2))\n",
        "app.ts": APP_TS,
        "venv/bin/basedpyright-langserver": _script(markers["venv-server"], f'exec {real_pyright} "$@"'),
        ".venv/bin/python": _script(markers["venv-python"], "exit 1"),
        "node_modules/.bin/typescript-language-server": _script(markers["ts-server"], f'exec {real_ts} "$@"'),
        "node_modules/typescript/package.json": json.dumps({"name": "typescript", "version": "5.4.5"}),
        "node_modules/typescript/lib/tsserver.js": f"require('fs').writeFileSync({str(markers['tsserver'])!r}, '');\n",
    }
    origin = make_repo(tmp_path / "origin", files)
    for rel in ("venv/bin/basedpyright-langserver", ".venv/bin/python", "node_modules/.bin/typescript-language-server"):
        git(origin, "update-index", "--chmod=+x", rel)
    git(origin, "commit", "-q", "-m", "ship programs")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True, timeout=60)
    assert os.access(clone / "venv" / "bin" / "basedpyright-langserver", os.X_OK), "the exec bit survives git"
    return clone, markers


def _env(tmp_path: Path) -> dict[str, str]:
    """The user's environment: their servers on PATH (not intel.search_path, which is searched first)."""
    return {
        "PATH": os.pathsep.join([*SEARCH_PATH, os.environ.get("PATH", os.defpath)]),
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
        "IDED_STATE_DIR": str(tmp_path / "state"),
        "IDED_EMBEDDING__ENABLED": "false",
        "IDED_INTEL__PRESTART": "true",
        "HF_HUB_OFFLINE": "1",
    }


@asynccontextmanager
async def mcp(repo: Path, tmp_path: Path) -> AsyncGenerator[tuple[Client, str]]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-P", "-m", "daemon", "mcp", "--standalone", "-w", str(repo)],
        env=_env(tmp_path),
        cwd=str(repo),
    )
    with (tmp_path / "mcp-stderr.log").open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=CALL_TIMEOUT) as client:
            yield client, client.instructions or ""


async def _definition(client: Client, file: str, line: int, column: int) -> tuple[bool, str]:
    result = await asyncio.wait_for(
        client.call_tool("find_definition", {"file": file, "line": line, "column": column}), CALL_TIMEOUT
    )
    text = "".join(getattr(block, "text", "") for block in result.content)
    return bool(result.is_error), text


async def test_a_cloned_repositorys_programs_do_not_run_until_it_is_trusted(tmp_path: Path) -> None:
    require_server("python")
    require_server("typescript")
    repo, markers = hostile_clone(tmp_path)
    async with mcp(repo, tmp_path) as (client, _):
        error, text = await _definition(client, "calc.py", 5, 7)
        assert not error and "calc.py" in text, text  # answered by the user's basedpyright
        error, text = await _definition(client, "app.ts", 4, 13)
        assert not error and "app.ts" in text, text  # answered by the user's TypeScript
    ran = sorted(name for name, marker in markers.items() if marker.exists())
    print(f"[adversarial] programs shipped by the repository: {len(markers)}, ran untrusted: {len(ran)} {ran}")
    assert ran == []

    TrustStore.default({"XDG_CONFIG_HOME": str(tmp_path / "home" / ".config")}).add(repo)
    async with mcp(repo, tmp_path) as (client, _):
        await _definition(client, "calc.py", 5, 7)
        await _definition(client, "app.ts", 4, 13)
    assert sorted(name for name, marker in markers.items() if marker.exists()) == sorted(markers)


def test_untrusted_lookups_skip_the_workspaces_bins_and_its_path_entries(tmp_path: Path) -> None:
    """The look-up alone: a PATH entry inside the workspace (a relative one, or an absolute one) is dropped."""
    from daemon.config import IntelConfig
    from daemon.intel.lsp.registry import resolve_servers

    repo, _ = hostile_clone(tmp_path)
    env_path = os.pathsep.join([str(repo / "venv" / "bin"), "venv/bin", "", *SEARCH_PATH])
    saved = os.environ["PATH"]
    os.environ["PATH"] = env_path
    try:
        untrusted = {s.name: s for s in resolve_servers(IntelConfig(), repo)}
        trusted = {s.name: s for s in resolve_servers(IntelConfig(), repo, trusted=True)}
    finally:
        os.environ["PATH"] = saved
    python: Any = untrusted["basedpyright"]
    assert python.command is not None and not Path(python.command).is_relative_to(repo)
    assert str(repo) not in python.env["PATH"] and "venv/bin" not in python.env["PATH"].split(os.pathsep)
    interpreter = python.settings["python"]["pythonPath"]
    assert interpreter and not Path(interpreter).is_relative_to(repo)
    ts: Any = untrusted["typescript-language-server"]
    assert Path(ts.settings["initializationOptions"]["tsserver"]["path"]).is_relative_to(TOOLS)
    assert trusted["basedpyright"].command == str(repo / "venv" / "bin" / "basedpyright-langserver")


def test_no_built_in_server_name_is_taken_from_the_workspaces_bins_untrusted(tmp_path: Path) -> None:
    """Every server name ided knows (clangd, gopls, pylsp, jdtls...), shipped in each of the workspace's tool
    folders with the exec bit and cloned: untrusted, no language's server is one of them, each is named in
    the notice; trusted, each language's first choice is the workspace's own (the look-up can fail)."""
    from daemon.config import IntelConfig
    from daemon.intel.lsp.registry import resolve_servers, server_executables
    from daemon.intel.lsp.server_lookup import WORKSPACE_BINS, workspace_programs

    names = server_executables()
    shipped = [f"{folder}/{name}" for folder in WORKSPACE_BINS for name in names]
    origin = make_repo(tmp_path / "origin", dict.fromkeys(shipped, "#!/bin/sh\nexit 1\n"))
    for rel in shipped:
        git(origin, "update-index", "--chmod=+x", rel)
    git(origin, "commit", "-q", "-m", "ship every server")
    repo = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True, timeout=60)
    saved = os.environ["PATH"]
    os.environ["PATH"] = os.pathsep.join([*SEARCH_PATH, saved])
    try:
        untrusted = resolve_servers(IntelConfig(), repo)
        trusted = resolve_servers(IntelConfig(), repo, trusted=True)
    finally:
        os.environ["PATH"] = saved
    from_workspace = [s.name for s in untrusted if s.command and Path(s.command).resolve().is_relative_to(repo)]
    print(f"[adversarial] server names {len(names)} in {len(WORKSPACE_BINS)} folders: taken untrusted {from_workspace}")
    assert from_workspace == []
    assert sorted(workspace_programs(repo, names)) == sorted(shipped)
    assert all(s.command == str(repo / WORKSPACE_BINS[0] / Path(s.command or "").name) for s in trusted)
    assert {Path(s.command or "").name for s in trusted} >= {"basedpyright-langserver", "clangd", "gopls"}
