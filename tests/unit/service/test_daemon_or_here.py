"""One place decides whether a process uses the workspace daemon or works here, in one vocabulary."""

from __future__ import annotations

from pathlib import Path

from daemon.config import Config, load_config
from daemon.service.runs.opening import open_run_service
from daemon.service.wire.daemon_or_here import DaemonChoice, DaemonUse, daemon_or_here, daemon_running, use_daemon
from daemon.service.wire.files import write_record


def _config(tmp_path: Path) -> Config:
    (tmp_path / "ws").mkdir()
    return load_config(
        tmp_path / "ws",
        env={"HOME": str(tmp_path / "home")},
        overrides={"state_dir": str(tmp_path / "state")},
        user_file=tmp_path / "no-user-config.toml",
    )


def test_each_wish_gets_its_answer_without_a_daemon(tmp_path: Path) -> None:
    config = _config(tmp_path)
    assert daemon_or_here(config, daemon="start") == DaemonChoice(daemon=True, start=True)
    never = daemon_or_here(config, daemon="never")
    assert not never.daemon and not never.start and not never.wanted and "not to use the workspace daemon" in never.why
    running = daemon_or_here(config, daemon="running")
    assert not running.daemon and running.wanted and running.why == f"no daemon serves {config.workspace}"
    assert (use_daemon(True), use_daemon(False)) == ("start", "never")


def test_a_stale_record_is_no_daemon(tmp_path: Path) -> None:
    """A ``daemon.json`` whose socket answers nobody (the daemon was killed) is removed, not believed."""
    config = _config(tmp_path)
    config.state_path.mkdir(parents=True)
    write_record(config.state_path, sock=config.state_path / "gone.sock", workspace=config.workspace_path, version="0")
    assert not daemon_running(config)
    assert not daemon_or_here(config, daemon="running").daemon


async def test_runs_kept_here_say_why_only_when_the_daemon_was_wanted(tmp_path: Path) -> None:
    """``open_run_service`` follows the choice: a front that wanted the daemon's runs and got this process's is
    told why; one told not to use it (``never``, or a command that needs no models) is told nothing."""
    config = _config(tmp_path)
    notes: dict[tuple[DaemonUse, bool], str] = {}
    asked: list[tuple[DaemonUse, bool]] = [("running", True), ("running", False), ("never", True)]
    for daemon, models_needed in asked:
        async with open_run_service(config, daemon=daemon, client="cli", models_needed=models_needed) as opened:
            assert not opened.in_daemon
            notes[daemon, models_needed] = opened.note
    assert notes == {
        ("running", True): f"the workspace daemon does not take this front's runs: no daemon serves {config.workspace}",
        ("running", False): "",
        ("never", True): "",
    }
