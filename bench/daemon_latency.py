"""Daemon benchmark on a real project (default: a copy of an installed package, qdrant_client).

Prints: the daemon's start and first index pass, attach time of a second client (p50/p95), save ->
searchable latency over N edits (p50/p95/max: from writing the file until a lexical search for a
token only that edit introduced returns it), and the daemon's RSS when idle and under load (the
edits while a second client searches without pause).

    uv run --frozen python bench/daemon_latency.py                  # 100 edits, lexical (no embedding)
    uv run --frozen python bench/daemon_latency.py --edits 300 --source /path/to/project
    uv run --frozen python bench/daemon_latency.py --mid-embedding 60 --source /path/to/requests

(``-P``: this file is named daemon.py; without it, its folder would shadow the ``daemon`` package.)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import shutil
import statistics
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from daemon.config import Config, load_config
from daemon.core.models import SearchMode
from daemon.service.wire.api import DaemonStatus, Methods, SearchParams
from daemon.service.wire.client import DaemonClient


def rss_mib(pid: int) -> tuple[float, float]:
    """(current RSS, peak RSS) of a process in MiB, from /proc."""
    fields: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in {"VmRSS", "VmHWM"}:
            fields[key] = int(value.split()[0]) / 1024
    return fields.get("VmRSS", 0.0), fields.get("VmHWM", 0.0)


def embed_workers(pid: int) -> list[int]:
    """The daemon's embedding worker processes (children running ``daemon.index.embed_worker``)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            with contextlib.suppress(OSError):
                if b"daemon.index.embed_worker" in Path(f"/proc/{child}/cmdline").read_bytes():
                    found.append(int(child))
    return found


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def wait_idle(client: DaemonClient, timeout_s: float = 1800) -> DaemonStatus:
    async def poll() -> DaemonStatus:
        while True:
            status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
            if status.busy is None and status.index.last_update is not None:
                return status
            await asyncio.sleep(0.1)

    return await asyncio.wait_for(poll(), timeout_s)


async def search_load(config: Config, stop: asyncio.Event, counter: list[int]) -> None:
    """A second client searching without pause until ``stop`` is set."""
    client = await DaemonClient.attach(config, client="other", start=False)
    queries = ["search points filter", "collection config", "retry http request", "payload index", "vector"]
    try:
        while not stop.is_set():
            await client.call(Methods.INDEX_SEARCH, SearchParams(query=random.choice(queries), k=10))
            counter[0] += 1
    finally:
        await client.close()


