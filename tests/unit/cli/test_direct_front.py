"""``ided lsp`` / ``ided acp`` skip typer when their command line is plain, and answer before loading anything heavy.

``direct_front`` turns the command line into the front's own argv (the settings the typer command
would have passed to ``python -m daemon.<front>``) or declines, leaving help and errors to typer.
The probe runs the direct path's imports and handshake in a fresh interpreter over a real pipe
and lists the heavy packages loaded by the time ``initialize`` is answered: none.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.cli.context import find_workspace_root
from daemon.cli.front_process import direct_front

HEAVY = ("pydantic", "typer", "rich", "click", "lsprotocol", "pygls", "cattrs", "acp", "langgraph", "mcp", "asyncio")


def test_plain_lsp_and_acp_command_lines_become_the_front_argv(tmp_path: Path) -> None:
    resolved = str(tmp_path.resolve())
    assert direct_front(["lsp"]) == ("lsp", [])
    assert direct_front(["--set", "daemon.watch=false", "--set=a.b=1", "lsp", "-w", str(tmp_path)]) == (
        "lsp",
        ["--workspace", resolved, "--set", "daemon.watch=false", "--set", "a.b=1"],
    )
    assert direct_front(["lsp", f"--workspace={tmp_path}"]) == ("lsp", ["--workspace", resolved])
    assert direct_front(["acp", "--workspace", str(tmp_path)]) == ("acp", ["--workspace", resolved])
    assert direct_front(["--set", "a=1", "mcp", "-w", str(tmp_path), "--standalone"]) == (
        "mcp",
        ["--workspace", resolved, "--set", "a=1"],
    )


def test_plain_mcp_is_told_the_workspace_around_the_current_directory_and_attaches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    inner = tmp_path / "src" / "pkg"
    inner.mkdir(parents=True)
    monkeypatch.chdir(inner)
    monkeypatch.delenv("IDED_MCP_TOKEN", raising=False)
    root = find_workspace_root(inner)
    assert root == tmp_path.resolve()
    assert direct_front(["mcp"]) == ("mcp", ["--workspace", str(root), "--attach"])
    monkeypatch.setenv("IDED_MCP_TOKEN", "short")  # typer checks the token it reads from there
    assert direct_front(["mcp"]) is None


@pytest.mark.parametrize(
    "args",
    [
        ["lsp", "--help"],
        ["acp", "-h"],
        ["--help"],
        ["--version"],
        ["mcp", "--http"],
        ["mcp", "--token", "0123456789abcdef"],
        ["mcp", "--port", "9000"],
        ["status"],
        ["lsp", "--tcp"],
        ["lsp", "--port", "0", "--tcp"],
        ["acp", "--tcp"],
        ["lsp", "--workspace"],
        ["lsp", "-w", "--set"],
        ["lsp", "extra"],
        ["lsp", "--set", "a=1"],
        ["--set", "novalue", "lsp"],
        ["--set", "=1", "acp"],
        ["--set"],
    ],
    ids=" ".join,
)
def test_anything_typer_must_explain_goes_through_typer(args: list[str]) -> None:
    assert direct_front(args) is None


def test_a_workspace_that_is_a_file_goes_through_typer(tmp_path: Path) -> None:
    file = tmp_path / "f.txt"
    file.write_text("x")
    assert direct_front(["acp", "-w", str(file)]) is None


PROBE = """
import json, os, sys
front = sys.argv[1]
message = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": json.loads(sys.argv[2])}).encode()
framed = (b"Content-Length: %d\\r\\n\\r\\n" % len(message) + message) if front == "lsp" else message + b"\\n"
from daemon.cli.front_process import direct_front, drop_cwd_from_path
assert direct_front([front]) == (front, [])
drop_cwd_from_path()
if front == "lsp":
    import daemon.lsp.__main__
    from daemon.lsp.handshake import answer_initialize
else:
    import daemon.acp.__main__
    from daemon.acp.handshake import answer_initialize
client_out, server_in = os.pipe()
server_out, client_in = os.pipe()
os.write(server_in, framed + b"rest")
handshake = answer_initialize(client_out, client_in)
answer = os.read(server_out, 1 << 20)
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(sys.argv[3])))
print(json.dumps({"answered": handshake.early is not None, "pending": handshake.pending.decode(), "heavy": heavy,
                  "answer": answer.decode().split("\\r\\n\\r\\n")[-1]}))
"""


@pytest.mark.parametrize(
    ("front", "params"),
    [("lsp", {"processId": None, "capabilities": {}}), ("acp", {"protocolVersion": 1, "clientCapabilities": {}})],
)
def test_the_direct_path_answers_initialize_with_no_heavy_package_loaded(front: str, params: dict[str, object]) -> None:
    done = subprocess.run(
        [sys.executable, "-P", "-c", PROBE, front, json.dumps(params), json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(done.stdout)
    assert result["answered"] and result["pending"] == "rest"
    assert result["heavy"] == []
    assert json.loads(result["answer"])["id"] == 1
