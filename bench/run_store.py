"""Benchmark: the run store on SQLite and on Postgres, with one writer and with several writer processes.

Each writer process opens its own store (as a daemon on another machine would) and writes what a
run writes: a record, decision-log entries, progress events and status updates. Printed per backend
and writer count: store operations per second over all writers, and p50/p95 of one decision-log
append and one record update (milliseconds). Postgres is the server at ``--url``, or a throw-away
cluster started with ``scripts/postgres-test-server.sh`` (Debian's postgresql). Run::

    uv run --frozen python bench/run_store.py [--runs 40] [--writers 1 4] [--url postgresql://...]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import subprocess
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from daemon.config import RunsConfig
from daemon.core.run_models import DecisionKind, ExecutionProgress, ProgressKind, RunRecord, RunStatus, utc_now
from daemon.orchestration.run_store_open import connect_run_store

__all__ = ["main"]

SCRIPT = Path(__file__).parents[1] / "scripts" / "postgres-test-server.sh"
ENTRIES = 8  # decision-log entries and events per run, about what a short workflow writes


def _writer(url: str | None, state_dir: str, writer: int, runs: int) -> tuple[int, list[float], list[float]]:
    async def work() -> tuple[int, list[float], list[float]]:
        config = RunsConfig(database_url=url, workspace_id=f"bench-{writer}")
        store = connect_run_store(config, state_dir=Path(state_dir), workspace=Path(state_dir))
        ops, logs, updates = 0, list[float](), list[float]()
        try:
            for i in range(runs):
                run_id = f"{writer}-{i}-{time.monotonic_ns()}"
                now = utc_now()
                await store.create(
                    RunRecord(run_id=run_id, status=RunStatus.PLANNED, request="bench", created_at=now, updated_at=now)
                )
                for seq in range(1, ENTRIES + 1):
                    started = time.perf_counter()
                    await store.log(run_id, DecisionKind.STAGE_RESULT, f"stage {seq}", {"seq": seq})
                    logs.append(time.perf_counter() - started)
                    await store.save_event(
                        ExecutionProgress(
                            run_id=run_id,
                            seq=seq,
                            timestamp=utc_now(),
                            event=ProgressKind.NODE_FINISHED,
                            workflow="bench",
                            status="succeeded",
                        )
                    )
                for status in (RunStatus.RUNNING, RunStatus.SUCCEEDED):
                    started = time.perf_counter()
                    await store.update(run_id, status=status)
                    updates.append(time.perf_counter() - started)
                ops += 1 + 2 * ENTRIES + 2
        finally:
            store.close()
        return ops, logs, updates

    return asyncio.run(work())


def _measure(label: str, url: str | None, writers: int, runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="ided-bench-runs-") as state_dir:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=writers, mp_context=context) as pool:
            list(pool.map(_writer, [url], [state_dir], [99], [1]))  # warm the workers' imports and the schema
            started = time.perf_counter()
            results = list(pool.map(_writer, [url] * writers, [state_dir] * writers, range(writers), [runs] * writers))
            elapsed = time.perf_counter() - started
    ops = sum(r[0] for r in results)
    logs = sorted(t for r in results for t in r[1])
    updates = sorted(t for r in results for t in r[2])

    def pct(values: list[float], q: float) -> float:
        return values[min(len(values) - 1, int(q * len(values)))] * 1000

    print(
        f"{label:<9} writers={writers:<2} {ops / elapsed:8.0f} ops/s   "
        f"log p50 {statistics.median(logs) * 1000:6.2f} ms p95 {pct(logs, 0.95):6.2f} ms   "
        f"update p50 {statistics.median(updates) * 1000:6.2f} ms p95 {pct(updates, 0.95):6.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=40, help="runs per writer")
    parser.add_argument("--writers", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--url", help="a Postgres to use (default: start a throw-away one)")
    args = parser.parse_args()
    folder = None
    url: str | None = args.url
    if url is None:
        folder = tempfile.mkdtemp(prefix="ided-pg-")
        url = subprocess.run(
            ["bash", str(SCRIPT), "start", folder], capture_output=True, text=True, check=True
        ).stdout.strip()
    print(f"{args.runs} runs per writer, {ENTRIES} log entries + {ENTRIES} events + 2 updates per run")
    try:
        for writers in args.writers:
            _measure("sqlite", None, writers, args.runs)
            _measure("postgres", url, writers, args.runs)
    finally:
        if folder is not None:
            subprocess.run(["bash", str(SCRIPT), "stop", folder], check=False)


if __name__ == "__main__":
    main()
