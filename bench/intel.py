"""Code-intel benchmark: ``ided mcp`` over stdio, driven by the MCP SDK client, on a real project.

Default project: a copy of an installed package (``rich`` from the venv: ~80 modules, 2.3 MB).
Prints, per Python language server (basedpyright, jedi-language-server where installed):

* cold start: process spawn -> the first *correct* find_definition answer (a "not ready" answer
  is retried at once), for ``python -m mcp_servers.code_intel`` and for ``ided mcp``
  (``python -m daemon mcp``: the CLI validates the config, then execs the server);
* warm latency p50/p95 of each tool over ``--repeat`` calls, arguments rotated over several
  symbols and use sites, as the client sees it (JSON-RPC over stdio included).

    uv run --frozen python bench/intel.py [--package rich] [--repeat 30] [--servers basedpyright,jedi-language-server]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import sysconfig
import tempfile
import time
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO, cast

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
SEARCH_PATH = [str(ROOT / ".tools" / "lsp-venv" / "bin"), str(ROOT / ".tools" / "node" / "node_modules" / ".bin")]
SERVER_COMMANDS = {"basedpyright": "basedpyright-langserver", "jedi-language-server": "jedi-language-server"}
SYMBOLS = {
    "rich": ["Console.print", "Text.append", "Table.add_row", "Style.parse", "Segment.split_lines"],
}
CALL_TIMEOUT = 120.0


def _env(state: Path, server: str) -> dict[str, str]:
    return {
        "IDED_STATE_DIR": str(state),
        "IDED_EMBEDDING__ENABLED": "false",
        "IDED_INTEL__SEARCH_PATH": json.dumps(SEARCH_PATH),
        "IDED_INTEL__SERVERS": json.dumps({"python": {"command": SERVER_COMMANDS[server]}}),
        "XDG_CONFIG_HOME": str(state / "config"),
        "HF_HUB_OFFLINE": "1",
    }


@asynccontextmanager
async def session(workspace: Path, state: Path, server: str, module: str) -> AsyncGenerator[Client]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-P", "-m", module, "mcp", "--standalone", "-w", str(workspace)]
        if module == "daemon"
        else ["-P", "-m", module, "-w", str(workspace)],
        env=_env(state, server),
        cwd=str(workspace),
    )
    with _devnull() as devnull:
        async with Client(stdio_client(params, errlog=devnull), read_timeout_seconds=CALL_TIMEOUT) as client:
            yield client


def _devnull() -> TextIO:
    return open(os.devnull, "w")


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any] | str]:
    result = await asyncio.wait_for(client.call_tool(tool, arguments), CALL_TIMEOUT)
    if result.is_error:
        return False, "".join(getattr(b, "text", "") for b in result.content)
    return True, result.structured_content or {}


async def cold_start(workspace: Path, state: Path, server: str, module: str, symbol: str, expected: str) -> float:
    """Seconds from spawn to the first correct definition of ``symbol`` (retrying 'not ready')."""
    started = time.perf_counter()
    async with session(workspace, state, server, module) as client:
        while True:
            ok, answer = await call(client, "find_definition", {"symbol": symbol})
            if ok:
                assert isinstance(answer, dict)
                paths = [d["location"]["path"] for d in answer["definitions"]]
                if expected in paths:
                    return time.perf_counter() - started
                raise SystemExit(f"wrong definition for {symbol}: {paths}")
            if "not ready" not in str(answer):
                raise SystemExit(f"find_definition failed: {answer}")
            if time.perf_counter() - started > CALL_TIMEOUT:
                raise SystemExit("no correct answer within the timeout")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def warm(workspace: Path, state: Path, server: str, symbols: list[str], repeat: int) -> dict[str, list[float]]:
    timings: dict[str, list[float]] = {}
    async with session(workspace, state, server, "mcp_servers.code_intel") as client:
        # Warm up and collect use sites (position queries) from the references of each symbol.
        uses: list[dict[str, Any]] = []
        files: list[str] = []
        for symbol in symbols:
            arguments = {"symbol": symbol, "max_results": 20}
            ok, answer = await call(client, "get_references", arguments)
            for _ in range(60):  # "not ready" answers wait up to intel.ready_wait_seconds each
                if ok:
                    break
                ok, answer = await call(client, "get_references", arguments)
            assert ok and isinstance(answer, dict), answer
            references = cast("list[dict[str, Any]]", answer["references"])
            for ref in references:
                if not ref["is_declaration"]:
                    loc: dict[str, Any] = ref["location"]
                    uses.append(
                        {
                            "file": loc["path"],
                            "line": loc["range"]["start_line"],
                            "column": loc["range"]["start_column"],
                        }
                    )
                    files.append(loc["path"])
        files = sorted(set(files))
        cases: dict[str, Callable[[int], dict[str, Any]]] = {
            "find_definition (position)": lambda i: uses[i % len(uses)],
            "find_definition (name)": lambda i: {"symbol": symbols[i % len(symbols)]},
            "get_signature (name)": lambda i: {"symbol": symbols[i % len(symbols)]},
            "get_signature (position)": lambda i: uses[i % len(uses)],
            "get_references (name)": lambda i: {"symbol": symbols[i % len(symbols)]},
            "get_ast_node": lambda i: uses[i % len(uses)],
            "document_symbols": lambda i: {"file": files[i % len(files)]},
            "workspace_symbols": lambda i: {"query": symbols[i % len(symbols)].split(".")[-1]},
            "call_hierarchy (incoming)": lambda i: {"symbol": symbols[i % len(symbols)]},
            "diagnostics": lambda i: {"file": files[i % len(files)]},
            "search_code": lambda i: {"query": f"how does {symbols[i % len(symbols)]} work", "k": 5},
            "index_status": lambda i: {},
        }
        for label, make in cases.items():
            tool = label.split(" ")[0]
            ok, answer = await call(client, tool, make(0))  # first call may open files: not timed
            if not ok:
                print(f"  {label}: {answer}", file=sys.stderr)
                continue
            samples: list[float] = []
            for i in range(repeat):
                t = time.perf_counter()
                ok, answer = await call(client, tool, make(i))
                samples.append(time.perf_counter() - t)
                if not ok:
                    print(f"  {label} #{i}: {answer}", file=sys.stderr)
            timings[label] = samples
    return timings


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package", default="rich", help="installed package to copy as the project")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--servers", default="basedpyright,jedi-language-server")
    args = parser.parse_args()
    source = Path(sysconfig.get_paths()["purelib"]) / args.package
    symbols = SYMBOLS.get(args.package)
    if not source.is_dir() or not symbols:
        raise SystemExit(f"need an installed package with symbols listed in SYMBOLS: {sorted(SYMBOLS)}")
    tmp = Path(tempfile.mkdtemp(prefix="ided-bench-intel-"))
    try:
        workspace = tmp / args.package
        shutil.copytree(source, workspace, ignore=shutil.ignore_patterns("__pycache__"))
        files = sum(1 for _ in workspace.rglob("*.py"))
        size = sum(p.stat().st_size for p in workspace.rglob("*.py")) / 1e6
        print(f"project: {args.package} ({files} Python files, {size:.1f} MB), repeat={args.repeat}")
        first = symbols[0]
        expected = f"{first.split('.')[0].lower()}.py"
        for server in args.servers.split(","):
            if not shutil.which(SERVER_COMMANDS[server], path=os.pathsep.join(SEARCH_PATH)):
                print(f"\n{server}: not installed, skipped")
                continue
            print(f"\n== {server}")
            for module, label in (
                ("mcp_servers.code_intel", "python -m mcp_servers.code_intel"),
                ("daemon", "ided mcp"),
            ):
                state = tmp / f"state-{server}-{module}"
                cold = [await cold_start(workspace, state, server, module, first, expected) for _ in range(3)]
                print(
                    f"cold start to first correct definition ({label}): median {statistics.median(cold):.2f} s "
                    f"(runs: {', '.join(f'{c:.2f}' for c in cold)})"
                )
            timings = await warm(workspace, tmp / f"state-{server}-warm", server, symbols, args.repeat)
            print(f"{'tool':<30} {'p50 ms':>8} {'p95 ms':>8}")
            for label, samples in timings.items():
                print(f"{label:<30} {_pct(samples, 0.5) * 1000:8.1f} {_pct(samples, 0.95) * 1000:8.1f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
