"""The VS Code extension (editors/vscode) type-checks, passes its unit tests and packs, when node
and npm are on the machine. Dependencies come from package-lock.json (``npm ci``, kept between runs)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tests.e2e.vscode_support import installed_extension, npm, packed_vsix

pytestmark = pytest.mark.e2e

__all__ = ["installed_extension", "packed_vsix"]  # fixtures


def test_the_extension_type_checks_with_tsc(installed_extension: Path) -> None:
    done = npm("run", "typecheck")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_pure_parts_pass_their_unit_tests(installed_extension: Path) -> None:
    done = npm("test")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "# fail 0" in done.stdout
    assert "# pass 0" not in done.stdout


def test_the_extension_packs_into_a_vsix_with_its_entry_point(packed_vsix: Path) -> None:
    names = zipfile.ZipFile(packed_vsix).namelist()
    assert "extension/out/src/extension.js" in names
    assert "extension/out/src/runs.js" in names
    assert "extension/media/ided.svg" in names
    assert "extension/package.json" in names
    assert not any(name.startswith("extension/src/") for name in names)
    assert not any(name.startswith("extension/out/test/") for name in names)
