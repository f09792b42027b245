"""The learned ranker's training rows: each mined query's candidates with their features and labels.

For each snapshot that ``bench/mine_pairs.py`` chose (``snapshots.jsonl``), this script writes the
snapshot's tree (``git archive``) to a checkout, blanks the docstrings its docstring queries ask about
(each replaced by ``...`` and blank lines, so every line keeps its number), indexes it with ided's own
indexer (lexical, Tree-sitter chunks, Qdrant Edge) and, for each of the snapshot's queries, runs the
search's own candidate generation (``HybridSearcher.candidate_features``: the lexical top 400, the
headline's, the best files completed) and writes every candidate's feature row
(:data:`daemon.index.ranking.FEATURES`) with its label: 2 for a chunk of an answer function (same
path and qualified name), 1 for another chunk of an answer file, 0 otherwise.

Training snapshots keep each query's first ``--keep`` candidates in the formula's order and
``--sample`` more drawn from the rest (deterministically); held-out snapshots keep every candidate, so
that rankings measured on them are whole. One ``.npz`` per snapshot under ``--out`` (a second run skips
the snapshots done); checkouts and indexes live under ``--work`` and are deleted after use unless
``--keep-checkouts``.

    nice -n 10 python bench/ranker_data.py --mirrors DIR --pairs ~/.cache/ided/ranker/pairs \\
        --out ~/.cache/ided/ranker/rows [--repos a+b] [--max-snapshots N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def write_checkout(git_dir: Path, commit: str, dest: Path) -> None:
    """The tree of ``commit`` under ``dest``: every file under 2 MB whose blob the git directory holds (a
    snapshot may lack some large binaries), symbolic links and submodules left out."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-l", "-z", commit], capture_output=True, check=True
    ).stdout.decode("utf-8", "replace")
    wanted: list[tuple[str, str]] = []
    for entry in listing.split("\0"):
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if len(parts) != 4 or parts[0] not in ("100644", "100755") or parts[1] != "blob":
            continue
        if parts[3].isdigit() and int(parts[3]) < 2_000_000 and ".." not in path.split("/"):
            wanted.append((parts[2], path))
    proc = subprocess.Popen(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    for sha, path in wanted:
        proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            continue  # "missing": the snapshot lacks it
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    proc.stdin.close()
    proc.wait()


def blank_docstrings(checkout: Path, strip: list[dict[str, Any]]) -> set[tuple[str, int]]:
    """Each docstring of ``strip`` replaced by ``...`` and blank lines (line numbers kept); the
    (path, first line) of those blanked."""
    done: set[tuple[str, int]] = set()
    by_path: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in strip:
        by_path[s["path"]].append(s)
    for path, spans in by_path.items():
        file = checkout / path
        try:
            lines = file.read_text(encoding="utf-8").split("\n")
        except (OSError, UnicodeDecodeError):
            continue
        for s in spans:
            first, last = int(s["first"]), int(s["last"])
            line: str = lines[first - 1]
            head = line.lstrip()
            if not head[:4].lstrip("rRuUbB").startswith(('"', "'")):
                continue  # a docstring on the def line: left alone (its query is dropped)
            indent = line[: len(line) - len(head)]
            lines[first - 1 : last] = [indent + "..."] + [""] * (last - first)
            done.add((path, first))
        file.write_text("\n".join(lines), encoding="utf-8")
    return done


def label(chunk_path: str, qual: str | None, gold_files: set[str], gold_functions: set[str]) -> int:
    if qual and f"{chunk_path}::{qual}" in gold_functions:
        return 2
    return 1 if chunk_path in gold_files else 0


def run_snapshot(
    snap: dict[str, Any], queries: list[dict[str, Any]], args: argparse.Namespace, out_file: Path
) -> dict[str, Any]:
    from daemon.config import load_config
    from daemon.core.models import SearchMode
    from daemon.index.ranking import FEATURES
    from daemon.index.searcher import LEXICAL_CANDIDATES, HybridSearcher
    from daemon.index.workspace_index import WorkspaceIndex

    name = f"{snap['repo']}-{snap['snapshot'][:10]}"
    checkout = args.work / "checkouts" / name
    state = args.work / "state" / name
    started = time.perf_counter()
    write_checkout(args.mirrors / snap["repo"] / "repo", snap["snapshot"], checkout)
    blanked = blank_docstrings(checkout, snap["strip"])
    strip_first = {(s["path"], s["first"]) for s in snap["strip"]}
    config = load_config(checkout, overrides={"state_dir": str(state), "embedding": {"enabled": False}})
    rows: list[np.ndarray[Any, Any]] = []
    meta: list[dict[str, Any]] = []
    stats: Counter[str] = Counter()
    with WorkspaceIndex.open(config) as ws:
        report = ws.index()
        index_s = time.perf_counter() - started
        searcher = HybridSearcher(
            store=ws._store,
            sparse=ws._sparse,
            embedder=None,
            reranker=None,
            prefetch=LEXICAL_CANDIDATES,
            rerank_top_n=0,
        )
        rng = random.Random(snap["snapshot"])
        for q in queries:
            if q["type"] == "docstring":
                path = q["gold_files"][0]
                if not any((p, f) in blanked for p, f in strip_first if p == path):
                    stats["docstring queries dropped (not blanked)"] += 1
                    continue
            candidates, feats = searcher.candidate_features(q["query"], mode=SearchMode.LEXICAL)
            gold_files, gold_fns = set(q["gold_files"]), set(q["gold_functions"])
            labels = [label(c.chunk.path, c.chunk.qualified_name, gold_files, gold_fns) for c in candidates]
            stats["queries"] += 1
            stats["queries with an answer function among the candidates"] += 2 in labels
            stats["queries with an answer file among the candidates"] += any(labels)
            if not any(labels):
                continue
            keep = list(range(len(candidates)))
            if not snap["held_out"] and len(keep) > args.keep:
                rest = keep[args.keep :]
                positives = [i for i in rest if labels[i]]
                sample = rng.sample(rest, min(args.sample, len(rest)))
                keep = sorted(set(keep[: args.keep]) | set(positives) | set(sample))
            qid = len(meta)
            meta.append(
                {
                    "qid": qid,
                    "repo": snap["repo"],
                    "type": q["type"],
                    "held_out": snap["held_out"],
                    "query": q["query"][:300],
                    "gold_files": q["gold_files"],
                    "gold_functions": q["gold_functions"],
                    "candidates": len(candidates),
                    "kept": [
                        [candidates[i].chunk.path, candidates[i].chunk.qualified_name or "", labels[i]] for i in keep
                    ],
                }
            )
            rows.append(np.asarray([feats[i] for i in keep], dtype=np.float32))
    x = np.concatenate(rows) if rows else np.zeros((0, len(FEATURES)), dtype=np.float32)
    qids = np.concatenate([np.full(len(r), i, dtype=np.int32) for i, r in enumerate(rows)]) if rows else np.zeros(0)
    y = np.asarray([k[2] for m in meta for k in m["kept"]], dtype=np.int8)
    np.savez_compressed(out_file, x=x, qid=qids, y=y, features=np.asarray(FEATURES))
    out_file.with_suffix(".json").write_text(json.dumps({"snapshot": snap, "queries": meta, "stats": stats}))
    if not args.keep_checkouts:
        shutil.rmtree(checkout, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)
    return {
        "name": name,
        "files": report.files_indexed,
        "index_s": round(index_s, 1),
        "total_s": round(time.perf_counter() - started, 1),
        "rows": len(y),
        **stats,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mirrors", type=Path, required=True, help="folder of <owner>+<name>/repo bare git directories")
    p.add_argument("--pairs", type=Path, required=True, help="bench/mine_pairs.py's output folder")
    p.add_argument("--out", type=Path, required=True, help="where the rows go (one .npz + .json per snapshot)")
    p.add_argument("--work", type=Path, default=Path("/tmp/ided-ranker"), help="checkouts and indexes (deleted)")
    p.add_argument("--repos", help="only these <owner>+<name> (comma-separated)")
    p.add_argument("--max-snapshots", type=int, default=0, help="at most N snapshots per repository (0: all)")
    p.add_argument("--keep", type=int, default=150, help="training: the formula's first N candidates of a query")
    p.add_argument("--sample", type=int, default=30, help="training: and N more drawn from the rest")
    p.add_argument("--keep-checkouts", action="store_true", help="keep the checkouts and indexes")
    p.add_argument(
        "--order",
        choices=("interleave", "issues"),
        default="interleave",
        help="interleave repositories (a stopped run has a bit of each), or the training snapshots with the "
        "most issue-like queries (title + body, then titles) first, held-out ones last",
    )
    args = p.parse_args(argv)
    snaps = [json.loads(x) for x in (args.pairs / "snapshots.jsonl").read_text().splitlines() if x.strip()]
    pairs = [json.loads(x) for x in (args.pairs / "pairs.jsonl").read_text().splitlines() if x.strip()]
    by_snap: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in pairs:
        by_snap[f"{q['repo']}:{q['snapshot']}"].append(q)
    wanted = set(args.repos.split(",")) if args.repos else None
    per_repo: Counter[str] = Counter()
    todo: list[dict[str, Any]] = []
    for s in snaps:
        if wanted is not None and s["repo"] not in wanted:
            continue
        per_repo[s["repo"]] += 1
        if args.max_snapshots and per_repo[s["repo"]] > args.max_snapshots:
            continue
        todo.append(s)
    # interleave repositories so that a stopped run has a bit of each
    nth: Counter[str] = Counter()
    order: list[int] = []
    for s in todo:
        order.append(nth[s["repo"]])
        nth[s["repo"]] += 1
    todo = [s for _, s in sorted(zip(order, todo, strict=True), key=lambda p: p[0])]
    if args.order == "issues":

        def issue_like(s: dict[str, Any]) -> tuple[bool, int, int]:
            kinds = Counter(q["type"] for q in by_snap.get(f"{s['repo']}:{s['snapshot']}", []))
            return (bool(s["held_out"]), -kinds["issue"], -kinds["title"])

        todo.sort(key=issue_like)
    args.out.mkdir(parents=True, exist_ok=True)
    for i, s in enumerate(todo, 1):
        out_file = args.out / f"{s['repo']}-{s['snapshot'][:10]}.npz"
        if out_file.is_file():
            continue
        queries = by_snap.get(f"{s['repo']}:{s['snapshot']}", [])
        summary = run_snapshot(s, queries, args, out_file)
        print(f"[{i}/{len(todo)}] {json.dumps(summary)}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
