from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from daemon.config import Config, load_config

FIXTURES = Path(__file__).parents[1] / "fixtures" / "workspaces"


@pytest.fixture
def polyglot(tmp_path: Path) -> Path:
    """A fresh copy of the polyglot fixture workspace."""
    dest = tmp_path / "polyglot"
    shutil.copytree(FIXTURES / "polyglot", dest)
    return dest


def make_config(workspace: Path, state: Path, **sections: dict[str, object]) -> Config:
    overrides: dict[str, object] = {"state_dir": str(state), **sections}
    return load_config(workspace, env={"HOME": str(state / "home")}, overrides=overrides)
