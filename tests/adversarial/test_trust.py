"""A hostile repository against workspace trust: its commands run only where the user trusted it.

The repository's ``.ided.toml`` (and, in one case, a workflow file of its own) names a ``test``
command that touches a marker file; a code-mode ``ided run`` (scripted models, real git, real
processes) reaches the test stage, which runs ``test`` itself when the agent ran none. Untrusted, the
marker must not appear and the run must say why; trusted (``--trust``, ``ided trust``, the terminal's
"yes"), it must. The user's own commands run either way. Beside it: a code run outside git fails with
``not_a_repository``, and ``--set vcs.include_uncommitted=true`` does what the flag does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner, Result

from daemon.cli.app import app
from daemon.config import LoggingConfig
from daemon.core.run_models import RunRecord, RunStatus
from daemon.logging_setup import configure_logging
from daemon.orchestration.workflow_loader import builtin_workflow_dir
from daemon.trust import TrustStore, trust_file_path
from tests.pipeline_support import choose, everyone_succeeds, write_script
from tests.vcs_support import git, make_repo

runner = CliRunner()

CALC = "def add(a, b):\n    return a + b\n"


def touch(marker: Path) -> str:
    return f"bash -c 'touch {marker}'"


def hostile_repo(root: Path, marker: Path, *, toml_commands: bool = True, workflow_commands: bool = False) -> Path:
    files = {"calc.py": CALC}
    if toml_commands:
        files[".ided.toml"] = f'[agents.commands]\ntest = "{touch(marker)}"\n'
    if workflow_commands:
        data = yaml.safe_load((builtin_workflow_dir() / "bug_fix.yaml").read_text(encoding="utf-8"))
        files[".ided/workflows/bug_fix.yaml"] = yaml.safe_dump({**data, "commands": {"test": touch(marker)}})
    return make_repo(root, files)


@pytest.fixture
def script(tmp_path: Path) -> Path:
    return write_script(
        tmp_path / "script.yaml",
        [
            {"role": "orchestrator", "answer": choose("bug_fix", code_review="SKIP"), "repeat": True},
            everyone_succeeds(),
        ],
    )


def settings(state: Path, script: Path) -> list[str]:
    return [
        "--set", f"pipeline.replay_script={script}",
        "--set", "pipeline.resilience.cache=false",
        "--set", f"state_dir={state}",
        "--set", "embedding.enabled=false",
    ]  # fmt: skip


def ided(workspace: Path, state: Path, script: Path, *args: str) -> Result:
    return runner.invoke(app, [*settings(state, script), *args, "-w", str(workspace)], catch_exceptions=False)


def run_json(workspace: Path, state: Path, script: Path, *extra: str) -> tuple[Result, RunRecord]:
    result = ided(workspace, state, script, "run", "Fix the crash in add", "--json", *extra)
    return result, RunRecord.model_validate_json(result.stdout)


def decisions(workspace: Path, state: Path, script: Path, run_id: str) -> list[dict[str, Any]]:
    shown = ided(workspace, state, script, "runs", "show", run_id, "--json")
    assert shown.exit_code == 0, shown.stderr
    return json.loads(shown.stdout)["decisions"]


def test_an_untrusted_repositorys_command_does_not_run_and_the_run_says_why(
    tmp_path: Path, isolated_home: Path, script: Path
) -> None:
    marker = tmp_path / "PWNED"
    repo = hostile_repo(tmp_path / "repo", marker)
    result, record = run_json(repo, tmp_path / "state", script)
    assert result.exit_code == 0, result.stderr
    assert record.status is RunStatus.SUCCEEDED
    assert not marker.exists()
    assert "not trusted" in result.stderr and f"ided trust {repo}" in result.stderr
    (trust,) = [d for d in decisions(repo, tmp_path / "state", script, record.run_id) if d["kind"] == "trust"]
    assert trust["data"]["withheld"] == [{"name": "test", "command": touch(marker), "source": str(repo / ".ided.toml")}]
    assert trust["data"]["how_to_trust"] == f"ided trust {repo}"


def test_the_trust_flag_lets_the_repositorys_command_run_once_without_remembering(
    tmp_path: Path, isolated_home: Path, script: Path
) -> None:
    marker = tmp_path / "PWNED"
    repo = hostile_repo(tmp_path / "repo", marker)
    result, record = run_json(repo, tmp_path / "state", script, "--trust")
    assert result.exit_code == 0, result.stderr
    assert marker.exists()
    assert not any(d["kind"] == "trust" for d in decisions(repo, tmp_path / "state", script, record.run_id))
    assert not TrustStore.default().trusted(repo)


def test_ided_trust_remembers_the_workspace_outside_it_and_remove_forgets_it(
    tmp_path: Path, isolated_home: Path, script: Path
) -> None:
    marker = tmp_path / "PWNED"
    repo = hostile_repo(tmp_path / "repo", marker)
    state = tmp_path / "state"
    trusted = runner.invoke(app, ["trust", str(repo)], catch_exceptions=False)
    assert trusted.exit_code == 0 and "trusted" in trusted.stderr
    assert trust_file_path().is_relative_to(isolated_home) and not trust_file_path().is_relative_to(repo)
    listed = runner.invoke(app, ["trust", "--list"], catch_exceptions=False)
    assert str(repo) in listed.stdout
    result, _ = run_json(repo, state, script)
    assert result.exit_code == 0, result.stderr
    assert marker.exists()

    marker.unlink()
    removed = runner.invoke(app, ["trust", "--remove", str(repo)], catch_exceptions=False)
    assert removed.exit_code == 0 and "no longer trusted" in removed.stderr
    result, _ = run_json(repo, state, script)
    assert result.exit_code == 0, result.stderr
    assert not marker.exists()


def test_trusting_a_parent_folder_trusts_the_repository_under_it(
    tmp_path: Path, isolated_home: Path, script: Path
) -> None:
    marker = tmp_path / "PWNED"
    repo = hostile_repo(tmp_path / "src" / "repo", marker)
    TrustStore.default().add(tmp_path / "src")
    result, _ = run_json(repo, tmp_path / "state", script)
    assert result.exit_code == 0, result.stderr
    assert marker.exists()


def test_the_users_own_command_runs_in_an_untrusted_workspace_and_wins_over_the_repositorys(
    tmp_path: Path, isolated_home: Path, script: Path
) -> None:
    marker, own = tmp_path / "PWNED", tmp_path / "OWN"
    repo = hostile_repo(tmp_path / "repo", marker)
    user_config = isolated_home / ".config" / "ided" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text(f'[agents.commands]\ntest = "{touch(own)}"\n', encoding="utf-8")
    result, _ = run_json(repo, tmp_path / "state", script)
    assert result.exit_code == 0, result.stderr
    assert own.exists() and not marker.exists()


def test_a_workflow_file_in_the_repository_is_repository_content_too(
    tmp_path: Path, isolated_home: Path, script: Path
) -> None:
    marker = tmp_path / "PWNED"
    repo = hostile_repo(tmp_path / "repo", marker, toml_commands=False, workflow_commands=True)
    result, _ = run_json(repo, tmp_path / "state", script)
    assert result.exit_code == 0, result.stderr
    assert not marker.exists()
    assert str(repo / ".ided" / "workflows" / "bug_fix.yaml") in result.stderr
    result, _ = run_json(repo, tmp_path / "state", script, "--trust")
    assert result.exit_code == 0, result.stderr
    assert marker.exists()


def test_the_terminal_is_asked_and_yes_trusts_and_remembers_the_workspace(
    tmp_path: Path, isolated_home: Path, script: Path
) -> None:
    marker = tmp_path / "PWNED"
    repo = hostile_repo(tmp_path / "repo", marker)
    primary, secondary = os.openpty()  # stdin is a terminal: ided run asks
    try:
        os.write(primary, b"y\n")
        done = subprocess.run(
            [
                *(sys.executable, "-P", "-m", "daemon", *settings(tmp_path / "state", script)),
                *("run", "Fix the crash in add", "-w", str(repo)),
            ],
            stdin=secondary,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
        )
    finally:
        os.close(primary)
        os.close(secondary)
    assert done.returncode == 0, done.stderr
    assert "Let the repository's commands run?" in done.stderr
    assert marker.exists()
    assert TrustStore.default().trusted(repo)


def test_the_repository_cannot_mark_itself_trusted(tmp_path: Path, isolated_home: Path, script: Path) -> None:
    marker = tmp_path / "PWNED"
    repo = hostile_repo(tmp_path / "repo", marker)
    # a trust file inside the repository, and a .ided.toml that tries to name one: neither counts
    (repo / ".config" / "ided").mkdir(parents=True)
    (repo / ".config" / "ided" / "trusted-workspaces.json").write_text(
        json.dumps({"version": 1, "workspaces": [{"path": str(repo), "trusted_at": "now"}]})
    )
    with (repo / ".ided.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'\n[trust]\nworkspaces = ["{repo}"]\n')
    refused = ided(repo, tmp_path / "state", script, "run", "Fix the crash in add")
    assert refused.exit_code == 1 and "unknown key 'trust'" in refused.stderr
    assert not marker.exists()


def test_a_code_run_outside_a_git_repository_fails_with_not_a_repository(
    tmp_path: Path, isolated_home: Path, script: Path
) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "calc.py").write_text(CALC)
    state = tmp_path / "state"
    result = ided(folder, state, script, "run", "Fix the crash in add")
    assert result.exit_code == 1
    assert "not a git repository" in result.stderr and "not_a_repository" in result.stderr
    listed = ided(folder, state, script, "runs", "--json")
    (run,) = json.loads(listed.stdout)
    assert run["status"] == "failed" and "not a git repository" in run["error"]
    ask = ided(folder, state, script, "run", "Why does add exist?", "--ask")
    assert ask.exit_code == 0, ask.stderr


@pytest.mark.parametrize("how", ["flag", "setting"])
def test_include_uncommitted_by_flag_or_setting_starts_the_branch_from_the_users_edits(
    tmp_path: Path, isolated_home: Path, script: Path, how: str
) -> None:
    repo = make_repo(tmp_path / "repo", {"calc.py": CALC})
    edited = "def add(a, b):\n    return a + b  # mine, not committed\n"
    (repo / "calc.py").write_text(edited)
    flag = ["--include-uncommitted"] if how == "flag" else []
    setting = [] if how == "flag" else ["--set", "vcs.include_uncommitted=true"]
    args = [*setting, *settings(tmp_path / "state", script), "run", "Fix the crash in add", "--json", *flag]
    result = runner.invoke(app, [*args, "-w", str(repo)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    record = RunRecord.model_validate_json(result.stdout)
    assert record.include_uncommitted and record.changes is not None
    assert (Path(record.changes.worktree) / "calc.py").read_text() == edited
    assert git(repo, "status", "--porcelain") == " M calc.py"  # the user's edit stays where it was


def test_without_flag_or_setting_the_branch_starts_from_head(tmp_path: Path, isolated_home: Path, script: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"calc.py": CALC})
    (repo / "calc.py").write_text("def add(a, b):\n    return 0\n")
    result, record = run_json(repo, tmp_path / "state", script)
    assert result.exit_code == 0, result.stderr
    assert not record.include_uncommitted and record.changes is not None
    assert (Path(record.changes.worktree) / "calc.py").read_text() == CALC


def test_resume_withholds_the_repositorys_command_unless_given_trust(
    tmp_path: Path, isolated_home: Path, script: Path
) -> None:
    marker = tmp_path / "PWNED"
    repo = hostile_repo(tmp_path / "repo", marker)
    state = tmp_path / "state"
    planned = [run_json(repo, state, script, "--dry-run")[1].run_id for _ in range(2)]
    plain = ided(repo, state, script, "resume", planned[0], "--json")
    assert plain.exit_code == 0, plain.stderr
    assert not marker.exists()
    trusted = ided(repo, state, script, "resume", planned[1], "--trust", "--json")
    assert trusted.exit_code == 0, trusted.stderr
    assert marker.exists()


def test_an_untrusted_repository_cannot_choose_the_file_ided_appends_its_log_to(
    tmp_path: Path, isolated_home: Path
) -> None:
    target = tmp_path / "home-shell-rc"  # a shell start-up file, say: log lines can carry repository text
    repo = make_repo(tmp_path / "repo", {"calc.py": CALC, ".ided.toml": f'[logging]\nfile = "{target}"\n'})
    listed = runner.invoke(app, ["workflows", "list", "-w", str(repo)], catch_exceptions=False)
    assert listed.exit_code == 0, listed.stderr
    assert not target.exists()
    TrustStore.default().add(repo)
    try:
        listed = runner.invoke(app, ["workflows", "list", "-w", str(repo)], catch_exceptions=False)
        assert listed.exit_code == 0, listed.stderr
        assert target.exists()
    finally:
        configure_logging(LoggingConfig())  # the in-process CLI left its log file open on the root logger
