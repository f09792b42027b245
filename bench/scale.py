"""How ided's daemon grows with the repository: a small workspace, requests, a 10,000-file tree, in one run.

For each workload (copied into a temporary folder one level down, fresh state, embedding off, no
daemon running) a daemon is started through ``DaemonClient`` and the script records

- **index**: attach -> the first lexical pass done (``daemon/status``: ``last_update`` set, not busy),
  files and chunks indexed, and the daemon's RSS then;
- **language server**: the first ``find_definition`` of the workload's symbol -> an answer from the
  language server (``answered_by``), the language server's RSS (its process tree) and the daemon's;
- **warm**: p50/p95 of ``--calls`` lexical searches (``--query``), definitions by name and references
  by name, each asked once untimed first.

Dense embedding is not run (10,000 files take hours on two cores): the figures are the lexical index
and the language-server part. Workloads: ``small`` (tests/fixtures/workspaces/intel_python),
``requests`` (``--requests DIR``: psf/requests' sdist unpacked) and ``tree`` (the first ``--tree-files``
.py files of this venv's site-packages, sorted by path, copied with their folders).

Usage: ``python -P bench/scale.py --requests /tmp/req/requests-2.32.3 [--tree-files 10000] [--calls 30]``
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import statistics
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon.config import load_config
from daemon.core.jsonrpc import RpcError
from daemon.core.models import SearchMode
from daemon.service.intel.capabilities import DEFINITION, REFERENCES
from daemon.service.wire.api import DaemonStatus, Methods, SearchParams
from daemon.service.wire.client import DaemonClient

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / ".tools"
SEARCH_PATH = [str(TOOLS / "lsp-venv" / "bin"), str(TOOLS / "node" / "node_modules" / ".bin")]


@dataclass
class Workload:
    name: str
    source: Path | None
    symbol: str
    query: str
    files: list[Path] | None = None  # copy only these (relative to source)


def rss_mib(pid: int) -> float:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def descendants(pid: int) -> list[int]:
    found: list[int] = []
    stack = [pid]
    while stack:
        current = stack.pop()
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{current}/task").iterdir():
                for child in (task / "children").read_text().split():
                    found.append(int(child))
                    stack.append(int(child))
    return found


def server_rss(daemon_pid: int) -> float:
    """RSS of the language servers the daemon started (node or python processes running a language server)."""
    total = 0.0
    for pid in descendants(daemon_pid):
        with contextlib.suppress(OSError):
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"pyright" in cmdline or b"langserver" in cmdline or b"language-server" in cmdline:
                total += rss_mib(pid)
    return total


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def copy_workload(wl: Workload, dest: Path) -> Path:
    workspace = dest / "project"
    assert wl.source is not None
    if wl.files is None:
        shutil.copytree(wl.source, workspace / wl.source.name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    else:
        for rel in wl.files:
            target = workspace / "site" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(wl.source / rel, target)
    return workspace


async def timed(client: DaemonClient, method: str, params: Any, calls: int, errors: list[str]) -> list[float]:
    """``calls`` timed answers after one untimed; a failed call (a slow server) is said in ``errors``, not timed."""
    try:
        await client.call(method, params)
    except RpcError as exc:
        errors.append(f"{method} (first call): {str(exc)[:90]}")
    samples: list[float] = []
    for _ in range(calls):
        started = time.perf_counter()
        try:
            await client.call(method, params)
        except RpcError as exc:
            errors.append(f"{method}: {str(exc)[:90]}")
            continue
        samples.append(time.perf_counter() - started)
    return samples or [float("nan")]


async def measure(wl: Workload, calls: int) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix=f"ided-bench-scale-{wl.name}-"))
    try:
        workspace = copy_workload(wl, workdir)
        overrides: dict[str, Any] = {
            "state_dir": str(workdir / "state"),
            "embedding": {"enabled": False},
            "daemon": {"idle_shutdown_seconds": 0},
            "intel": {"search_path": SEARCH_PATH},
        }
        config = load_config(workspace, overrides=overrides)
        started = time.perf_counter()
        client = await DaemonClient.attach(config, client="other", overrides=overrides)
        out: dict[str, Any] = {"workload": wl.name}
        try:
            while True:
                status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
                if status.busy is None and status.index.last_update is not None:
                    break
                await asyncio.sleep(0.1)
            out["index_s"] = time.perf_counter() - started
            out["files"] = status.index.files_indexed
            out["chunks"] = status.index.chunks
            out["daemon_after_index_mib"] = rss_mib(client.daemon_pid)
            asked = time.perf_counter()
            errors: list[str] = []
            out["server_errors"] = errors
            while True:
                try:
                    answer = await client.call(DEFINITION.daemon_method, {"symbol": wl.symbol})
                except RpcError as exc:  # not ready, slow: said, and asked again
                    errors.append(f"{time.perf_counter() - asked:.0f} s: {str(exc)[:90]}")
                    continue
                if answer.get("answered_by") == "language_server" and answer["definitions"]:
                    break
                await asyncio.sleep(0.2)
            out["server_ready_s"] = time.perf_counter() - asked
            out["definition"] = answer["definitions"][0]["location"]["path"]
            out["server_mib"] = server_rss(client.daemon_pid)
            out["daemon_after_server_mib"] = rss_mib(client.daemon_pid)
            search = SearchParams(query=wl.query, k=10, mode=SearchMode.LEXICAL)
            out["search"] = await timed(client, Methods.INDEX_SEARCH, search, calls, errors)
            out["definition_by_name"] = await timed(
                client, DEFINITION.daemon_method, {"symbol": wl.symbol}, calls, errors
            )
            out["references_by_name"] = await timed(
                client, REFERENCES.daemon_method, {"symbol": wl.symbol}, calls, errors
            )
            out["daemon_after_warm_mib"] = rss_mib(client.daemon_pid)
        finally:
            await client.call(Methods.SHUTDOWN, None)
            await client.close()
        return out
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def tree_files(limit: int) -> tuple[Path, list[Path]]:
    site = Path(sysconfig.get_paths()["purelib"])
    files = sorted(
        p.relative_to(site)
        for p in site.rglob("*.py")
        if "__pycache__" not in p.parts and p.is_file() and not p.is_symlink() and p.stat().st_size < 1_000_000
    )
    return site, files[:limit]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=Path, required=True, help="requests' sdist, unpacked")
    parser.add_argument("--tree-files", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--only", default="small,requests,tree")
    args = parser.parse_args()
    site, files = tree_files(args.tree_files)
    workloads = {
        "small": Workload("small", ROOT / "tests/fixtures/workspaces/intel_python", "Point.distance_to", "centroid"),
        "requests": Workload("requests", args.requests.resolve(), "Session.request", "rebuild_proxies"),
        "tree": Workload("tree", site, "SessionRedirectMixin.rebuild_proxies", "parse url query string", files),
    }
    results: list[dict[str, Any]] = []
    for name in args.only.split(","):
        results.append(asyncio.run(measure(workloads[name], args.calls)))
        print({k: v for k, v in results[-1].items() if not isinstance(v, list)}, flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}; embedding not run; {args.calls} warm calls each")
    header = (
        f"{'workload':9s} {'files':>6s} {'chunks':>7s} {'index s':>8s} {'daemon MiB':>10s} {'LS ready s':>10s} "
        f"{'LS MiB':>7s} {'daemon+LS':>9s} {'search p50':>10s} {'def p50':>8s} {'refs p50':>8s} {'daemon warm':>11s}"
    )
    print(header)
    for r in results:
        print(
            f"{r['workload']:9s} {r['files']:6d} {r['chunks']:7d} {r['index_s']:8.1f} "
            f"{r['daemon_after_index_mib']:10.0f} {r['server_ready_s']:10.1f} {r['server_mib']:7.0f} "
            f"{r['daemon_after_server_mib']:9.0f} {pct(r['search'], 0.5):8.1f}ms "
            f"{pct(r['definition_by_name'], 0.5):6.1f}ms "
            f"{pct(r['references_by_name'], 0.5):6.1f}ms {r['daemon_after_warm_mib']:9.0f}"
        )
    for r in results:
        p95 = {k: pct(r[k], 0.95) for k in ("search", "definition_by_name", "references_by_name")}
        print(
            f"{r['workload']}: p95 {p95}; definition in {r['definition']}; "
            f"search median {statistics.median(r['search']) * 1000:.1f} ms"
        )
        for error in r["server_errors"]:
            print(f"  {r['workload']}: {error}")


if __name__ == "__main__":
    main()
