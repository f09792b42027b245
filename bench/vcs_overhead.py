"""Benchmark: what the run-branch machinery costs per run and per stage on a large repository.

Generates a git repository of ``--files`` Python files (default 10,000, ~0.9 KB each, 100 per
folder, one commit), then for ``--runs`` editing runs: create the worktree, ``--stages`` stage
attempts that each change a few files and are committed, the change set after each, accept onto the
user's branch (with the user's own uncommitted edits elsewhere), and cleanup. Run::

    uv run --frozen python bench/vcs_overhead.py [--files 10000] [--runs 3] [--stages 5] [--keep DIR]

Per stage, the overhead an agent run pays is ``commit_attempt`` + ``change_set``; per run it is
``create`` + ``accept`` + ``cleanup``. Wall-clock seconds, medians over every sample.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from daemon.vcs.worktrees import RunWorktrees

__all__ = ["main"]

T = TypeVar("T")

_FILE = '''"""Module {i}: generated for the vcs benchmark."""


def function_{i}(value: int) -> int:
    """Return the value shifted by {i}."""
    total = value
    for step in range({n}):
        total += step * {i}
    return total


class Thing{i}:
    def __init__(self, size: int) -> None:
        self.size = size

    def grow(self, by: int) -> int:
        self.size += by
        return self.size
'''


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, timeout=600)


def generate(root: Path, files: int) -> Path:
    repo = root / "repo"
    repo.mkdir(parents=True)
    for i in range(files):
        path = repo / f"pkg{i // 100:03d}" / f"mod{i:05d}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(_FILE.format(i=i, n=i % 7 + 1), encoding="utf-8")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.name", "Bench User")
    _git(repo, "config", "user.email", "bench@example.com")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "generated")
    return repo


class Timer:
    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = defaultdict(list)

    def __call__(self, name: str, fn: Callable[[], T]) -> T:
        start = time.perf_counter()
        result = fn()
        self.samples[name].append(time.perf_counter() - start)
        return result

    def report(self) -> None:
        print(f"{'operation':<34} {'n':>3} {'median s':>9} {'min s':>8} {'max s':>8}")
        for name, values in self.samples.items():
            print(
                f"{name:<34} {len(values):>3} {statistics.median(values):>9.3f} {min(values):>8.3f} {max(values):>8.3f}"
            )


def _lock_once(worktrees: RunWorktrees, run_id: str) -> None:
    with worktrees.edit_lock(run_id):
        pass


def _one_run(worktrees: RunWorktrees, timer: Timer, r: int, stages: int) -> None:
    run_id = f"bench{r}"
    timer("edit_lock acquire+release", lambda: _lock_once(worktrees, run_id))
    branch = timer("create (worktree + branch)", lambda: worktrees.create(run_id))
    timer(
        "commit_attempt, nothing changed",
        lambda: worktrees.commit_attempt(run_id, stage_id="noop", attempt=1, agent_ids=["coder"]),
    )
    for s in range(stages):
        for k in range(3):  # each stage edits three files and adds one
            index = 100 + r * 1000 + s * 10 + k
            target = branch.workdir / f"pkg{index // 100:03d}" / f"mod{index:05d}.py"
            target.write_text(target.read_text() + f"\n# run {r} stage {s}\n", encoding="utf-8")
        (branch.workdir / f"new_{r}_{s}.py").write_text(f"VALUE = {s}\n", encoding="utf-8")
        sha = timer(
            "commit_attempt (3 edits + 1 new)",
            lambda s=s: worktrees.commit_attempt(run_id, stage_id=f"stage{s}", attempt=1, agent_ids=["coder"]),
        )
        assert sha is not None
        changes = timer("change_set", lambda: worktrees.change_set(run_id))
        assert len(changes.files) == 4 * (s + 1)
    result = timer("accept (check + commits + sync)", lambda: worktrees.accept(run_id))
    assert len(result.commits) == stages


def bench(root: Path, *, files: int, runs: int, stages: int) -> Timer:
    t0 = time.perf_counter()
    repo = generate(root, files)
    print(f"generated {files} files and committed them in {time.perf_counter() - t0:.1f} s ({repo})")
    worktrees = RunWorktrees(repo, root / "state")
    timer = Timer()
    (repo / "pkg000" / "mod00000.py").write_text("# the user's own uncommitted edit\n", encoding="utf-8")
    for r in range(runs):
        _one_run(worktrees, timer, r, stages)
    snap = timer("create with uncommitted snapshot", lambda: worktrees.create("snapshot", include_uncommitted=True))
    assert snap.snapshot_commit is not None
    timer("cleanup (all runs)", lambda: worktrees.cleanup(older_than_days=0))
    return timer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--stages", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None, help="Generate under this folder and keep it.")
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        timer = bench(args.keep, files=args.files, runs=args.runs, stages=args.stages)
    else:
        with tempfile.TemporaryDirectory(prefix="ided-bench-vcs-") as tmp:
            timer = bench(Path(tmp), files=args.files, runs=args.runs, stages=args.stages)
    timer.report()
    med = {name: statistics.median(values) for name, values in timer.samples.items()}
    per_stage = med["commit_attempt (3 edits + 1 new)"] + med["change_set"]
    per_run = med["create (worktree + branch)"] + med["accept (check + commits + sync)"]
    print(f"per stage (commit + change set): {per_stage:.3f} s; per run (create + accept): {per_run:.3f} s")


if __name__ == "__main__":
    main()
