"""User paths resolve inside the workspace or are refused: ``..``, absolute elsewhere, symlinks out."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.errors import ErrorCode, InvalidToolInput, PathOutsideWorkspace
from daemon.intel.workspace_paths import WorkspacePaths


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    return root


def test_a_relative_path_resolves_to_the_file_and_its_posix_relative_path(workspace: Path) -> None:
    resolved = WorkspacePaths(workspace).resolve("./src/app.py")
    assert resolved.relative == "src/app.py"
    assert resolved.absolute == (workspace / "src" / "app.py").resolve()


def test_an_absolute_path_inside_the_workspace_is_accepted(workspace: Path) -> None:
    assert WorkspacePaths(workspace).resolve(str(workspace / "src" / "app.py")).relative == "src/app.py"


@pytest.mark.parametrize("user_path", ["../secret.txt", "src/../../secret.txt", "/etc/passwd"])
def test_paths_that_leave_the_workspace_are_refused(workspace: Path, user_path: str) -> None:
    with pytest.raises(PathOutsideWorkspace, match="outside the workspace") as info:
        WorkspacePaths(workspace).resolve(user_path)
    assert info.value.code is ErrorCode.PATH_OUTSIDE_WORKSPACE


def test_a_symlink_pointing_out_of_the_workspace_is_refused(workspace: Path) -> None:
    (workspace / "src" / "link.txt").symlink_to(workspace.parent / "secret.txt")
    (workspace / "escape").symlink_to(workspace.parent)
    paths = WorkspacePaths(workspace)
    with pytest.raises(PathOutsideWorkspace):
        paths.resolve("src/link.txt")
    with pytest.raises(PathOutsideWorkspace):
        paths.resolve("escape/secret.txt")


def test_a_symlink_inside_the_workspace_is_followed(workspace: Path) -> None:
    (workspace / "alias.py").symlink_to(workspace / "src" / "app.py")
    assert WorkspacePaths(workspace).resolve("alias.py").relative == "src/app.py"


@pytest.mark.parametrize(
    ("user_path", "message"),
    [("", "empty path"), ("src/missing.py", "does not exist"), ("src", "is a directory")],
)
def test_missing_files_directories_and_empty_paths_are_clear_input_errors(
    workspace: Path, user_path: str, message: str
) -> None:
    with pytest.raises(InvalidToolInput, match=message):
        WorkspacePaths(workspace).resolve(user_path)


def test_display_keeps_files_outside_the_workspace_absolute(workspace: Path) -> None:
    paths = WorkspacePaths(workspace)
    assert paths.display(workspace / "src" / "app.py") == ("src/app.py", True)
    assert paths.display(Path("/usr/lib/python3/typing.pyi")) == ("/usr/lib/python3/typing.pyi", False)
