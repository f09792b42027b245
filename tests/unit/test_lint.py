"""The house rule "ruff clean" as a test, so the suite (what CI runs) fails on a lint or format slip."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("args", [["check", "."], ["format", "--check", "."]], ids=["check", "format"])
def test_ruff_is_clean(args: list[str]) -> None:
    ruff = Path(sys.executable).with_name("ruff")
    if not ruff.is_file():
        pytest.fail(f"ruff is not installed beside {sys.executable}: `uv sync` installs the dev group")
    done = subprocess.run([str(ruff), *args], cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
