"""Shared by the code-intel tests: where scripts/install-test-tools.sh put the language servers,
fresh copies of the fixture workspaces, and skips (with the install hint) for absent servers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from daemon.config import Config, IntelConfig, load_config
from daemon.intel.lsp.registry import resolve_servers

__all__ = [
    "FIXTURES",
    "SEARCH_PATH",
    "copy_workspace",
    "intel_config",
    "intel_settings",
    "require_server",
    "workspace_config",
]

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "workspaces"
TOOLS = ROOT / ".tools"
SEARCH_PATH: tuple[str, ...] = (
    str(TOOLS / "lsp-venv" / "bin"),
    str(TOOLS / "node" / "node_modules" / ".bin"),
    str(TOOLS / "go" / "bin"),
)
"""Where scripts/install-test-tools.sh installs the servers (given to ided as intel.search_path)."""


def intel_settings(**extra: Any) -> dict[str, Any]:
    """An ``intel`` config section for tests: the test tools first, no background prestart."""
    return {"search_path": list(SEARCH_PATH), "prestart": False, **extra}


def intel_config(**extra: Any) -> IntelConfig:
    return IntelConfig.model_validate(intel_settings(**extra))


def require_server(language: str) -> str:
    """The server name for ``language``, or skip the test with the reason and install hint."""
    workspace = ROOT
    for spec in resolve_servers(intel_config(), workspace):
        if language in spec.languages:
            if spec.available:
                return spec.name
            pytest.skip(f"{language}: {spec.reason} (run scripts/install-test-tools.sh)")
    pytest.skip(f"no language server group for {language}")


def copy_workspace(name: str, dest: Path) -> Path:
    """A fresh copy of ``tests/fixtures/workspaces/<name>`` under ``dest`` (C/C++ gets compile_commands.json)."""
    target = dest / name
    shutil.copytree(FIXTURES / name, target)
    if name == "intel_cpp":
        commands: list[dict[str, Any]] = []
        for source in sorted((target / "src").iterdir()):
            compiler = ["clang++", "-std=c++17"] if source.suffix == ".cpp" else ["clang"]
            rel = f"src/{source.name}"
            commands.append({"directory": str(target), "file": rel, "arguments": [*compiler, "-Iinclude", "-c", rel]})
        (target / "compile_commands.json").write_text(json.dumps(commands, indent=1))
    return target


def workspace_config(workspace: Path, state: Path, **sections: Any) -> Config:
    """The configuration tests use: isolated state, no dense model, the test tools on the search path."""
    overrides: dict[str, Any] = {
        "state_dir": str(state),
        "embedding": {"enabled": False},
        "intel": intel_settings(**sections.pop("intel", {})),
        **sections,
    }
    return load_config(workspace, env={"HOME": str(state / "home")}, overrides=overrides)
