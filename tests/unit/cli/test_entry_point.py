"""The `ided` entry point loads only the root app for the protocol fronts."""

from __future__ import annotations

import subprocess
import sys

import pytest

from daemon.__main__ import _command  # pyright: ignore[reportPrivateUsage]

PROBE = """
import sys
sys.argv = ["ided", *sys.argv[1:]]
from daemon.__main__ import main
try:
    main()
except SystemExit:
    pass
print("ALL-COMMANDS-LOADED" if "daemon.cli.app" in sys.modules else "ROOT-ONLY", file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["acp"], "acp"),
        (["--set", "index.max_file_bytes=5", "lsp", "--tcp"], "lsp"),
        (["--set=a.b=1", "mcp"], "mcp"),
        (["run", "acp please"], "run"),
        (["--version"], None),
    ],
)
def test_the_sub_command_is_found_past_the_global_options(args: list[str], expected: str | None) -> None:
    assert _command(args) == expected


@pytest.mark.parametrize(("command", "loaded"), [("acp", "ROOT-ONLY"), ("status", "ALL-COMMANDS-LOADED")])
def test_a_front_loads_only_the_root_app_and_other_commands_load_everything(command: str, loaded: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, command, "--help"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.stderr.strip().endswith(loaded), done.stderr
    assert "Usage:" in done.stdout and command in done.stdout
