"""Write a localization set (``ided eval --localization``) from SWE-bench-style instances.

Each chosen instance becomes a task (its issue text verbatim, its gold files and functions) over its
own checkout, ``<checkouts>/<instance_id>`` (what the dev set's ``materialize.sh`` writes). The set
then runs with ``ided eval --localization OUT [--checkouts DIR]``; ``--update-baseline`` freezes its
baseline the first time.

    uv run --frozen python bench/localization_set.py --every django=4,sympy=3,scikit-learn=2,matplotlib=2 \\
        --out tests/golden/localization_devset.yaml
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_INSTANCES = ROOT.parent / "shared" / "swebench-dev" / "instances.jsonl"
DEFAULT_CHECKOUTS = "/tmp/swebench-dev-repos"


def _every(spec: str) -> dict[str, int]:
    """``django=4,sympy=3``: every Nth instance of each repository named (by a part of its name)."""
    out: dict[str, int] = {}
    for part in spec.split(","):
        name, _, n = part.partition("=")
        if not name or not n.isdigit() or int(n) < 1:
            raise SystemExit(f"--every: expected NAME=N pairs such as django=4, got {part!r}")
        out[name.strip()] = int(n)
    return out


def choose(instances: list[dict[str, Any]], every: dict[str, int]) -> list[dict[str, Any]]:
    """Every Nth instance of each repository in ``every``, in the file's order, starting with its first."""
    seen: dict[str, int] = {}
    chosen: list[dict[str, Any]] = []
    for inst in instances:
        name = next((k for k in every if k in inst["repo"]), None)
        if name is None:
            continue
        i = seen[name] = seen.get(name, -1) + 1
        if i % every[name] == 0:
            chosen.append(inst)
    return chosen


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--instances", type=Path, default=DEFAULT_INSTANCES, help="instances.jsonl (SWE-bench fields)")
    p.add_argument("--every", required=True, help="every Nth instance per repository, e.g. django=4,sympy=3")
    p.add_argument("--checkouts", default=DEFAULT_CHECKOUTS, help="the set's folder of checkouts")
    p.add_argument("--version", type=int, default=1, help="the set's version (raise it to freeze a new baseline)")
    p.add_argument("--out", type=Path, required=True, help="the set to write (YAML)")
    args = p.parse_args(argv)
    if not args.instances.is_file():
        print(f"no instances at {args.instances} (--instances FILE)", file=sys.stderr)
        return 2
    every = _every(args.every)
    instances = [json.loads(line) for line in args.instances.read_text(encoding="utf-8").splitlines() if line.strip()]
    chosen = choose(instances, every)
    counts = ", ".join(f"{name} {sum(name in i['repo'] for i in chosen)} (every {n})" for name, n in every.items())
    spec = {
        "version": args.version,
        "source": f"SWE-bench Lite (test split) via {args.instances.name} of the SWE-bench-Lite dev set: "
        f"{counts}; issue text verbatim; each task over its own checkout at the instance's base_commit",
        "checkouts": args.checkouts,
        "baseline": args.out.stem + "_baseline.json",
        "tasks": [
            {
                "id": i["instance_id"],
                "gold_files": list(i["gold_files"]),
                "gold_functions": list(i.get("gold_functions") or []),
                "query": i["problem_statement"],
            }
            for i in chosen
        ],
    }
    header = (
        "# A localization set written by bench/localization_set.py: real issues, each over its own checkout\n"
        f"# (`ided eval --localization {args.out.name} --checkouts DIR`; the dev set's materialize.sh writes them).\n"
    )
    args.out.write_text(header + yaml.safe_dump(spec, sort_keys=False, allow_unicode=True, width=120), encoding="utf-8")
    print(f"{len(chosen)} tasks ({counts}) written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