async def run(args: argparse.Namespace) -> None:
    source: Path = args.source
    workdir = Path(tempfile.mkdtemp(prefix="ided-bench-daemon-"))
    workspace = workdir / "project"
    # the package goes one level down, as in a real project: at the top, its modules (http/, ...) would
    # shadow the standard library of a daemon started with the workspace as its working directory
    shutil.copytree(source, workspace / source.name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    files = sorted(p for p in workspace.rglob("*.py") if p.stat().st_size > 0)
    overrides: dict[str, Any] = {
        "state_dir": str(workdir / "state"),
        "embedding": {"enabled": args.embed},
        "daemon": {"idle_shutdown_seconds": 0},
    }
    config = load_config(workspace, overrides=overrides)
    changed: dict[str, float] = {}
    seen = asyncio.Event()

    async def on_note(method: str, params: dict[str, Any]) -> None:
        if method == Methods.INDEX_CHANGED:
            now = time.perf_counter()
            for path in params.get("paths", []):
                changed.setdefault(path, now)
            seen.set()

    print(f"project: copy of {source} ({len(files)} Python files) in {workspace}")
    print(f"daemon: debounce {config.daemon.debounce_ms} ms, embedding {'on' if args.embed else 'off'}")
    t0 = time.perf_counter()
    client = await DaemonClient.attach(
        config, client="other", subscribe=True, on_notification=on_note, overrides=overrides
    )
    started = time.perf_counter() - t0
    pid = client.daemon_pid
    try:
        status = await wait_idle(client)
        indexed = time.perf_counter() - t0
        print(f"start (spawn + listen): {started:.2f} s; first pass done after {indexed:.1f} s: "
              f"{status.index.files_indexed} files, {status.index.chunks} chunks")  # fmt: skip

        attach_s: list[float] = []
        for _ in range(args.attaches):
            a0 = time.perf_counter()
            other = await DaemonClient.attach(config, client="other", start=False)
            attach_s.append(time.perf_counter() - a0)
            await other.close()
        print(f"attach of a second client (socket + hello), {len(attach_s)} runs: "
              f"p50 {1000 * statistics.median(attach_s):.1f} ms, p95 {1000 * pct(attach_s, 0.95):.1f} ms")  # fmt: skip

        idle_rss, _ = rss_mib(pid)
        print(f"daemon RSS idle: {idle_rss:.0f} MiB")

        stop = asyncio.Event()
        searches = [0]
        load = asyncio.create_task(search_load(config, stop, searches))
        rng = random.Random(5)
        latencies: list[float] = []
        peak_under_load = idle_rss
        l0 = time.perf_counter()
        for i in range(args.edits):
            path = rng.choice(files)
            rel = path.relative_to(workspace).as_posix()
            token = f"ided_bench_saved_token_{i}"
            changed.pop(rel, None)
            w0 = time.perf_counter()
            with path.open("a", encoding="utf-8") as fh:
                fh.write(f"\n\ndef {token}():\n    return {i}\n")
            while True:
                result = await client.call(
                    Methods.INDEX_SEARCH, SearchParams(query=token, k=3, mode=SearchMode.LEXICAL)
                )
                hits = result["hits"]
                if hits and hits[0]["chunk"]["name"] == token:
                    break
                seen.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(seen.wait(), 0.05)
            latencies.append(time.perf_counter() - w0)
            peak_under_load = max(peak_under_load, rss_mib(pid)[0])
        load_s = time.perf_counter() - l0
        stop.set()
        await load
        p50, p95, worst = (1000 * statistics.median(latencies), 1000 * pct(latencies, 0.95), 1000 * max(latencies))
        print(f"save -> searchable (lexical), {len(latencies)} edits: "
              f"p50 {p50:.0f} ms, p95 {p95:.0f} ms, max {worst:.0f} ms")  # fmt: skip
        _, peak = rss_mib(pid)
        rate = searches[0] / load_s
        print(f"daemon RSS under load ({searches[0]} concurrent searches, {rate:.0f}/s, during the edits): "
              f"max sampled {peak_under_load:.0f} MiB, peak (VmHWM) {peak:.0f} MiB")  # fmt: skip
    finally:
        await client.call(Methods.SHUTDOWN, None)
        await client.close()
        shutil.rmtree(workdir, ignore_errors=True)


async def memory_until_embedded(client: DaemonClient) -> None:
    """Sample the daemon's RSS and its embedding worker's until every chunk has a vector; then the
    daemon's RSS after the fill and after a hybrid search (its query session loaded)."""
    pid = client.daemon_pid
    daemon_max, worker_max, worker_peak, workers = 0.0, 0.0, 0.0, set[int]()
    e0 = time.perf_counter()
    while True:
        status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
        daemon_max = max(daemon_max, rss_mib(pid)[0])
        for worker in embed_workers(pid):
            workers.add(worker)
            with contextlib.suppress(OSError):
                rss, hwm = rss_mib(worker)
                worker_max, worker_peak = max(worker_max, rss), max(worker_peak, hwm)
        if status.index.embedded_fraction >= 1.0 and status.busy is None:
            break
        await asyncio.sleep(0.2)
    filled_s = time.perf_counter() - e0
    x0 = time.perf_counter()
    for worker in embed_workers(pid):  # the worker leaves once no chunk lacks a vector
        with contextlib.suppress(ProcessLookupError, TimeoutError):
            fd = os.pidfd_open(worker)
            exited = asyncio.Event()
            asyncio.get_running_loop().add_reader(fd, exited.set)
            try:
                await asyncio.wait_for(exited.wait(), 30)
            finally:
                asyncio.get_running_loop().remove_reader(fd)
                os.close(fd)
    exit_s = time.perf_counter() - x0
    after, peak = rss_mib(pid)
    await client.call(Methods.INDEX_SEARCH, SearchParams(query="retry http request", k=10))
    searched, peak = rss_mib(pid)
    print(f"vectors complete {filled_s:.0f} s later; daemon RSS during the fill: max sampled {daemon_max:.0f} MiB; "
          f"after the fill {after:.0f} MiB; after a hybrid search {searched:.0f} MiB; peak (VmHWM) {peak:.0f} MiB; "
          f"embedding worker(s) {len(workers)}, max sampled RSS {worker_max:.0f} MiB, "
          f"peak (VmHWM, last sampled) {worker_peak:.0f} MiB, "
          f"still running {exit_s:.1f} s after the fill: {len(embed_workers(pid))}")  # fmt: skip


async def mid_embedding(args: argparse.Namespace) -> None:
    """Search latency and stability while the first dense pass fills in (embedding on)."""
    source: Path = args.source
    workdir = Path(tempfile.mkdtemp(prefix="ided-bench-midembed-"))
    workspace = workdir / "project"
    shutil.copytree(source, workspace / source.name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    overrides: dict[str, Any] = {
        "state_dir": str(workdir / "state"),
        "embedding": {"enabled": True},
        "daemon": {"idle_shutdown_seconds": 0},
    }
    config = load_config(workspace, overrides=overrides)
    client = await DaemonClient.attach(config, client="other", overrides=overrides)
    queries = ["combine the per-request setting with the session default setting", "retry http request", "cookie jar"]
    latencies: list[float] = []
    answers: dict[str, set[tuple[str, ...]]] = {q: set() for q in queries}
    fractions: list[float] = []
    try:
        while True:  # the lexical pass first
            status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
            if status.index.last_update is not None:
                break
            await asyncio.sleep(0.1)
        print(f"project: copy of {source}, {status.index.chunks} chunks; searching while vectors fill")
        while len(latencies) < args.searches:
            status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
            if status.index.embedded_fraction >= 1.0:
                break
            fractions.append(status.index.embedded_fraction)
            query = queries[len(latencies) % len(queries)]
            s0 = time.perf_counter()
            result = await client.call(Methods.INDEX_SEARCH, SearchParams(query=query, k=10))
            latencies.append(time.perf_counter() - s0)
            answers[query].add(tuple(h["id"] for h in result["hits"]))
        if not latencies:
            print("the vectors were complete before the first search: use a larger --source")
            return
        distinct = ", ".join(f"{len(v)}" for v in answers.values())
        print(f"search while embedding ({len(latencies)} calls, vectors {100 * min(fractions):.0f}-"
              f"{100 * max(fractions):.0f}% complete): p50 {1000 * statistics.median(latencies):.1f} ms, "
              f"p95 {1000 * pct(latencies, 0.95):.1f} ms, max {1000 * max(latencies):.1f} ms; "
              f"distinct answers per query: {distinct}")  # fmt: skip
        if args.until_embedded:
            await memory_until_embedded(client)
    finally:
        await client.call(Methods.SHUTDOWN, None)
        await client.close()
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    default = Path(sysconfig.get_paths()["purelib"]) / "qdrant_client"
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, default=default, help="project to copy (default: %(default)s)")
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--attaches", type=int, default=30)
    parser.add_argument("--embed", action="store_true", help="keep dense embedding on (the default here is off)")
    parser.add_argument(
        "--mid-embedding",
        type=int,
        default=0,
        metavar="N",
        dest="searches",
        help="instead: N searches while the first dense pass fills in (latency, distinct answers per query)",
    )
    parser.add_argument(
        "--until-embedded",
        action="store_true",
        help="with --mid-embedding: then sample the daemon's RSS and its embedding worker's until the fill ends",
    )
    args = parser.parse_args()
    asyncio.run(mid_embedding(args) if args.searches else run(args))


if __name__ == "__main__":
    main()
