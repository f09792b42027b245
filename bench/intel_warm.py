"""Warm code-intel calls by name over ``ided mcp``, several checkouts interleaved in one run.

For every round and every checkout given (``--checkout LABEL=DIR``: the same virtual environment runs
each one's sources through ``PYTHONPATH``, as ``bench/front_handshake.py`` does), on the workspace
given (``--workspace``, e.g. requests' sdist unpacked): fresh state, no daemon running, ``ided mcp``
spawned under the MCP SDK's client over stdio, embedding off; the first ``find_definition`` of
``--symbol`` that names ``--expect`` is waited for (the language server loaded), then each tool of
``--tools`` is called once untimed and ``--calls`` times timed, in turn. The daemon is stopped after
each checkout's turn. Prints p50/p95 per tool and checkout over all rounds, and each checkout's p50
against the first one's.

Usage: ``python bench/intel_warm.py --workspace DIR --checkout before=/path --checkout after=. [--rounds 2]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from front_handshake import checkout_env  # this folder's sibling script
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
COLD_DEADLINE_S = 120.0


def _env(checkout: Path, state: Path) -> dict[str, str]:
    """``front_handshake``'s environment for a checkout, with embedding off (warm code intel only)."""
    return checkout_env(checkout, state) | {"IDED_EMBEDDING__ENABLED": "false"}


async def _text(client: Client, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    result = await client.call_tool(tool, arguments)
    text = "".join(getattr(block, "text", "") for block in result.content)
    if not text and result.structured_content:
        text = json.dumps(result.structured_content)
    return text, not result.is_error


async def one_turn(checkout: Path, workspace: Path, args: argparse.Namespace, samples: dict[str, list[float]]) -> None:
    with tempfile.TemporaryDirectory(prefix="ided-intel-warm-", ignore_cleanup_errors=True) as tmp:
        state = Path(tmp)
        env = _env(checkout, state)
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "daemon", "mcp", "--workspace", str(workspace)],
            env=env,
            cwd=str(workspace),
        )
        try:
            with open(state / "stderr.log", "w") as errlog:  # noqa: ASYNC230 (nothing else runs meanwhile)
                async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
                    started = time.perf_counter()
                    while True:
                        text, ok = await _text(client, "find_definition", {"symbol": args.symbol})
                        if ok and args.expect in text and '"language_server"' in text:
                            break
                        if time.perf_counter() - started > COLD_DEADLINE_S:
                            raise RuntimeError(
                                f"no language-server definition within {COLD_DEADLINE_S:.0f} s: {text[:300]}"
                            )
                    for tool in args.tools.split(","):
                        arguments = {"symbol": args.symbol}
                        await _text(client, tool, arguments)
                        for _ in range(args.calls):
                            t = time.perf_counter()
                            _, ok = await _text(client, tool, arguments)
                            samples[tool].append(time.perf_counter() - t)
                            if not ok:
                                raise RuntimeError(f"{tool} failed")
        finally:
            stop = [sys.executable, "-m", "daemon", "stop", "--workspace", str(workspace)]
            await asyncio.to_thread(subprocess.run, stop, env=env, capture_output=True, timeout=60)


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--checkout", action="append", default=[], help="LABEL=DIR (default: this=.)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--symbol", default="Session.request")
    parser.add_argument("--expect", default="sessions.py")
    parser.add_argument("--tools", default="get_references,find_definition")
    args = parser.parse_args()
    checkouts = [(label, Path(path).resolve()) for label, _, path in (c.partition("=") for c in args.checkout)]
    checkouts = checkouts or [("this", ROOT)]
    workspace = args.workspace.resolve()
    results: dict[str, dict[str, list[float]]] = {label: defaultdict(list) for label, _ in checkouts}
    for round_no in range(args.rounds):
        for label, checkout in checkouts:
            asyncio.run(one_turn(checkout, workspace, args, results[label]))
            print(f"round {round_no + 1} {label}: done", file=sys.stderr)
    print(f"load average {os.getloadavg()[0]:.1f}; {args.rounds} round(s) x {args.calls} calls, symbol {args.symbol}")
    first = checkouts[0][0]
    for tool in args.tools.split(","):
        for label, _ in checkouts:
            values = results[label][tool]
            ratio = statistics.median(values) / statistics.median(results[first][tool])
            print(
                f"{tool:20s} {label:10s} p50 {_ms(values, 0.5):7.1f} ms  p95 {_ms(values, 0.95):7.1f} ms  x{ratio:.2f}"
            )


if __name__ == "__main__":
    main()
