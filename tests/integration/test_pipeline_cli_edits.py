"""`ided run` in a git workspace: an editing run leaves a branch to review; `--ask` writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from daemon.cli.app import app
from daemon.trust import TrustStore
from tests.pipeline_support import choose, everyone_succeeds, recorded_tools, stage_intel_tools, write_script
from tests.vcs_support import git, make_repo

runner = CliRunner()

CODER_WRITES = {
    "role": "coder",
    "match": r"Attempt: 1\b",
    "say": "Fixing the sign.",
    "tool_calls": [{"name": "replace_in_file", "args": {"path": "src/app.py", "old_text": "1", "new_text": "2"}}],
}


@pytest.fixture
def repo(tmp_path: Path, isolated_home: Path) -> Path:
    root = make_repo(tmp_path / "ws")
    (tmp_path / "ws" / ".git" / "info" / "exclude").write_text(".ided.toml\n")
    (root / ".ided.toml").write_text(f'state_dir = "{tmp_path / "state"}"\n')
    TrustStore.default().add(root)  # your own project: its .ided.toml chooses the state dir
    return root


def ided(repo: Path, script: Path, *args: str) -> Result:
    settings = ["--set", f"pipeline.replay_script={script}", "--set", "pipeline.resilience.cache=false"]
    return runner.invoke(app, [*settings, *args], catch_exceptions=False, env={"PWD": str(repo)})


def _script(tmp_path: Path) -> Path:
    entries = [{"role": "orchestrator", "answer": choose("bug_fix")}, CODER_WRITES, everyone_succeeds()]
    return write_script(tmp_path / "script.yaml", entries, record_tools="tools.jsonl")


def test_an_editing_run_prints_its_change_set_and_how_to_review_it_and_leaves_the_tree_alone(
    repo: Path, tmp_path: Path
) -> None:
    result = ided(repo, _script(tmp_path), "run", "main returns the wrong value", "-w", str(repo))

    assert result.exit_code == 0, result.stderr
    assert "src/app.py +1/-1" in result.stderr
    assert "ided runs diff" in result.stderr and "ided runs accept" in result.stderr
    assert (repo / "src" / "app.py").read_text() == "def main():\n    return 1\n"
    branches = git(repo, "branch", "--list", "ided/run/*")
    assert "ided/run/" in branches  # "+ " marks a branch checked out in a worktree
    # the run went through the workspace daemon: the coder was offered the code-intel tools its stage names
    offered = recorded_tools(tmp_path / "tools.jsonl", "coder")
    assert stage_intel_tools("bug_fix", "fix", "coder") <= offered
    assert {"read_file", "replace_in_file"} <= offered and "call_hierarchy" not in offered


def test_ask_mode_runs_read_only_and_creates_no_branch(repo: Path, tmp_path: Path) -> None:
    result = ided(repo, _script(tmp_path), "run", "--ask", "main returns the wrong value", "-w", str(repo))

    assert "ided runs diff" not in result.stderr
    assert git(repo, "branch", "--list", "ided/run/*") == ""
    assert (repo / "src" / "app.py").read_text() == "def main():\n    return 1\n"


def test_with_no_daemon_the_run_says_its_agents_lack_code_intelligence_and_they_are_offered_none(
    repo: Path, tmp_path: Path
) -> None:
    result = ided(repo, _script(tmp_path), "run", "--no-daemon", "main returns the wrong value", "-w", str(repo))

    assert result.exit_code == 0, result.stderr
    offered = recorded_tools(tmp_path / "tools.jsonl", "coder")
    assert {"read_file", "replace_in_file"} <= offered
    assert not stage_intel_tools("bug_fix", "fix", "coder") & offered
