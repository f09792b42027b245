"""A workspace opens only inside the user's allowed roots; system folders and bad paths are refused at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.config import load_config
from daemon.errors import ConfigError, ErrorCode, WorkspaceRefused
from daemon.workspace_roots import admit_workspace, check_folder


@pytest.mark.parametrize("folder", ["/", "/etc", "/etc/ssh", "/proc", "/proc/self", "/sys", "/dev", "/usr", "/tmp"])
def test_system_folders_are_never_a_workspace(folder: str) -> None:
    if not Path(folder).is_dir():
        pytest.skip(f"{folder} does not exist here")
    with pytest.raises(WorkspaceRefused, match="system folder") as info:
        check_folder(folder)
    assert info.value.code is ErrorCode.WORKSPACE_REFUSED


def test_a_missing_folder_is_refused_as_missing(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceRefused, match="does not exist"):
        check_folder(tmp_path / "nowhere")


@pytest.mark.parametrize("folder", ["/" + "a" * 4999, "/" + "/".join(["b" * 200] * 25), "/x/" + "c" * 300])
def test_an_over_long_path_is_a_path_error_not_an_index_failure(folder: str) -> None:
    with pytest.raises(WorkspaceRefused, match="longer than the system allows"):
        check_folder(folder)


def test_relative_paths_and_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(WorkspaceRefused, match="absolute"):
        check_folder("relative/dir")
    with pytest.raises(WorkspaceRefused, match="not a folder"):
        check_folder(tmp_path / "file.txt")


def test_by_default_home_and_the_launch_folder_are_allowed(tmp_path: Path, isolated_home: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    config = load_config(project, env={"XDG_CONFIG_HOME": str(isolated_home / ".config")})
    admit_workspace(config, launch_dir=project)  # the launch folder itself
    admit_workspace(config, launch_dir=project / "src")  # the project that holds the launch folder
    with pytest.raises(WorkspaceRefused, match="outside the allowed roots"):
        admit_workspace(config, launch_dir=elsewhere)


def test_a_folder_named_on_the_command_line_needs_no_default_root_but_the_users_roots_still_limit_it(
    tmp_path: Path, isolated_home: Path
) -> None:
    elsewhere = tmp_path / "elsewhere" / "project"
    elsewhere.mkdir(parents=True)
    launch = tmp_path / "launch"
    launch.mkdir()
    env = {"XDG_CONFIG_HOME": str(isolated_home / ".config")}
    admit_workspace(load_config(elsewhere, env=env), launch_dir=launch, named=True)  # as `ided run -w` takes it
    with pytest.raises(WorkspaceRefused, match="outside the allowed roots"):
        admit_workspace(load_config(elsewhere, env=env), launch_dir=launch)  # ACP's session/new: default roots
    mine = {**env, "IDED_ROOTS__ALLOWED": f'["{launch}"]'}
    with pytest.raises(WorkspaceRefused, match="outside the allowed roots"):
        admit_workspace(load_config(elsewhere, env=mine), launch_dir=launch, named=True)
    with pytest.raises(WorkspaceRefused, match="system folder"):
        admit_workspace(load_config(Path("/etc"), env=env), launch_dir=launch, named=True)


def test_the_user_config_lists_the_allowed_roots(tmp_path: Path, isolated_home: Path) -> None:
    project = tmp_path / "work" / "project"
    project.mkdir(parents=True)
    user = isolated_home / ".config" / "ided" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text(f'[roots]\nallowed = ["{tmp_path / "work"}"]\n')
    env = {"XDG_CONFIG_HOME": str(isolated_home / ".config")}
    admit_workspace(load_config(project, env=env), launch_dir=Path("/"))
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(WorkspaceRefused, match=r"roots\.allowed"):
        admit_workspace(load_config(other, env=env), launch_dir=other)  # a list replaces the defaults


def test_a_repository_cannot_widen_the_roots(tmp_path: Path, isolated_home: Path) -> None:
    (tmp_path / ".ided.toml").write_text('[roots]\nallowed = ["/"]\n')
    with pytest.raises(ConfigError, match="a repository cannot widen"):
        load_config(tmp_path, env={"XDG_CONFIG_HOME": str(isolated_home / ".config")})
