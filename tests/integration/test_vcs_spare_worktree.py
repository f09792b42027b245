"""The spare worktree: checked out ahead, taken over by the next editing run, in real git repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.vcs.worktrees import RunWorktrees
from tests.vcs_support import git, make_repo, write


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def runs(repo: Path, tmp_path: Path) -> RunWorktrees:
    return RunWorktrees(repo, tmp_path / "state")


def _listed(repo: Path) -> list[str]:
    return [
        line.removeprefix("worktree ")
        for line in git(repo, "worktree", "list", "--porcelain").splitlines()
        if line.startswith("worktree ")
    ]


def test_a_run_takes_over_the_spare_checked_out_ahead_on_its_own_branch(repo: Path, runs: RunWorktrees) -> None:
    head = git(repo, "rev-parse", "HEAD")
    spare = runs.prepare_spare()
    assert spare is not None and (spare / "src" / "app.py").is_file()
    assert runs.prepare_spare() == spare  # one spare at a time
    branch = runs.create("r1")
    assert not spare.exists() and runs.spares() == []
    assert (branch.worktree / "src" / "app.py").read_text() == "def main():\n    return 1\n"
    assert git(branch.worktree, "symbolic-ref", "HEAD") == "refs/heads/ided/run/r1"
    assert git(repo, "rev-parse", "ided/run/r1") == head
    assert git(branch.worktree, "status", "--porcelain") == ""
    assert sorted(_listed(repo)) == sorted([str(repo), str(branch.worktree)])
    assert git(repo, "status", "--porcelain") == ""


def test_a_spare_prepared_before_head_moved_gives_the_run_the_new_head(repo: Path, runs: RunWorktrees) -> None:
    assert runs.prepare_spare() is not None
    write(repo, "src/app.py", "def main():\n    return 2\n")
    write(repo, "src/new.py", "NEW = True\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "moved on")
    branch = runs.create("r2")
    assert branch.base_commit == git(repo, "rev-parse", "HEAD")
    assert git(branch.worktree, "rev-parse", "HEAD") == branch.base_commit
    assert (branch.worktree / "src" / "app.py").read_text() == "def main():\n    return 2\n"
    assert (branch.worktree / "src" / "new.py").is_file()
    assert git(branch.worktree, "status", "--porcelain") == ""


def test_uncommitted_changes_reach_a_run_that_takes_over_a_spare(repo: Path, runs: RunWorktrees) -> None:
    assert runs.prepare_spare() is not None
    write(repo, "src/app.py", "def main():\n    return 3\n")
    branch = runs.create("r3", include_uncommitted=True)
    assert branch.snapshot_commit is not None
    assert git(branch.worktree, "rev-parse", "HEAD") == branch.snapshot_commit
    assert (branch.worktree / "src" / "app.py").read_text() == "def main():\n    return 3\n"
    assert git(branch.worktree, "status", "--porcelain") == ""


def test_a_spare_git_no_longer_knows_is_left_alone_and_the_run_checks_out_afresh(
    repo: Path, runs: RunWorktrees
) -> None:
    spare = runs.prepare_spare()
    assert spare is not None
    git(repo, "worktree", "remove", "--force", str(spare))
    write(spare.parent, spare.name + "/keep.txt", "not a worktree of this repository")
    assert runs.spares() == []
    branch = runs.create("r4")
    assert (branch.worktree / "src" / "app.py").is_file()
    assert (spare / "keep.txt").read_text() == "not a worktree of this repository"


def test_cleanup_removes_the_spare(repo: Path, runs: RunWorktrees) -> None:
    spare = runs.prepare_spare()
    assert spare is not None
    report = runs.cleanup()
    assert report.removed_worktrees == 1
    assert not spare.exists() and runs.spares() == []
    assert _listed(repo) == [str(repo)]
