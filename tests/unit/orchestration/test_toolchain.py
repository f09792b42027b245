"""The lint_and_format toolchain: the formatters on PATH for the languages the worktree holds, as commands."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from daemon.orchestration.agents.toolchain import check_command_names, detect_toolchain


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def only_this_environment_on_path(monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH is this environment's bin directory alone: ruff is there, no gofmt, rustfmt, prettier, clang-format."""
    bin_dir = Path(sys.executable).parent
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


def test_a_python_file_gets_ruff_and_other_languages_say_their_formatter_is_missing(
    tmp_path: Path, only_this_environment_on_path: Path
) -> None:
    root = tree(
        tmp_path,
        {"app.py": "x = 1\n", "cmd/main.go": "package main\n", "src/lib.rs": "fn f() {}\n", "c/x.c": "int x;\n"},
    )

    toolchain = detect_toolchain(root)

    ruff = shlex.split(toolchain.commands["lint_ruff"])[0]
    assert Path(ruff).parent == only_this_environment_on_path
    assert toolchain.commands == {
        "format_ruff": shlex.join([ruff, "format", "."]),
        "lint_ruff": shlex.join([ruff, "check", "--fix", "."]),
    }
    assert toolchain.missing == ("go: gofmt", "rust: rustfmt", "c/c++: clang-format")
    assert "python: ruff" in toolchain.summary() and "go: gofmt (not on PATH)" in toolchain.summary()


def test_files_under_dependency_directories_do_not_count_as_the_workspaces_languages(
    tmp_path: Path, only_this_environment_on_path: Path
) -> None:
    root = tree(tmp_path, {"node_modules/lib/index.js": "x\n", ".venv/lib/site.py": "x = 1\n", "README.md": "# r\n"})

    toolchain = detect_toolchain(root)

    assert toolchain.commands == {} and toolchain.missing == ()
    assert toolchain.summary() == "no code language with a known formatter"


def test_linters_run_before_formatters_and_other_commands_are_not_checks() -> None:
    assert check_command_names(["test", "format_ruff", "lint_ruff", "format_gofmt", "typecheck"]) == [
        "lint_ruff",
        "format_gofmt",
        "format_ruff",
    ]
