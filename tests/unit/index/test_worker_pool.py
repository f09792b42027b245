"""The parsing worker pool: started ahead of the scan or on first use, same outcomes as inline work."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.index.file_worker import FileJob, FileOutcome, WorkerSettings, process_batch
from daemon.index.worker_pool import WorkerPool

SETTINGS = WorkerSettings(max_file_bytes=1_000_000, max_chunk_lines=150, text_window_lines=60)


def _jobs(root: Path, n: int) -> list[FileJob]:
    jobs: list[FileJob] = []
    for i in range(n):
        path = root / f"mod{i}.py"
        source = f"def function_{i}(x):\n    return x + {i}\n\n\nclass Thing{i}:\n    def run(self):\n        pass\n"
        path.write_text(source)
        st = path.stat()
        jobs.append(FileJob(path.name, str(path), st.st_size, st.st_mtime_ns, "python", None))
    return jobs


def _summary(outcomes: list[list[FileOutcome]]) -> list[tuple[str, tuple[str, ...]]]:
    return [(o.job.rel_path, o.points.ids if o.points else ()) for batch in outcomes for o in batch]


@pytest.mark.parametrize("started_early", [True, False])
def test_the_pool_gives_the_same_outcomes_in_order_as_inline_work(tmp_path: Path, started_early: bool) -> None:
    jobs = _jobs(tmp_path, 12)
    batches = [jobs[i : i + 5] for i in range(0, len(jobs), 5)]
    inline = [process_batch(b, SETTINGS) for b in batches]
    with WorkerPool(2) as pool:
        if started_early:
            pool.start()
            pool.start()  # idempotent
        pooled = list(pool.map(batches, SETTINGS))
    assert _summary(pooled) == _summary(inline)
    assert sum(o.chunk_count for b in pooled for o in b) == 12 * 3


def test_a_pool_that_fails_to_start_raises_where_it_is_used() -> None:
    with WorkerPool(0) as pool:
        pool.start()  # the failure happens in the starting thread ...
        with pytest.raises(ValueError, match="max_workers"):
            list(pool.map([[]], SETTINGS))  # ... and is raised here, in the caller's


def test_closing_a_started_but_unused_pool_stops_its_workers() -> None:
    pool = WorkerPool(2)
    pool.start()
    pool.close()
    pool.close()
