"""Run branches in real git repositories: worktrees, commits per stage attempt, change sets, snapshots, the lock."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.errors import EditLockHeld, ErrorCode, VcsError
from daemon.vcs.worktrees import RunWorktrees
from tests.vcs_support import git, make_repo, write


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def runs(repo: Path, tmp_path: Path) -> RunWorktrees:
    return RunWorktrees(repo, tmp_path / "state")


def test_create_branches_from_head_into_a_worktree_under_the_state_dir(repo: Path, runs: RunWorktrees) -> None:
    head = git(repo, "rev-parse", "HEAD")
    branch = runs.create("r1")
    assert branch.branch == "ided/run/r1"
    assert branch.base_commit == head and branch.snapshot_commit is None
    assert branch.base_branch == "refs/heads/main"
    assert branch.worktree == runs.state_dir / "worktrees" / "r1"
    assert (branch.worktree / "src" / "app.py").read_text() == "def main():\n    return 1\n"
    assert git(repo, "rev-parse", "ided/run/r1") == head
    assert git(repo, "status", "--porcelain") == ""
    assert runs.get("r1") == branch


def test_commit_attempt_makes_one_commit_naming_run_stage_attempt_and_agents(runs: RunWorktrees) -> None:
    branch = runs.create("r2")
    assert runs.commit_attempt("r2", stage_id="implement", attempt=1, agent_ids=["coder"]) is None
    write(branch.workdir, "src/app.py", "def main():\n    return 2\n")
    sha = runs.commit_attempt("r2", stage_id="implement", attempt=1, agent_ids=["coder", "test_writer"], summary="s")
    assert sha is not None
    message = git(branch.worktree, "log", "-1", "--format=%B", sha)
    assert message.startswith("ided run r2: implement attempt 1 by coder, test_writer\n\ns")
    assert git(branch.worktree, "log", "-1", "--format=%an <%ae>", sha) == "ided <ided@localhost>"
    assert runs.get("r2").commits == (sha,)
    changes = runs.change_set("r2")
    assert [(c.stage_id, c.attempt, c.agents) for c in changes.commits] == [("implement", 1, ("coder", "test_writer"))]


def test_commit_attempt_respects_gitignore(repo: Path, runs: RunWorktrees) -> None:
    write(repo, ".gitignore", "build/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore build")
    branch = runs.create("r3")
    write(branch.workdir, "build/out.txt", "generated")
    assert runs.commit_attempt("r3", stage_id="s", attempt=1, agent_ids=["coder"]) is None
    write(branch.workdir, "notes.md", "kept")
    assert runs.commit_attempt("r3", stage_id="s", attempt=2, agent_ids=["coder"]) is not None
    assert [f.path for f in runs.change_set("r3").files] == ["notes.md"]


def test_change_set_has_every_kind_of_file_change_with_texts_and_one_diff(repo: Path, runs: RunWorktrees) -> None:
    write(repo, "old_name.py", "x = 1\ny = 2\nz = 3\nw = 4\n")
    (repo / "logo.bin").write_bytes(b"\x00\x01\x02")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "more files")
    branch = runs.create("r4")
    wt = branch.workdir
    write(wt, "src/app.py", "def main():\n    return 42\n")
    write(wt, "src/new.py", "NEW = True\n")
    (wt / "README.md").unlink()
    (wt / "old_name.py").rename(wt / "new_name.py")
    (wt / "logo.bin").write_bytes(b"\x00\x09\x09\x09")
    runs.commit_attempt("r4", stage_id="implement", attempt=1, agent_ids=["coder"])
    write(wt, "src/new.py", "NEW = False\n")
    runs.commit_attempt("r4", stage_id="review", attempt=1, agent_ids=["reviewer"])

    changes = runs.change_set("r4")
    by_path = {f.path: f for f in changes.files}
    assert len(changes.commits) == 2 and not changes.empty
    assert by_path["src/app.py"].status == "modified"
    assert by_path["src/app.py"].old_text == "def main():\n    return 1\n"
    assert by_path["src/app.py"].new_text == "def main():\n    return 42\n"
    assert (by_path["src/app.py"].added, by_path["src/app.py"].removed) == (1, 1)
    assert "-    return 1\n+    return 42" in by_path["src/app.py"].diff
    assert by_path["src/new.py"].status == "added" and by_path["src/new.py"].new_text == "NEW = False\n"
    assert by_path["src/new.py"].old_text is None
    assert by_path["README.md"].status == "deleted" and by_path["README.md"].new_text is None
    assert by_path["new_name.py"].status == "renamed" and by_path["new_name.py"].old_path == "old_name.py"
    assert by_path["logo.bin"].binary and by_path["logo.bin"].old_text is None
    assert changes.diff.count("diff --git ") == 5
    assert changes.head_commit == git(repo, "rev-parse", "ided/run/r4")


def test_include_uncommitted_snapshots_staged_unstaged_and_untracked_without_touching_the_user_index(
    repo: Path, runs: RunWorktrees
) -> None:
    write(repo, "src/app.py", "def main():\n    return 'staged'\n")
    git(repo, "add", "src/app.py")
    write(repo, "README.md", "# unstaged edit\n")
    write(repo, "scratch.txt", "untracked\n")
    status_before = git(repo, "status", "--porcelain")

    branch = runs.create("r5", include_uncommitted=True)

    assert branch.snapshot_commit is not None
    assert git(repo, "log", "-1", "--format=%s", branch.snapshot_commit) == (
        "ided: snapshot of uncommitted changes for run r5"
    )
    assert (branch.workdir / "README.md").read_text() == "# unstaged edit\n"
    assert (branch.workdir / "scratch.txt").read_text() == "untracked\n"
    assert "staged" in (branch.workdir / "src" / "app.py").read_text()
    assert git(repo, "status", "--porcelain") == status_before
    assert runs.change_set("r5").empty  # the snapshot is the start, not a change of the run


def test_include_uncommitted_on_a_clean_tree_makes_no_snapshot(runs: RunWorktrees) -> None:
    assert runs.create("r6", include_uncommitted=True).snapshot_commit is None


def test_a_folder_that_is_not_a_repository_is_refused_naming_it(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    runs = RunWorktrees(plain, tmp_path / "state")
    assert not RunWorktrees.is_repository(plain)
    with pytest.raises(VcsError) as caught:
        runs.create("r7")
    assert caught.value.code == ErrorCode.NOT_A_REPOSITORY
    assert str(plain.resolve()) in str(caught.value) and "Read-only runs still work" in str(caught.value)


def test_a_detached_head_is_refused(repo: Path, runs: RunWorktrees) -> None:
    git(repo, "checkout", "-q", "--detach")
    with pytest.raises(VcsError, match="detached"):
        runs.create("r8")


def test_a_repository_without_commits_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    with pytest.raises(VcsError, match="no commit yet") as caught:
        RunWorktrees(empty, tmp_path / "state").create("r9")
    assert caught.value.code == ErrorCode.NOT_A_REPOSITORY


def test_a_workspace_in_a_subfolder_works_in_the_same_subfolder_of_the_worktree(repo: Path, tmp_path: Path) -> None:
    runs = RunWorktrees(repo / "src", tmp_path / "state")
    branch = runs.create("r10")
    assert branch.repo_root == repo.resolve()
    assert branch.workdir == branch.worktree / "src"
    assert (branch.workdir / "app.py").is_file()


def test_the_edit_lock_admits_one_editing_run_and_names_the_holder(runs: RunWorktrees) -> None:
    with runs.edit_lock("first"):
        with pytest.raises(EditLockHeld) as caught, runs.edit_lock("second"):
            pass
        assert caught.value.holder == "first"
        assert caught.value.code == ErrorCode.EDIT_LOCK_HELD
        assert "run first is editing" in str(caught.value)
    with runs.edit_lock("second"):
        assert runs.registry.lock_holder() == "second"


def test_unknown_runs_and_bad_run_ids_are_clear_errors(runs: RunWorktrees) -> None:
    with pytest.raises(VcsError, match="run nope has no branch") as caught:
        runs.change_set("nope")
    assert caught.value.code == ErrorCode.RUN_NOT_FOUND
    with pytest.raises(VcsError, match="not a valid run id"):
        runs.create("../escape")
    runs.create("twice")
    with pytest.raises(VcsError, match="already has a branch"):
        runs.create("twice")
