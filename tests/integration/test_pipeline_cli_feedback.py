"""`ided runs feedback ID TEXT`: review feedback from the command line reruns the run's last editing stage
on its branch, as a new commit, the way ACP's "Send feedback" does; runs that cannot take it say why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from daemon.cli.app import app
from daemon.trust import TrustStore
from tests.pipeline_support import choose, everyone_succeeds, write_script
from tests.vcs_support import git, make_repo

runner = CliRunner()

FEEDBACK = "return 3, not 2"
CODER_WRITES = {
    "role": "coder",
    "match": r"Attempt: 1\b",
    "tool_calls": [{"name": "replace_in_file", "args": {"path": "src/app.py", "old_text": "1", "new_text": "2"}}],
}
CODER_ANSWERS_FEEDBACK = {
    "role": "coder",
    "match": r"Feedback from the person reviewing the change.*\n" + FEEDBACK,
    "tool_calls": [{"name": "replace_in_file", "args": {"path": "src/app.py", "old_text": "2", "new_text": "3"}}],
}


@pytest.fixture
def repo(tmp_path: Path, isolated_home: Path) -> Path:
    root = make_repo(tmp_path / "ws")
    (tmp_path / "ws" / ".git" / "info" / "exclude").write_text(".ided.toml\n")
    (root / ".ided.toml").write_text(f'state_dir = "{tmp_path / "state"}"\n')
    TrustStore.default().add(root)  # your own project: its .ided.toml chooses the state dir
    return root


@pytest.fixture
def script(tmp_path: Path) -> Path:
    """One script for both processes: the feedback entry only fits a prompt that carries the feedback."""
    entries = [{"role": "orchestrator", "answer": choose("bug_fix")}, CODER_ANSWERS_FEEDBACK, CODER_WRITES]
    return write_script(tmp_path / "script.yaml", [*entries, everyone_succeeds()])


def ided(repo: Path, script: Path, *args: str) -> Result:
    settings = ["--set", f"pipeline.replay_script={script}", "--set", "pipeline.resilience.cache=false"]
    return runner.invoke(app, [*settings, *args, "-w", str(repo)], catch_exceptions=False)


def edited_run(repo: Path, script: Path) -> str:
    result = ided(repo, script, "run", "--json", "main returns the wrong value")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["run_id"]


def test_feedback_reruns_the_editing_stage_on_the_run_branch_as_a_new_commit(repo: Path, script: Path) -> None:
    run_id = edited_run(repo, script)
    branch = f"ided/run/{run_id}"
    assert git(repo, "show", f"{branch}:src/app.py") == "def main():\n    return 2"
    commits_before = git(repo, "rev-list", "--count", branch)

    result = ided(repo, script, "runs", "feedback", run_id, FEEDBACK, "--json")

    assert result.exit_code == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["run_id"] == run_id and record["status"] == "succeeded" and record["follow_ups"] == 1
    assert git(repo, "show", f"{branch}:src/app.py") == "def main():\n    return 3"
    assert int(git(repo, "rev-list", "--count", branch)) == int(commits_before) + 1
    assert f"Feedback answered: {FEEDBACK}" in git(repo, "log", "-1", "--format=%B", branch)
    assert (repo / "src" / "app.py").read_text() == "def main():\n    return 1\n"  # nothing reaches the tree
    shown = ided(repo, script, "runs", "show", run_id, "--json")
    decisions = [d["summary"] for d in json.loads(shown.stdout)["decisions"]]
    assert any(d.startswith("feedback for ") and d.endswith(FEEDBACK) for d in decisions)


def test_feedback_on_an_accepted_run_is_refused_and_changes_nothing(repo: Path, script: Path) -> None:
    run_id = edited_run(repo, script)
    accepted = ided(repo, script, "runs", "accept", run_id)
    assert accepted.exit_code == 0, accepted.stderr
    head = git(repo, "rev-parse", "HEAD")

    result = ided(repo, script, "runs", "feedback", run_id, FEEDBACK)

    assert result.exit_code == 1
    assert f"run {run_id} was already accepted; start a new run instead" in result.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    assert (repo / "src" / "app.py").read_text() == "def main():\n    return 2\n"


def test_empty_feedback_and_an_unknown_run_are_clear_errors(repo: Path, script: Path) -> None:
    run_id = edited_run(repo, script)

    empty = ided(repo, script, "runs", "feedback", run_id, "   ")
    unknown = ided(repo, script, "runs", "feedback", "no-such-run", FEEDBACK)

    assert empty.exit_code == 1 and "feedback is empty" in empty.stderr
    assert unknown.exit_code == 1 and "no-such-run" in unknown.stderr
