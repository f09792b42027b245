"""Shared by the VS Code extension's tests: npm in ``editors/vscode`` and the extension packed once per
test session (``vsce package``, as ``npm run package`` does), so the packing test and the code-server
test share one .vsix. Skips where node/npm are missing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

__all__ = ["EXTENSION", "npm", "packed_vsix"]

EXTENSION = Path(__file__).parents[2] / "editors" / "vscode"
NPM_TIMEOUT_S = 300


def npm(*args: str) -> subprocess.CompletedProcess[str]:
    found = shutil.which("npm")
    assert found is not None
    return subprocess.run(
        [found, *args], cwd=EXTENSION, capture_output=True, text=True, timeout=NPM_TIMEOUT_S, check=False
    )


def _installed() -> None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm not found: the VS Code extension is checked only where Node.js 20+ is installed")
    lock = EXTENSION / "package-lock.json"
    stamp = EXTENSION / "node_modules" / ".package-lock.json"
    if not stamp.exists() or stamp.stat().st_mtime < lock.stat().st_mtime:
        done = npm("ci", "--no-audit", "--no-fund")
        assert done.returncode == 0, done.stderr


_packed: list[Path] = []  # the session's .vsix (a fixture imported into two modules is two fixtures)


@pytest.fixture(scope="session")
def packed_vsix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The extension as users install it: compiled (``vscode:prepublish``) and packed by vsce, once."""
    _installed()
    if not _packed:
        out = tmp_path_factory.mktemp("vsix") / "ided.vsix"
        done = npm("exec", "--", "vsce", "package", "--allow-missing-repository", "--skip-license", "--out", str(out))
        assert done.returncode == 0, done.stdout + done.stderr
        _packed.append(out)
    return _packed[0]


@pytest.fixture(scope="session")
def installed_extension() -> Path:
    """``editors/vscode`` with its locked dependencies installed (``npm ci`` when the lock changed)."""
    _installed()
    return EXTENSION
