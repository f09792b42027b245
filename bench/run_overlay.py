"""Benchmark: what a run's overlay (its changed files over the workspace index) costs per search.

Clones a repository (default: this checkout, its committed HEAD) into a temp folder, changes
``--changed`` of its Python files there (a function appended to each, uncommitted, as an agent's
edits are before the stage's commit), then times ``RunTreeOverlay`` (``daemon.retrieval.run_overlay``):

- ``build``: the first refresh, which asks git what changed and chunks and encodes every changed file;
- ``refresh``: a refresh when nothing moved (the git calls and a stat per changed file): what every
  search inside a run pays before it searches;
- ``search``: the overlay's own lexical search (refresh included) for a query;
- ``edit``: a refresh after one changed file was written again.

Run::

    uv run --frozen python bench/run_overlay.py [--repo .] [--changed 10 50 200] [--repeat 20]

Wall-clock milliseconds, median and p95 over ``--repeat`` samples (build: over ``--repeat`` fresh overlays).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from daemon.core.models import SearchFilters
from daemon.retrieval.run_overlay import RunTreeOverlay

__all__ = ["main"]

_ADDED = '\n\ndef overlay_bench_marker_{i}(value):\n    """Added by the overlay benchmark."""\n    return value * {i}\n'


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered) * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms"


def _bench(clone: Path, changed: int, repeat: int) -> None:
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=clone, check=True)
    files = sorted(p for p in clone.rglob("*.py") if ".git" not in p.parts)[:changed]
    for i, path in enumerate(files):
        with path.open("a", encoding="utf-8") as fh:
            fh.write(_ADDED.format(i=i))
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, check=True, capture_output=True, text=True)
    start = head.stdout.strip()
    builds: list[float] = []
    chunks = 0
    for _ in range(repeat):
        overlay = RunTreeOverlay(clone, start)
        t = time.perf_counter()
        report = overlay.refresh()
        builds.append(time.perf_counter() - t)
        assert report is not None
        chunks = report.chunks
        overlay.close()
    overlay = RunTreeOverlay(clone, start)
    overlay.refresh()
    refreshes: list[float] = []
    searches: list[float] = []
    edits: list[float] = []
    for n in range(repeat):
        t = time.perf_counter()
        overlay.refresh()
        refreshes.append(time.perf_counter() - t)
        t = time.perf_counter()
        overlay.search(f"overlay bench marker {n}", k=10, filters=SearchFilters())
        searches.append(time.perf_counter() - t)
        with files[n % len(files)].open("a", encoding="utf-8") as fh:
            fh.write(f"\n# edit {n}\n")
        t = time.perf_counter()
        overlay.refresh()
        edits.append(time.perf_counter() - t)
    overlay.close()
    print(f"{len(files):4d} changed files, {chunks:5d} overlay chunks")
    print(f"  build   {_ms(builds)}")
    print(f"  refresh {_ms(refreshes)}   (nothing moved)")
    print(f"  search  {_ms(searches)}   (refresh + lexical search of the overlay)")
    print(f"  edit    {_ms(edits)}   (one file written again)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--changed", type=int, nargs="+", default=[10, 50, 200])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ided-overlay-bench-") as tmp:
        clone = Path(tmp) / "repo"
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(args.repo), str(clone)], check=True)
        for changed in args.changed:
            _bench(clone, changed, args.repeat)


if __name__ == "__main__":
    main()
