"""Accept, reject, rollback and cleanup of run branches against a user who keeps working meanwhile."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.core.review_models import ConflictReport
from daemon.errors import ConflictError, ErrorCode, VcsError
from daemon.vcs.worktrees import RunWorktrees
from tests.vcs_support import git, make_repo, write

APP_V1 = "def main():\n    return 1\n"
APP_RUN = "def main():\n    return 'from the run'\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def runs(repo: Path, tmp_path: Path) -> RunWorktrees:
    return RunWorktrees(repo, tmp_path / "state")


def _run_edits_app(runs: RunWorktrees, run_id: str = "r1") -> str:
    branch = runs.create(run_id)
    write(branch.workdir, "src/app.py", APP_RUN)
    write(branch.workdir, "src/added.py", "ADDED = 1\n")
    sha = runs.commit_attempt(run_id, stage_id="implement", attempt=1, agent_ids=["coder"])
    assert sha is not None
    return sha


def test_accept_stops_when_the_user_committed_the_same_file_and_leaves_both_sides_intact(
    repo: Path, runs: RunWorktrees
) -> None:
    run_commit = _run_edits_app(runs)
    write(repo, "src/app.py", "def main():\n    return 'mine'\n")
    git(repo, "commit", "-q", "-am", "my own change")
    user_head = git(repo, "rev-parse", "HEAD")

    with pytest.raises(ConflictError) as caught:
        runs.accept("r1")

    assert caught.value.code == ErrorCode.CHANGE_CONFLICT
    report = caught.value.report
    assert isinstance(report, ConflictReport)
    assert [f.path for f in report.files] == ["src/app.py"]
    assert "my own change" in report.files[0].user_side
    assert report.files[0].run_commits == (run_commit,)
    assert "src/app.py" in str(caught.value)
    assert git(repo, "rev-parse", "HEAD") == user_head
    assert (repo / "src/app.py").read_text() == "def main():\n    return 'mine'\n"
    assert not (repo / "src/added.py").exists()
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "rev-parse", "ided/run/r1") == run_commit
    assert runs.get("r1").review == "open"


def test_accept_stops_when_the_user_has_uncommitted_edits_to_the_same_file(repo: Path, runs: RunWorktrees) -> None:
    _run_edits_app(runs)
    write(repo, "src/app.py", "def main():\n    return 'typing...'\n")
    with pytest.raises(ConflictError) as caught:
        runs.accept("r1")
    report = caught.value.report
    assert isinstance(report, ConflictReport)
    assert report.files[0].uncommitted and "uncommitted" in report.files[0].user_side
    assert (repo / "src/app.py").read_text() == "def main():\n    return 'typing...'\n"


def test_accept_stops_when_an_untracked_user_file_has_the_path_the_run_adds(repo: Path, runs: RunWorktrees) -> None:
    _run_edits_app(runs)
    write(repo, "src/added.py", "mine, not tracked\n")
    with pytest.raises(ConflictError, match="untracked file"):
        runs.accept("r1")
    assert (repo / "src/added.py").read_text() == "mine, not tracked\n"


def test_accept_applies_the_run_as_commits_and_keeps_the_users_edits_to_other_files(
    repo: Path, runs: RunWorktrees
) -> None:
    run_commit = _run_edits_app(runs)
    write(repo, "README.md", "# committed by me meanwhile\n")
    git(repo, "commit", "-q", "-am", "docs")
    user_head = git(repo, "rev-parse", "HEAD")
    write(repo, "notes/staged.md", "staged\n")
    git(repo, "add", "notes/staged.md")
    write(repo, "README.md", "# committed, then edited again\n")
    write(repo, "scratch.txt", "untracked\n")

    result = runs.accept("r1")

    assert result.branch == "refs/heads/main"
    assert len(result.commits) == 1 and result.source_commits == (run_commit,)
    assert git(repo, "rev-parse", "HEAD") == result.head == result.commits[0]
    assert git(repo, "rev-parse", "HEAD^") == user_head
    message = git(repo, "log", "-1", "--format=%B")
    assert message.startswith("ided run r1: implement attempt 1 by coder")
    assert f"ided-source-commit: {run_commit}" in message
    assert git(repo, "log", "-1", "--format=%an|%cn") == "ided|Ada User"
    assert (repo / "src/app.py").read_text() == APP_RUN
    assert (repo / "src/added.py").read_text() == "ADDED = 1\n"
    assert (repo / "README.md").read_text() == "# committed, then edited again\n"
    assert (repo / "scratch.txt").read_text() == "untracked\n"
    status = sorted(git(repo, "status", "--porcelain").splitlines())
    assert status == [" M README.md", "?? scratch.txt", "A  notes/staged.md"]
    assert runs.get("r1").review == "accepted"
    assert runs.get("r1").accepted_commits == result.commits
    assert not runs.get("r1").worktree.exists()
    assert git(repo, "rev-parse", "ided/run/r1") == run_commit  # the branch stays until cleanup


def test_accept_of_a_run_that_started_from_uncommitted_changes_folds_them_into_its_commit(
    repo: Path, runs: RunWorktrees
) -> None:
    write(repo, "src/app.py", "def main():\n    return 'wip'\n")
    write(repo, "other.txt", "wip elsewhere\n")
    branch = runs.create("r2", include_uncommitted=True)
    write(branch.workdir, "src/app.py", "def main():\n    return 'wip, finished by the run'\n")
    runs.commit_attempt("r2", stage_id="implement", attempt=1, agent_ids=["coder"])

    result = runs.accept("r2")

    assert result.files == ("src/app.py",)
    assert git(repo, "show", "HEAD:src/app.py") == "def main():\n    return 'wip, finished by the run'"
    assert (repo / "other.txt").read_text() == "wip elsewhere\n"
    assert git(repo, "status", "--porcelain") == "?? other.txt"


def test_reject_leaves_the_user_tree_untouched_and_keeps_the_branch(repo: Path, runs: RunWorktrees) -> None:
    run_commit = _run_edits_app(runs)
    head = git(repo, "rev-parse", "HEAD")
    branch = runs.reject("r1")
    assert branch.review == "rejected"
    assert git(repo, "rev-parse", "HEAD") == head
    assert (repo / "src/app.py").read_text() == APP_V1
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "rev-parse", "ided/run/r1") == run_commit
    assert runs.change_set("r1").review == "rejected"


def test_rollback_after_accept_reverts_with_new_commits_and_keeps_history(repo: Path, runs: RunWorktrees) -> None:
    branch = runs.create("r3")
    write(branch.workdir, "src/app.py", APP_RUN)
    runs.commit_attempt("r3", stage_id="implement", attempt=1, agent_ids=["coder"])
    (branch.workdir / "README.md").unlink()
    write(branch.workdir, "src/added.py", "ADDED = 1\n")
    runs.commit_attempt("r3", stage_id="implement", attempt=2, agent_ids=["coder"])
    accepted = runs.accept("r3")
    write(repo, "unrelated.txt", "later work\n")
    git(repo, "add", "unrelated.txt")
    git(repo, "commit", "-q", "-m", "later work")
    history_before = git(repo, "log", "--format=%H").splitlines()

    result = runs.rollback("r3")

    assert len(result.commits) == 2
    assert result.reverted == tuple(reversed(accepted.commits))
    history = git(repo, "log", "--format=%H").splitlines()
    assert history[2:] == history_before and history[:2] == list(reversed(result.commits))
    assert git(repo, "log", "-1", "--format=%s") == 'Revert "ided run r3: implement attempt 1 by coder"'
    assert (repo / "src/app.py").read_text() == APP_V1
    assert (repo / "README.md").read_text() == "# demo\n"
    assert not (repo / "src/added.py").exists()
    assert (repo / "unrelated.txt").read_text() == "later work\n"
    assert git(repo, "status", "--porcelain") == ""
    assert runs.get("r3").review == "rolled_back"
    with pytest.raises(VcsError, match="not accepted"):
        runs.rollback("r3")


def test_rollback_stops_when_the_user_changed_an_accepted_file_again(repo: Path, runs: RunWorktrees) -> None:
    _run_edits_app(runs)
    runs.accept("r1")
    write(repo, "src/app.py", "def main():\n    return 'edited after accept'\n")
    git(repo, "commit", "-q", "-am", "tweak")
    with pytest.raises(ConflictError, match="tweak"):
        runs.rollback("r1")
    assert (repo / "src/app.py").read_text() == "def main():\n    return 'edited after accept'\n"
    assert runs.get("r1").review == "accepted"


def test_review_is_refused_while_the_run_still_holds_the_edit_lock(runs: RunWorktrees) -> None:
    _run_edits_app(runs)
    with runs.edit_lock("r1"), pytest.raises(VcsError, match="still editing"):
        runs.accept("r1")
    assert runs.accept("r1").commits


def test_a_twice_accepted_run_is_a_clear_error(runs: RunWorktrees) -> None:
    _run_edits_app(runs)
    runs.accept("r1")
    with pytest.raises(VcsError, match="already accepted"):
        runs.accept("r1")
    with pytest.raises(VcsError, match="rollback"):
        runs.reject("r1")


def test_cleanup_removes_old_worktrees_and_branches_and_keeps_recent_and_locked_runs(
    repo: Path, tmp_path: Path
) -> None:
    runs = RunWorktrees(repo, tmp_path / "state", retention_days=14)
    _run_edits_app(runs, "old")
    runs.create("busy")
    assert runs.cleanup().removed_runs == ()  # everything is younger than the retention

    with runs.edit_lock("busy"):
        report = runs.cleanup(older_than_days=0)

    assert report.removed_runs == ("old",) and report.kept_runs == ("busy",)
    assert (report.removed_worktrees, report.removed_branches) == (1, 1)
    assert not runs.get("old").worktree.exists()
    assert git(repo, "branch", "--list", "ided/run/old") == ""
    assert runs.get("old").cleaned_at is not None
    assert "busy" in git(repo, "branch", "--list", "ided/run/busy")
    assert runs.cleanup(older_than_days=0).removed_runs == ("busy",)
    with pytest.raises(VcsError, match="removed by cleanup"):
        runs.change_set("old")
