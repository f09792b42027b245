"""``ided runs diff|accept|reject|rollback|cleanup`` on a real repository, and the decisions they log."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from daemon.cli.app import app
from daemon.cli.review_commands import EXIT_CONFLICT
from daemon.core.review_models import ChangeSet
from daemon.core.run_models import DecisionEntry, DecisionKind
from daemon.orchestration.sqlite_run_store import SqliteRunStore, runs_db_path
from daemon.trust import TrustStore
from daemon.vcs.worktrees import RunWorktrees
from tests.vcs_support import git, make_repo, write

runner = CliRunner()


@pytest.fixture
def repo(tmp_path: Path, isolated_home: Path) -> Path:
    root = make_repo(tmp_path / "repo")
    write(root, ".gitignore", ".ided.toml\n")
    write(root, ".ided.toml", f'state_dir = "{tmp_path / "state"}"\n')
    git(root, "add", ".gitignore")
    git(root, "commit", "-q", "-m", "ignore config")
    TrustStore.default().add(root)  # your own project: its .ided.toml chooses the state dir
    return root


def ided(repo: Path, *args: str) -> Result:
    return runner.invoke(app, [*args, "-w", str(repo)], catch_exceptions=False)


def edited_run(repo: Path, tmp_path: Path, run_id: str) -> RunWorktrees:
    runs = RunWorktrees(repo, tmp_path / "state")
    branch = runs.create(run_id)
    write(branch.workdir, "src/app.py", "def main():\n    return 2\n")
    runs.commit_attempt(run_id, stage_id="implement", attempt=1, agent_ids=["coder"], summary="return 2")
    return runs


def decisions(tmp_path: Path, run_id: str) -> list[DecisionEntry]:
    async def read() -> list[DecisionEntry]:
        store = SqliteRunStore(runs_db_path(tmp_path / "state"), workspace_id="reader")
        try:
            return await store.decisions(run_id)
        finally:
            store.close()

    return asyncio.run(read())


def test_diff_prints_the_unified_diff_on_stdout_and_the_summary_on_stderr(repo: Path, tmp_path: Path) -> None:
    edited_run(repo, tmp_path, "r1")
    result = ided(repo, "runs", "diff", "r1")
    assert result.exit_code == 0
    assert result.stdout.startswith("diff --git a/src/app.py b/src/app.py")
    assert "+    return 2" in result.stdout
    assert "1 commit(s), 1 file(s)" in result.stderr and "implement attempt 1 by coder" in result.stderr
    as_json = ChangeSet.model_validate_json(ided(repo, "runs", "diff", "r1", "--json").stdout)
    assert as_json.files[0].new_text == "def main():\n    return 2\n"
    assert [d.kind for d in decisions(tmp_path, "r1")] == [DecisionKind.REVIEW, DecisionKind.REVIEW]


def test_accept_with_a_conflict_exits_4_with_the_report_and_writes_nothing(repo: Path, tmp_path: Path) -> None:
    edited_run(repo, tmp_path, "r2")
    write(repo, "src/app.py", "def main():\n    return 'mine'\n")
    result = ided(repo, "runs", "accept", "r2")
    assert result.exit_code == EXIT_CONFLICT
    assert "conflict:" in result.stderr and "src/app.py" in result.stderr and "uncommitted" in result.stderr
    assert (repo / "src/app.py").read_text() == "def main():\n    return 'mine'\n"
    logged = decisions(tmp_path, "r2")
    assert logged[-1].kind is DecisionKind.ACCEPT and logged[-1].data["files"][0]["path"] == "src/app.py"


def test_accept_then_rollback_through_the_cli_logs_the_commit_ids(repo: Path, tmp_path: Path) -> None:
    edited_run(repo, tmp_path, "r3")
    accepted = ided(repo, "runs", "accept", "r3", "--json")
    assert accepted.exit_code == 0
    commits = json.loads(accepted.stdout)["commits"]
    assert git(repo, "rev-parse", "HEAD") == commits[-1]
    assert (repo / "src/app.py").read_text() == "def main():\n    return 2\n"
    rolled = ided(repo, "runs", "rollback", "r3")
    assert rolled.exit_code == 0 and "1 revert commit(s)" in rolled.stderr
    assert (repo / "src/app.py").read_text() == "def main():\n    return 1\n"
    logged = decisions(tmp_path, "r3")
    assert [d.kind for d in logged] == [DecisionKind.ACCEPT, DecisionKind.ROLLBACK]
    assert logged[0].data["commits"] == commits
    assert logged[1].data["reverted"] == commits


def test_reject_and_cleanup_through_the_cli(repo: Path, tmp_path: Path) -> None:
    edited_run(repo, tmp_path, "r4")
    rejected = ided(repo, "runs", "reject", "r4")
    assert rejected.exit_code == 0 and "kept until cleanup" in rejected.stderr
    assert git(repo, "status", "--porcelain") == ""
    kept = ided(repo, "runs", "cleanup")
    assert kept.exit_code == 0 and "removed 0 run(s) older than 14 day(s)" in kept.stderr
    cleaned = ided(repo, "runs", "cleanup", "--older-than", "0", "--json")
    assert json.loads(cleaned.stdout)["removed_runs"] == ["r4"]
    assert git(repo, "branch", "--list", "ided/run/*") == ""


def test_an_unknown_run_and_a_non_git_workspace_are_clear_errors(tmp_path: Path, isolated_home: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / ".ided.toml").write_text(f'state_dir = "{tmp_path / "state2"}"\n')
    TrustStore.default().add(plain)
    result = ided(plain, "runs", "diff", "nope")
    assert result.exit_code == 1 and "run nope has no branch" in result.stderr
    cleanup = ided(plain, "runs", "cleanup")
    assert cleanup.exit_code == 1 and "not a git repository" in cleanup.stderr


def test_accept_only_keeps_the_named_file_and_logs_what_was_dropped(repo: Path, tmp_path: Path) -> None:
    runs = RunWorktrees(repo, tmp_path / "state")
    branch = runs.create("r1")
    write(branch.workdir, "src/app.py", "def main():\n    return 2\n")
    write(branch.workdir, "README.md", "# rewritten by the run\n")
    runs.commit_attempt("r1", stage_id="implement", attempt=1, agent_ids=["coder"])

    result = ided(repo, "runs", "accept", "r1", "--only", "src/app.py#0")
    assert result.exit_code == 0, result.output
    assert "dropped: README.md" in result.stderr
    assert (repo / "src/app.py").read_text() == "def main():\n    return 2\n"
    assert (repo / "README.md").read_text() == "# demo\n"
    (accepted,) = [d for d in decisions(tmp_path, "r1") if d.kind is DecisionKind.ACCEPT]
    assert accepted.data["dropped"] == ["README.md"] and "dropped: README.md" in accepted.summary
    assert ided(repo, "runs", "rollback", "r1").exit_code == 0
    assert (repo / "src/app.py").read_text() == "def main():\n    return 1\n"
