"""Dependencies and their exact versions from every kind of manifest and lock file, on real files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from daemon.retrieval.manifests import read_dependencies

MANIFESTS = Path(__file__).parents[1] / "fixtures" / "dependency_manifests"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(MANIFESTS, root)
    return root


def _found(root: Path) -> set[tuple[str, str, str | None, str]]:
    return {(d.ecosystem, d.name, d.version, d.where) for d in read_dependencies(root).dependencies}


def test_every_kind_of_manifest_gives_its_dependencies_with_where_they_are_declared(workspace: Path) -> None:
    scan = read_dependencies(workspace)
    assert scan.problems == []
    assert set(scan.files) == {
        "requirements.txt",
        "requirements-dev.txt",
        "pyproject.toml",
        "uv.lock",
        "legacy/poetry.lock",
        "web/package-lock.json",
        "svc/go.mod",
        "tool/Cargo.lock",
    }  # svc/go.sum is not read: go.mod beside it says which versions the build selects
    found = _found(workspace)
    assert {
        ("PyPI", "requests", "2.19.1", "requirements.txt:4"),  # continued line with a hash
        ("PyPI", "urllib3", "1.23", "requirements.txt:6"),  # extras and a marker
        ("PyPI", "flask", None, "requirements.txt:7"),  # a constraint, not an exact version
        ("PyPI", "pytest", "8.3.3", "requirements-dev.txt:1"),
        ("PyPI", "click", "8.1.7", "pyproject.toml:11"),
        ("PyPI", "jinja2", None, "pyproject.toml:6"),
        ("PyPI", "jinja2", "3.1.2", "uv.lock:11"),
        ("PyPI", "Jinja2", "3.1.4", "legacy/poetry.lock:12"),
        ("npm", "lodash", "4.17.20", "web/package-lock.json:20"),
        ("npm", "@types/node", "20.11.5", "web/package-lock.json:15"),
        ("npm", "lodash-es", "4.17.21", "web/package-lock.json:28"),  # nested under a workspace package
        ("Go", "golang.org/x/net", "v0.15.0", "svc/go.mod:8"),  # // indirect, in a require block
        ("Go", "github.com/google/uuid", "v1.6.0", "svc/go.mod:5"),
        ("crates.io", "time", "0.2.22", "tool/Cargo.lock:12"),
        ("crates.io", "time", "0.3.36", "tool/Cargo.lock:18"),
    } <= found
    names = {name for _, name, _, _ in found}
    assert "shop" not in names and "tool" not in names  # the workspace's own packages
    assert "shared-ui" not in names  # a linked workspace package
    assert not any(w.startswith("requirements.txt") and n == "localpkg" for _, n, _, w in found)
    assert [d.name for d in scan.unversioned()] == ["flask"]  # jinja2, httpx and ruff are locked in uv.lock


def test_vendored_installed_hidden_and_test_data_directories_are_not_read(workspace: Path) -> None:
    for skipped in ("web/node_modules/left-pad", ".venv/lib", "vendor/x", "tests/fixtures/old", "svc/testdata"):
        (workspace / skipped).mkdir(parents=True)
        (workspace / skipped / "requirements.txt").write_text("evil==6.6.6\n")
    venv = workspace / "env2"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "requirements.txt").write_text("evil==6.6.6\n")
    assert not any(name == "evil" for _, name, _, _ in _found(workspace))


def test_a_symlinked_manifest_is_not_followed(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret-package==1.0\n")
    (workspace / "requirements-link.txt").symlink_to(outside)
    assert not any(name == "secret-package" for _, name, _, _ in _found(workspace))


def test_a_broken_file_is_reported_and_the_others_still_read(workspace: Path) -> None:
    (workspace / "web" / "package-lock.json").write_text("{ not json")
    (workspace / "tool" / "Cargo.lock").write_text("[[package]\nname = ")
    scan = read_dependencies(workspace)
    assert len(scan.problems) == 2
    assert any(p.startswith("web/package-lock.json: cannot be read as package-lock.json") for p in scan.problems)
    assert any(p.startswith("tool/Cargo.lock") for p in scan.problems)
    assert ("PyPI", "requests", "2.19.1", "requirements.txt:4") in _found(workspace)


def test_go_sum_alone_and_a_version_1_package_lock(tmp_path: Path) -> None:
    (tmp_path / "go.sum").write_text(
        "golang.org/x/net v0.15.0 h1:abc=\ngolang.org/x/net v0.15.0/go.mod h1:def=\n"
        "golang.org/x/text v0.13.0/go.mod h1:x=\n"
    )
    lock = {
        "lockfileVersion": 1,
        "dependencies": {
            "lodash": {"version": "4.17.20"},
            "a": {"version": "1.0.0", "dependencies": {"b": {"version": "2.0.0"}}},
        },
    }
    (tmp_path / "package-lock.json").write_text(json.dumps(lock, indent=2))
    found = {(e, n, v) for e, n, v, _ in _found(tmp_path)}
    assert found == {
        ("Go", "golang.org/x/net", "v0.15.0"),
        ("Go", "golang.org/x/text", "v0.13.0"),
        ("npm", "lodash", "4.17.20"),
        ("npm", "a", "1.0.0"),
        ("npm", "b", "2.0.0"),
    }


def test_poetry_constraints_in_pyproject_and_go_replace(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.poetry.dependencies]\npython = "^3.11"\nrequests = "2.19.1"\nflask = "^2.0"\n'
        'django = { version = "==4.2.1", extras = ["argon2"] }\n'
        '[tool.poetry.group.dev.dependencies]\npytest = "8.3.3"\n'
    )
    (tmp_path / "go.mod").write_text(
        "module m\n\ngo 1.22\n\nrequire (\n\tgolang.org/x/net v0.15.0\n\texample.com/local v1.0.0\n)\n\n"
        "replace golang.org/x/net => golang.org/x/net v0.17.0\nreplace example.com/local => ../local\n"
    )
    found = {(e, n, v) for e, n, v, _ in _found(tmp_path)}
    assert found == {
        ("PyPI", "requests", "2.19.1"),
        ("PyPI", "flask", None),
        ("PyPI", "django", "4.2.1"),
        ("PyPI", "pytest", "8.3.3"),
        ("Go", "golang.org/x/net", "v0.17.0"),  # the replacement's version, not the required one
    }
