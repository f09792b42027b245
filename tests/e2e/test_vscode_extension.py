"""The VS Code extension (editors/vscode) type-checks, passes its unit tests and packs, when node
and npm are on the machine. Dependencies come from package-lock.json (``npm ci``, kept between runs)."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

EXTENSION = Path(__file__).parents[2] / "editors" / "vscode"
NPM_TIMEOUT_S = 300


def _npm(*args: str) -> subprocess.CompletedProcess[str]:
    npm = shutil.which("npm")
    assert npm is not None
    return subprocess.run(
        [npm, *args], cwd=EXTENSION, capture_output=True, text=True, timeout=NPM_TIMEOUT_S, check=False
    )


@pytest.fixture(scope="module")
def installed() -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm not found: the VS Code extension is checked only where Node.js 20+ is installed")
    lock = EXTENSION / "package-lock.json"
    stamp = EXTENSION / "node_modules" / ".package-lock.json"
    if not stamp.exists() or stamp.stat().st_mtime < lock.stat().st_mtime:
        done = _npm("ci", "--no-audit", "--no-fund")
        assert done.returncode == 0, done.stderr
    return EXTENSION


def test_the_extension_type_checks_with_tsc(installed: Path) -> None:
    done = _npm("run", "typecheck")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_pure_parts_pass_their_unit_tests(installed: Path) -> None:
    done = _npm("test")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "# fail 0" in done.stdout
    assert "# pass 0" not in done.stdout


def test_the_extension_packs_into_a_vsix_with_its_entry_point(installed: Path, tmp_path: Path) -> None:
    vsix = tmp_path / "ided.vsix"
    done = _npm("exec", "--", "vsce", "package", "--allow-missing-repository", "--skip-license", "--out", str(vsix))
    assert done.returncode == 0, done.stdout + done.stderr
    names = zipfile.ZipFile(vsix).namelist()
    assert "extension/out/src/extension.js" in names
    assert "extension/package.json" in names
    assert not any(name.startswith("extension/src/") for name in names)
