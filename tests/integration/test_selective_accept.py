"""A reviewer keeps part of a run: a replay-scripted coder edits three files in a real git repository; accept
through the run service keeps one file whole, one hunk of two of another and drops the third, as one reviewed
commit on the run's branch applied to the user's branch; the decision log says what was kept and dropped, and
rollback undoes it like any accept."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.core.review_models import AcceptSelection, KeptFile
from daemon.core.run_models import DecisionKind, RunStatus
from daemon.errors import ConflictError, VcsError
from daemon.service.runs.local import here
from daemon.service.runs.params import RunStart
from daemon.service.runs.review import RunReview
from daemon.service.runs.work import RunWork
from daemon.vcs.selection import apply_hunks
from daemon.vcs.worktrees import RunWorktrees
from tests.integration.test_agents_runtime import ONLY_IMPLEMENTATION, ok, rest_succeeds, runtime_for
from tests.pipeline_support import WAIT
from tests.vcs_support import git, make_repo

LONG = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(12))
"""Far apart edits in it are two hunks."""
LONG_RUN = LONG.replace("return 1\n", "return 'one'\n").replace("return 10\n", "return 'ten'\n")
LONG_KEPT = LONG.replace("return 10\n", "return 'ten'\n")
CALC = "def add(a, b):\n    return a + b\n"
CALC_RUN = "def add(a, b):\n    return a + b  # checked\n"
NOTES_RUN = "notes the reviewer does not want\n"


def _writes(*files: tuple[str, str]) -> dict[str, object]:
    return {
        "role": "coder",
        "tool_calls": [{"name": "write_file", "args": {"path": p, "content": c}} for p, c in files],
    }


async def test_accept_keeps_one_file_whole_one_hunk_of_another_drops_the_third_and_rollback_undoes_it(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"src/calc.py": CALC, "src/long.py": LONG})
    before = git(repo, "rev-parse", "HEAD")
    entries = [
        ONLY_IMPLEMENTATION,
        _writes(("src/calc.py", CALC_RUN), ("src/long.py", LONG_RUN), ("notes.txt", NOTES_RUN)),
        {"role": "coder", **ok("three files changed")},
        rest_succeeds(),
    ]
    async with runtime_for(tmp_path, repo, entries) as runtime:
        runs = here(RunWork(runtime, RunReview(RunWorktrees(repo, tmp_path / "state"), runtime.store)))
        async with await runs.start(RunStart(request="check add and rename the numbers")) as run:
            _ = [e async for e in run]
        assert (await runs.wait(run.run_id, wait_seconds=WAIT)).status is RunStatus.SUCCEEDED
        changes = await runs.diff(run.run_id)
        long_diff = next(f.diff for f in changes.files if f.path == "src/long.py")
        assert long_diff.count("\n@@ ") == 2 and [f.path for f in changes.files] == [
            "notes.txt",
            "src/calc.py",
            "src/long.py",
        ]

        selection = AcceptSelection(files=(KeptFile(path="src/calc.py"), KeptFile(path="src/long.py", hunks=(1,))))
        result = await runs.accept(run.run_id, selection=selection)
        log = [d for d in await runs.decisions(run.run_id) if d.kind is DecisionKind.ACCEPT]
        branch_head = git(repo, "rev-parse", f"refs/heads/ided/run/{run.run_id}")

        # the user's branch: one new commit with exactly the kept changes
        assert git(repo, "rev-list", "--count", f"{before}..HEAD") == "1"
        assert git(repo, "rev-parse", "HEAD") == result.head == result.commits[0]
        assert sorted(git(repo, "diff", "--name-only", before, "HEAD").splitlines()) == ["src/calc.py", "src/long.py"]
        assert git(repo, "show", "HEAD:src/calc.py") + "\n" == CALC_RUN
        assert git(repo, "show", "HEAD:src/long.py") == LONG_KEPT.rstrip("\n")
        assert (repo / "src/long.py").read_text() == LONG_KEPT
        assert not (repo / "notes.txt").exists()
        assert git(repo, "status", "--porcelain") == ""
        assert f"ided-source-commit: {result.reviewed_commit}" in git(repo, "log", "-1", "--format=%B")
        # the run's branch ends in the reviewed commit, which holds what was accepted
        assert result.reviewed_commit == branch_head == result.source_commits[0]
        assert git(repo, "rev-parse", f"{branch_head}^{{tree}}") == git(repo, "rev-parse", "HEAD^{tree}")
        assert (result.partial, result.dropped) == (("src/long.py",), ("notes.txt",))
        (entry,) = log
        assert "kept whole: src/calc.py; in part: src/long.py; dropped: notes.txt" in entry.summary
        assert entry.data["reviewed_commit"] == branch_head
        assert entry.data["selection"][1] == {"path": "src/long.py", "hunks": [1], "text_given": False}

        rolled = await runs.rollback(run.run_id)
        assert rolled.reverted == result.commits
        assert (await runs.branch(run.run_id)).review == "rolled_back"
    assert (repo / "src/calc.py").read_text() == CALC
    assert (repo / "src/long.py").read_text() == LONG
    assert git(repo, "rev-list", "--count", f"{before}..HEAD") == "2"  # the reviewed commit and its revert
    assert git(repo, "diff", before, "HEAD") == ""


def test_a_selection_naming_a_file_the_run_did_not_change_or_keeping_nothing_is_refused_and_writes_nothing(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"src/long.py": LONG})
    runs = RunWorktrees(repo, tmp_path / "state")
    branch = runs.create("r1")
    (branch.workdir / "src/long.py").write_text(LONG_RUN)
    runs.commit_attempt("r1", stage_id="implement", attempt=1, agent_ids=["coder"])
    head = git(repo, "rev-parse", "HEAD")
    for selection, why in [
        (AcceptSelection(files=(KeptFile(path="README.md"),)), "did not change README.md"),
        (AcceptSelection(files=(KeptFile(path="src/long.py", hunks=()),)), "keeps nothing"),
        (AcceptSelection(files=(KeptFile(path="src/long.py", hunks=(2,)),)), "no hunk 2"),
    ]:
        with pytest.raises(VcsError, match=why):
            runs.accept("r1", selection)
    assert git(repo, "rev-parse", "HEAD") == head and runs.get("r1").review == "open"


def test_a_text_the_reviewer_made_is_committed_as_the_files_kept_version(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/long.py": LONG})
    runs = RunWorktrees(repo, tmp_path / "state")
    branch = runs.create("r1")
    (branch.workdir / "src/long.py").write_text(LONG_RUN.rstrip("\n"))  # the run also drops the last newline
    runs.commit_attempt("r1", stage_id="implement", attempt=1, agent_ids=["coder"])
    (change,) = runs.change_set("r1").files
    assert apply_hunks(LONG, change.diff, [0, 1]) == LONG_RUN.rstrip("\n")
    first_only = apply_hunks(LONG, change.diff, [0])
    assert "'one'" in first_only and "'ten'" not in first_only and first_only.endswith("\n\n")
    result = runs.accept("r1", AcceptSelection(files=(KeptFile(path="src/long.py", text=LONG_KEPT),)))
    assert (repo / "src/long.py").read_text() == LONG_KEPT and result.partial == ("src/long.py",)
    runs.rollback("r1")
    assert (repo / "src/long.py").read_text() == LONG


def test_only_the_kept_files_are_checked_for_conflicts_and_the_users_edit_to_a_dropped_one_stays(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"src/calc.py": CALC, "src/long.py": LONG})
    runs = RunWorktrees(repo, tmp_path / "state")
    branch = runs.create("r1")
    (branch.workdir / "src/calc.py").write_text(CALC_RUN)
    (branch.workdir / "src/long.py").write_text(LONG_RUN)
    runs.commit_attempt("r1", stage_id="implement", attempt=1, agent_ids=["coder"])
    (repo / "src/long.py").write_text("# mine, unsaved\n")

    with pytest.raises(ConflictError):
        runs.accept("r1")
    result = runs.accept("r1", AcceptSelection(files=(KeptFile(path="src/calc.py"),)))

    assert result.files == ("src/calc.py",) and result.dropped == ("src/long.py",)
    assert (repo / "src/calc.py").read_text() == CALC_RUN
    assert (repo / "src/long.py").read_text() == "# mine, unsaved\n"
    assert git(repo, "status", "--porcelain") == " M src/long.py"
