"""Hostile requests against a running daemon: does one pathological file hold everyone else?

A workspace with a legal Python file nested ``--depth`` levels deep (``x = [[[…1…]]]``, 200 KB at
the default 100,000). Fires ``--hostile`` concurrent ``intel/ast_node`` requests at its middle and
one ``intel/document_symbols`` on it, and while they are in flight ``--probes`` ``daemon/status``
calls one after another. Prints each hostile request's latency and answer (``too_complex`` is
expected), the status latencies (p50/max) and whether every status answered before the last
hostile request did.

    uv run --frozen python -P bench/request_budget.py [--depth 100000] [--hostile 4] [--probes 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from daemon.config import load_config
from daemon.service.intel.capabilities import AST_NODE, DOCUMENT_SYMBOLS
from daemon.service.wire.api import Methods
from daemon.service.wire.client import DaemonClient
from daemon.service.wire.rpc import RpcError
from tests.intel_tools import copy_workspace, intel_settings


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--depth", type=int, default=100_000)
    parser.add_argument("--hostile", type=int, default=4)
    parser.add_argument("--probes", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ided-budget-", ignore_cleanup_errors=True) as tmp_name:
        tmp = Path(tmp_name)
        workspace = copy_workspace("intel_python", tmp)
        (workspace / "deep.py").write_text("x = " + "[" * args.depth + "1" + "]" * args.depth + "\n")
        overrides: dict[str, Any] = {
            "state_dir": str(tmp / "state"),
            "embedding": {"enabled": False},
            "daemon": {"idle_shutdown_seconds": 0},
            "intel": intel_settings(),
        }
        config = load_config(workspace, env={"HOME": str(tmp)}, overrides=overrides)
        client = await DaemonClient.attach(config, client="other", overrides=overrides)
        started = time.monotonic()

        async def timed(name: str, method: str, params: dict[str, Any]) -> tuple[str, float, str]:
            begin = time.monotonic()
            try:
                result = await client.call(method, params, wait_s=600)
                answer = f"result ({len(str(result))} chars)"
            except RpcError as exc:
                data = cast(dict[str, Any], exc.data) if isinstance(exc.data, dict) else {}  # pyright: ignore[reportUnknownMemberType]
                answer = f"error {exc.code} {data.get('code', '')}"
            return name, time.monotonic() - begin, answer

        hostile = [
            asyncio.create_task(
                timed(
                    f"ast_node #{i}", AST_NODE.daemon_method, {"file": "deep.py", "line": 1, "column": args.depth // 2}
                )
            )
            for i in range(args.hostile)
        ]
        hostile.append(
            asyncio.create_task(timed("document_symbols", DOCUMENT_SYMBOLS.daemon_method, {"file": "deep.py"}))
        )
        status_times: list[float] = []
        status_done_at: list[float] = []
        for _ in range(args.probes):
            _, seconds, _ = await timed("status", Methods.DAEMON_STATUS, {})
            status_times.append(seconds)
            status_done_at.append(time.monotonic() - started)
        results = await asyncio.gather(*hostile)
        last_hostile = max(seconds for _, seconds, _ in results)
        for name, seconds, answer in results:
            print(f"{name}: {seconds:.2f} s, {answer}")
        print(
            f"daemon/status x{len(status_times)} while they ran: p50 {statistics.median(status_times) * 1000:.0f} ms, "
            f"max {max(status_times) * 1000:.0f} ms; all answered by {max(status_done_at):.2f} s "
            f"(last hostile answer at {last_hostile:.2f} s)"
        )
        await client.call(Methods.SHUTDOWN, None)
        await client.close()


if __name__ == "__main__":
    asyncio.run(main())
