"""The first answer of ``./dev demo`` from a fresh state, and how long the dense vectors then take.

For each checkout of ided (``--checkout LABEL=DIR``, its sources first on ``PYTHONPATH``, this
environment; default this one), in turn over ``--rounds``: a copy of the workspace (``--source``;
default this repository's committed files, ``git archive HEAD``), a fresh state directory and a
fresh cache (so the embedding model is derived again, as on a new machine), then the ``ided``
commands of that checkout's own ``dev demo`` (read from its ``dev`` script, run as
``python -m daemon ...``; the set-up step is not timed). Printed per checkout: seconds to the end of
each command, to the search's answer, and, with ``--until-filled``, to every chunk having its dense
vector (polling ``ided status --json``; a demo that embeds before it answers has them at its answer).

    python bench/first_answer.py [--checkout before=DIR --checkout after=.] [--until-filled] [--rounds 1]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_QUERY = "skip files that hold secrets or credentials"
FILL_DEADLINE_S = 3600.0


def demo_commands(checkout: Path, query: str) -> list[list[str]]:
    """The ``ided`` commands of ``checkout``'s ``dev demo``, in order, ``$query`` filled in."""
    text = (checkout / "dev").read_text()
    body = re.search(r"^\s*demo\)\n(.*?)^\s*;;", text, re.MULTILINE | re.DOTALL)
    if body is None:
        raise SystemExit(f"{checkout}/dev has no demo) case")
    commands: list[list[str]] = []
    for line in body.group(1).splitlines():
        stripped = line.strip()
        if stripped.startswith("ided "):
            words = shlex.split(stripped.replace('"$query"', shlex.quote(query)))
            commands.append(words[1:])
    return commands


def _env(checkout: Path, state: Path, cache: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(checkout),
        "HF_HUB_OFFLINE": "1",
        "IDED_STATE_DIR": str(state),
        "XDG_CACHE_HOME": str(cache),
    }


def _embedded_fraction(workspace: Path, env: dict[str, str]) -> float | None:
    """``ided status --json``'s embedded fraction (the daemon's status nests it under ``index``)."""
    done = subprocess.run(
        [sys.executable, "-P", "-m", "daemon", "status", "--json"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or not done.stdout.strip():
        return None
    status = json.loads(done.stdout)
    index = status.get("index", status)
    fraction = index.get("embedded_fraction")
    return float(fraction) if isinstance(fraction, int | float) else None


def one_run(checkout: Path, source: Path, query: str, until_filled: bool) -> dict[str, float]:
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="ided-first-") as tmp:
        workspace = Path(tmp) / "ws"
        shutil.copytree(source, workspace, symlinks=True)
        env = _env(checkout, Path(tmp) / "state", Path(tmp) / "cache")
        started = time.perf_counter()
        try:
            for command in demo_commands(checkout, query):
                done = subprocess.run(
                    [sys.executable, "-P", "-m", "daemon", *command],
                    cwd=workspace,
                    env=env,
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if done.returncode != 0:
                    raise SystemExit(f"{checkout}: {' '.join(command)} failed:\n{done.stderr[-2000:]}")
                out[command[0]] = time.perf_counter() - started
                if command[0] == "search":
                    out["answer"] = out["search"]
                    hits = [line for line in done.stdout.splitlines() if re.match(r"^\s*\d+\. ", line)]
                    print(f"    first hit: {hits[0].strip() if hits else '(none)'}", flush=True)
            if until_filled:
                deadline = time.perf_counter() + FILL_DEADLINE_S
                while time.perf_counter() < deadline:
                    fraction = _embedded_fraction(workspace, env)
                    if fraction is not None and fraction >= 1.0:
                        out["filled"] = time.perf_counter() - started
                        break
                    time.sleep(2.0)
        finally:
            subprocess.run(
                [sys.executable, "-P", "-m", "daemon", "stop"],
                cwd=workspace,
                env=env,
                capture_output=True,
                check=False,
            )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkout", action="append", default=[], metavar="LABEL=DIR")
    parser.add_argument("--source", type=Path, help="the workspace to demo on (default: git archive HEAD of this repo)")
    parser.add_argument("--query", default=DEFAULT_QUERY)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--until-filled", action="store_true", help="also wait for every dense vector")
    args = parser.parse_args()
    checkouts = [(label, Path(d).resolve()) for label, _, d in (c.partition("=") for c in args.checkout)]
    checkouts = checkouts or [("this", ROOT)]
    with tempfile.TemporaryDirectory(prefix="ided-first-src-") as tmp:
        source: Path | None = args.source
        if source is None:
            source = Path(tmp) / "src"
            source.mkdir()
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD"], capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", str(source)], input=archive.stdout, check=True)
        results: dict[str, list[dict[str, float]]] = {label: [] for label, _ in checkouts}
        for rnd in range(args.rounds):
            for label, checkout in checkouts:
                print(f"round {rnd + 1} {label}: {[' '.join(c) for c in demo_commands(checkout, args.query)]}")
                got = one_run(checkout, source, args.query, args.until_filled)
                print("    " + ", ".join(f"{k} {v:.1f} s" for k, v in got.items()), flush=True)
                results[label].append(got)
        print()
        for label, runs in results.items():
            keys = list(dict.fromkeys(k for r in runs for k in r))
            cells = [f"{k} {statistics.median(r[k] for r in runs if k in r):.1f} s" for k in keys]
            print(f"{label}: " + ", ".join(cells) + f" (median of {len(runs)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
