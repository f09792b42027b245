"""Query latency on a large checkout, by kind of query and by the path a query takes.

A checkout (``--source``, e.g. a django checkout of the SWE-bench-Lite dev set) is indexed once
(lexically; with ``--embed`` its dense vectors are filled too), then three kinds of query are asked:

* **issue**: the text of an issue of the same repository (``--instances``, default the dev set's
  ``instances.jsonl``, ``--repo django``), whole, as an agent pastes it;
* **question**: a documented function's docstring, first sentence;
* **identifier**: a function's bare name.

Each kind is timed along three paths, in a child process per checkout of ided (``--checkout
LABEL=DIR``, its sources first on ``PYTHONPATH``; default this one), checkouts interleaved over
``--rounds``:

* ``in-process``: ``WorkspaceIndex.search`` (what a one-shot ``ided search`` runs after opening the
  index);
* ``daemon``: the daemon's ``index/search`` over its socket (what ``ided search``, LSP and MCP fronts
  wait for once a daemon serves the workspace), the answer's JSON included;
* ``mcp``: an ``ided mcp`` tool call ``search_code`` (k=10), attached to the daemon, through the MCP
  SDK's stdio client: what an agent waits for.

Printed: p50 / p95 ms of wall time per checkout, path and kind, with the mean CPU time a query cost
the process that searched (this one in-process, the daemon's) in brackets, the load average (on a
shared machine wall times swell with it; CPU times much less), and the answer's characters for the
MCP path. The first query of each path is a warm-up and not timed.

    python bench/query_latency.py --source /tmp/django [--queries 30] [--rounds 2] [--embed]
        [--checkout before=DIR --checkout after=.]

A checkout from the dev set's django mirror: ``git --git-dir=MIRROR archive COMMIT | tar -x -C DIR``.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from query_types import _TEST_RE, _first_sentence, _walk  # bench/ is this script's folder

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_INSTANCES = ROOT.parent / "shared" / "swebench-dev" / "instances.jsonl"
KINDS = ("issue", "question", "identifier")
PATHS = ("in-process", "daemon", "mcp")
K = 10


def make_queries(source: Path, instances: Path, repo: str, n: int, seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    issues = [
        json.loads(line)["problem_statement"]
        for line in instances.read_text().splitlines()
        if line.strip() and repo in json.loads(line)["repo"]
    ]
    rng.shuffle(issues)
    questions: list[str] = []
    names: dict[str, int] = {}
    for path in _walk(source):
        rel = path.relative_to(source).as_posix()
        if path.suffix != ".py" or _TEST_RE.search(rel):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not node.name.startswith("__"):
                names[node.name] = names.get(node.name, 0) + 1
                doc = ast.get_docstring(node)
                sentence = _first_sentence(doc) if doc else None
                if sentence:
                    questions.append(sentence)
    rng.shuffle(questions)
    identifiers = sorted(name for name, count in names.items() if count == 1 and len(name) >= 5)
    rng.shuffle(identifiers)
    return {"issue": issues[:n], "question": questions[:n], "identifier": identifiers[:n]}


def _env(state: Path, embed: bool, checkout: Path | None) -> dict[str, str]:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "IDED_STATE_DIR": str(state),
        "IDED_EMBEDDING__ENABLED": "true" if embed else "false",
        "IDED_DAEMON__IDLE_SHUTDOWN_SECONDS": "0",
        "IDED_INTEL__PRESTART": "false",
    }
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)
    return env


def index_once(root: Path, state: Path, embed: bool) -> None:
    from daemon.config import load_config
    from daemon.index.workspace_index import WorkspaceIndex

    overrides: dict[str, Any] = {"state_dir": str(state), "embedding": {"enabled": embed}}
    started = time.perf_counter()
    with WorkspaceIndex.open(load_config(root, overrides=overrides)) as ws:
        report = ws.index()
        if embed:
            ws.embed()
        status = ws.status()
    print(
        f"index: {report.files_indexed} files indexed, {status.chunks} chunks, "
        f"{status.embedded_fraction:.0%} embedded, {time.perf_counter() - started:.1f} s",
        flush=True,
    )


# -- the child: one checkout, every path ------------------------------------------------------------------


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _timed_in_process(root: Path, queries: dict[str, list[str]]) -> tuple[dict[str, list[float]], dict[str, float]]:
    from daemon.config import load_config
    from daemon.index.workspace_index import WorkspaceIndex

    out: dict[str, list[float]] = {}
    cpu: dict[str, float] = {}
    with WorkspaceIndex.open(load_config(root)) as ws:
        ws.search(queries["question"][0], k=K)
        for kind, texts in queries.items():
            out[kind] = []
            before = time.process_time()
            for text in texts:
                started = time.perf_counter()
                ws.search(text, k=K)
                out[kind].append(time.perf_counter() - started)
            cpu[kind] = (time.process_time() - before) / len(texts)
    return out, cpu


async def _timed_daemon(
    root: Path, queries: dict[str, list[str]]
) -> tuple[dict[str, list[float]], dict[str, float], Any]:
    from daemon.config import load_config
    from daemon.service.wire.api import DaemonStatus, Methods, SearchParams
    from daemon.service.wire.client import DaemonClient

    config = load_config(root)
    client = await DaemonClient.attach(config, client="other")
    while True:
        status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
        if status.index.last_update is not None and status.busy is None:
            break
        await asyncio.sleep(0.2)
    out: dict[str, list[float]] = {}
    cpu: dict[str, float] = {}
    await client.call(Methods.INDEX_SEARCH, SearchParams(query=queries["question"][0], k=K))
    for kind, texts in queries.items():
        out[kind] = []
        before = _cpu_s(client.daemon_pid)
        for text in texts:
            started = time.perf_counter()
            await client.call(Methods.INDEX_SEARCH, SearchParams(query=text, k=K))
            out[kind].append(time.perf_counter() - started)
        cpu[kind] = (_cpu_s(client.daemon_pid) - before) / len(texts)
    return out, cpu, client


async def _timed_mcp(root: Path, queries: dict[str, list[str]]) -> tuple[dict[str, list[float]], dict[str, int]]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-P", "-m", "daemon", "mcp", "-w", str(root)], env=dict(os.environ), cwd=root
    )
    out: dict[str, list[float]] = {}
    chars: dict[str, int] = {}
    with open(os.devnull, "w") as errlog:  # noqa: ASYNC230
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
            await client.call_tool("search_code", {"query": queries["question"][0], "k": K})
            for kind, texts in queries.items():
                out[kind] = []
                sizes: list[int] = []
                for text in texts:
                    started = time.perf_counter()
                    result = await client.call_tool("search_code", {"query": text, "k": K})
                    out[kind].append(time.perf_counter() - started)
                    if result.is_error:
                        raise RuntimeError(f"search_code failed: {result.content}")
                    sizes.append(sum(len(getattr(b, "text", "")) for b in result.content))
                chars[kind] = round(statistics.median(sizes))
    return out, chars


async def child(root: Path, queries: dict[str, list[str]]) -> dict[str, Any]:
    from daemon.service.wire.api import Methods

    result: dict[str, Any] = {}
    result["in-process"], result["cpu in-process"] = _timed_in_process(root, queries)
    result["daemon"], result["cpu daemon"], client = await _timed_daemon(root, queries)
    try:
        result["mcp"], result["mcp_chars"] = await _timed_mcp(root, queries)
    finally:
        await client.call(Methods.SHUTDOWN, None)
        await client.close()
    return result


# -- the parent ------------------------------------------------------------------------------------------------


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, required=True, help="the checkout to index and search")
    parser.add_argument("--instances", type=Path, default=DEFAULT_INSTANCES)
    parser.add_argument("--repo", default="django", help="issues of repositories whose name contains this")
    parser.add_argument("--queries", type=int, default=30, help="queries of each kind")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--embed", action="store_true", help="fill the dense vectors before searching")
    parser.add_argument("--state", type=Path, help="keep the index here (default: a temporary folder)")
    parser.add_argument("--checkout", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        queries = json.loads(args.child.read_text())
        print(json.dumps(asyncio.run(child(args.source.resolve(), queries))))
        return 0
    root = args.source.resolve()
    checkouts = [(label, Path(d).resolve()) for label, _, d in (c.partition("=") for c in args.checkout)]
    checkouts = checkouts or [("this", ROOT)]
    with tempfile.TemporaryDirectory(prefix="ided-ql-") as tmp:
        state = args.state or Path(tmp) / "state"
        queries = make_queries(root, args.instances, args.repo, args.queries, args.seed)
        print(f"queries: { ({k: len(v) for k, v in queries.items()}) } over {root}", flush=True)
        index_once(root, state, args.embed)
        qfile = Path(tmp) / "queries.json"
        qfile.write_text(json.dumps(queries))
        times: dict[str, dict[str, dict[str, list[float]]]] = {label: {} for label, _ in checkouts}
        cpu: dict[str, dict[str, dict[str, list[float]]]] = {label: {} for label, _ in checkouts}
        chars: dict[str, dict[str, int]] = {}
        loads: list[float] = []
        for rnd in range(args.rounds):
            for label, checkout in checkouts:
                done = subprocess.run(
                    [sys.executable, "-P", __file__, "--source", str(root), "--child", str(qfile)],
                    env=_env(state, args.embed, checkout),
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if done.returncode != 0:
                    print(f"{label}: the child failed:\n{done.stderr[-3000:]}", file=sys.stderr)
                    return 1
                got = json.loads(done.stdout.strip().splitlines()[-1])
                for path in PATHS:
                    for kind in KINDS:
                        times[label].setdefault(path, {}).setdefault(kind, []).extend(got[path][kind])
                        if f"cpu {path}" in got:
                            cpu[label].setdefault(path, {}).setdefault(kind, []).append(got[f"cpu {path}"][kind])
                chars[label] = got["mcp_chars"]
                loads.append(os.getloadavg()[0])
                print(f"round {rnd + 1} {label}: done", flush=True)
        print(f"\nload average during the runs: {min(loads):.1f}-{max(loads):.1f} (2 cores: wall times swell with it)")
        print(f"{'checkout':<10} {'path':<11} " + " ".join(f"{k + ' p50/p95 ms (cpu)':>30}" for k in KINDS))
        for label, _ in checkouts:
            for path in PATHS:
                cells: list[str] = []
                for kind in KINDS:
                    v = times[label][path][kind]
                    spent = cpu[label].get(path, {}).get(kind)
                    cell = f"{1000 * statistics.median(v):.1f} / {1000 * _pct(v, 0.95):.1f}"
                    cells.append(cell + (f" ({1000 * statistics.median(spent):.1f})" if spent else ""))
                print(f"{label:<10} {path:<11} " + " ".join(f"{c:>30}" for c in cells))
            print(f"{label:<10} {'mcp chars':<11} " + " ".join(f"{chars[label][k]:>30,}" for k in KINDS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
