"""Plain `ided` commands load no heavy stack: help and status start without LangGraph, models, protocols or git.

Each command module imports its service inside the command function, so listing the commands (or
showing one's help) costs typer, rich, pydantic and the domain models only. Checked by the modules
a fresh interpreter has loaded, not by timing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest

# Top-level packages that only a command's work may load: the pipeline (LangGraph, LangChain), the
# embedding model, the vector stores, the protocol SDKs, git, and the index's native parts.
HEAVY = frozenset(
    {
        "langgraph",
        "langchain_core",
        "langsmith",
        "fastembed",
        "huggingface_hub",
        "onnxruntime",
        "numpy",
        "tokenizers",
        "qdrant_client",
        "qdrant_edge",
        "tree_sitter",
        "mcp",
        "pygls",
        "lsprotocol",
        "acp",
        "git",
        "gitdb",
    }
)
# What opening the workspace index needs for `ided status`: the store and the chunkers' parser.
INDEX_OPEN = frozenset({"qdrant_edge", "tree_sitter"})

PROBE = """
import json, sys
heavy = set(json.loads(sys.argv[1]))
sys.argv = ["ided", *sys.argv[2:]]
from daemon.__main__ import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
print("PROBE", json.dumps({"code": code, "heavy": sorted({m.split(".")[0] for m in sys.modules} & heavy)}))
"""


def _heavy_loaded(args: list[str], *, cwd: Path | None = None, home: Path | None = None) -> list[str]:
    """The heavy packages loaded by ``ided ARGS`` run in a fresh interpreter (which must succeed)."""
    env = None
    if home is not None:  # no IDED_* settings: the user config under ``home`` only
        env = {k: v for k, v in os.environ.items() if not k.startswith(("IDED_", "XDG_"))} | {"HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(sorted(HEAVY)), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
        env=env,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("PROBE ")]
    assert lines, done.stderr
    result: dict[str, object] = json.loads(lines[-1].removeprefix("PROBE "))
    assert result["code"] == 0, done.stderr
    return cast("list[str]", result["heavy"])


def _user_config(home: Path, text: str) -> None:
    path = home / ".config" / "ided" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_importing_the_command_line_app_loads_no_heavy_package() -> None:
    code = (
        "import json, sys; import daemon.cli.app; "
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({sorted(HEAVY)!r}))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(done.stdout) == []


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["search", "--help"],
        ["run", "--help"],
        ["runs", "--help"],
        ["runs", "diff", "--help"],
        ["workflows", "show", "--help"],
        ["eval", "--help"],
        ["config", "schema"],
    ],
    ids=" ".join,
)
def test_help_and_plain_commands_load_no_heavy_package(args: list[str]) -> None:
    assert _heavy_loaded(args) == []


def test_status_without_a_daemon_loads_only_what_opening_the_index_needs(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    _user_config(tmp_path / "home", f'state_dir = "{tmp_path / "state"}"\n')
    (workspace / "a.py").write_text("def f() -> int:\n    return 1\n")
    loaded = _heavy_loaded(["status", "--json"], cwd=workspace, home=tmp_path / "home")
    assert set(loaded) <= INDEX_OPEN, loaded


def test_a_hybrid_search_without_a_daemon_embeds_its_query_without_fastembed(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    _user_config(tmp_path / "home", f'state_dir = "{tmp_path / "state"}"\n')
    (workspace / "a.py").write_text("def total(values: list[int]) -> int:\n    return sum(values)\n")
    home = tmp_path / "home"
    indexed = _heavy_loaded(["index"], cwd=workspace, home=home)
    assert "onnxruntime" in indexed and "fastembed" not in indexed, indexed
    loaded = _heavy_loaded(["search", "sum of the values", "--json"], cwd=workspace, home=home)
    # the query was embedded (onnxruntime ran: the search was hybrid), on onnxruntime and tokenizers alone
    assert {"onnxruntime", "tokenizers"} <= set(loaded), loaded
    assert not {"fastembed", "huggingface_hub"} & set(loaded), loaded
