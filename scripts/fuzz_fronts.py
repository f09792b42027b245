"""Fuzz ided's stdio fronts (MCP, LSP, ACP) with hostile and mutated JSON-RPC frames; print per front
frames sent, survived, unanswered, deaths (and garbled output), and the failing cases.

The engine is ``tests/adversarial/fuzz_support.py`` (CI runs it small in
``tests/adversarial/test_fuzz_<front>.py``). Usage:
``uv run --frozen python scripts/fuzz_fronts.py [--fronts mcp,lsp,acp] [--mutations 2000] [--seed 1]``
(``just fuzz`` runs it with the defaults). Exits 1 when any front had a death, an unanswered
request, a missed liveness answer or garbled output.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.adversarial.fuzz_support import FRONTS, FuzzReport, fuzz_front


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fronts", default="mcp,lsp,acp", help="comma-separated: mcp, lsp, acp")
    parser.add_argument("--mutations", type=int, default=2000, help="mutated frames per front (after the hand cases)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    reports: list[FuzzReport] = []
    with tempfile.TemporaryDirectory(prefix="ided-fuzz-") as tmp:
        for name in args.fronts.split(","):
            started = time.monotonic()
            report = await fuzz_front(
                FRONTS[name.strip()], Path(tmp) / name, seed=args.seed, mutations_count=args.mutations
            )
            reports.append(report)
            print(f"{report.line()} ({time.monotonic() - started:.1f} s, seed {args.seed})", flush=True)
            for failure in report.failures[:20]:
                print(f"  {failure}", flush=True)
            slow = ", ".join(f"{label} {seconds:.2f} s" for seconds, label in report.slowest)
            print(f"  slowest cases: {slow}", flush=True)
    bad = any(r.failures or r.deaths or r.unanswered or r.garbled or r.survived != r.sent for r in reports)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
