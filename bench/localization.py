"""File and function localization on real GitHub issues: ided's own search against BM25.

The data is a directory of SWE-bench-style instances (default: the SWE-bench-Lite development set
beside the checkout, ``../shared/swebench-dev/instances.jsonl``, whose ``materialize.sh`` writes a
checkout of each instance at its ``base_commit`` under ``/tmp/swebench-dev-repos/<instance_id>``).
For each instance, in this process:

* ided: the real index of the checkout (Tree-sitter chunks, BM25, Qdrant Edge; state kept under
  ``--state-root`` so a second run re-reads nothing), then ``WorkspaceIndex.search`` with the whole
  issue text as the query, ``-k 50``: the code path every front uses. With ``--embed`` the dense
  vectors are filled in first (slow: minutes per checkout on two cores) and the search is hybrid.
* bm25-file: BM25 over whole ``.py`` files (path + text; ``k1=1.5, b=0.75``, Lucene IDF; identifiers
  kept whole and split at ``_`` and camelCase), the dev set's own baseline, computed here on the same
  instances (cached per instance under the state root: it does not change).

Scored as the dev set's ``score.py`` does: results reduced to distinct files in order; file R@1/5/10
(fraction of gold files among the first k) and All@5; FnR@10, the gold functions among the first 10
distinct (file, innermost function/class holding the result's first line) pairs. Every ``.py`` file is
a candidate, tests included. Printed per repository and overall, with index time and query latency
p50/p95.

    uv run --frozen python bench/localization.py [--repo sympy] [--limit 20] [--embed] [--json out.json]
        [--rankers formula,learned,auto]   # each search.ranker on the same index: before/after in one run
        [--queries issue,title]            # the issue text whole and its title alone, scored apart
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_INSTANCES = ROOT.parent / "shared" / "swebench-dev" / "instances.jsonl"
DEFAULT_REPOS = Path(os.environ.get("SWEBENCH_DEV_REPOS", "/tmp/swebench-dev-repos"))
DEFAULT_STATE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ided" / "bench-localization"
KS = (1, 5, 10)
FN_K = 10
SEARCH_K = 50


# -- scoring: daemon.retrieval.localization (the dev set's rules) -----------------------------------


@dataclass
class Hit:
    path: str
    start_line: int | None = None


@dataclass
class Scored:
    instance_id: str
    repo: str
    metrics: dict[str, float]
    top_files: list[str]
    top_symbols: list[str] = field(default_factory=list[str])


def score(inst: dict[str, Any], hits: list[Hit], checkout: Path | None) -> Scored:
    from daemon.retrieval.localization import score_hits

    def read(rel: str) -> str | None:
        if checkout is None:
            return None
        try:
            return (checkout / rel).read_bytes().decode("utf-8", "replace")
        except OSError:
            return None

    gold_fn: list[str] = inst.get("gold_functions") or [] if checkout is not None else []
    s = score_hits(inst["instance_id"], inst["gold_files"], gold_fn, [(h.path, h.start_line) for h in hits], read)
    metrics = dict(s.recall)
    metrics["All@5"] = float(all(g in s.top_files[:5] for g in inst["gold_files"]))
    if s.fn_recall is not None:
        metrics[f"FnR@{FN_K}"] = s.fn_recall
    return Scored(inst["instance_id"], inst["repo"], metrics, list(s.top_files), list(s.top_symbols))


# -- the BM25 baseline --------------------------------------------------------------------------

_IDENT = re.compile(r"[A-Za-z0-9_]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
        "we",
        "you",
        "i",
        "me",
        "my",
        "our",
        "not",
        "no",
        "so",
        "do",
        "does",
        "did",
        "can",
        "could",
        "would",
        "should",
        "may",
        "might",
        "been",
        "being",
        "am",
    ]
)
_SKIP_DIRS = {".git", "node_modules", "__pycache__", ".tox", ".venv", "venv", "build", "dist"}


def bm25_tokens(text: str) -> list[str]:
    out: list[str] = []
    for ident in _IDENT.findall(text):
        parts = [p.lower() for piece in ident.split("_") if piece for p in _CAMEL.findall(piece)]
        whole = ident.strip("_").lower()
        terms = parts if (len(parts) == 1 and parts[0] == whole) else [*parts, whole]
        out.extend(t for t in terms if len(t) >= 2 and not t.isdigit() and t not in _STOP)
    return out


def bm25_file_ranking(checkout: Path, query: str) -> list[str]:
    """Files ranked by BM25 over path + text (the dev set's bm25-file)."""
    paths: list[str] = []
    docs: list[Counter[str]] = []
    for dirpath, dirnames, filenames in os.walk(checkout):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS)
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            full = Path(dirpath) / name
            if full.is_symlink():
                continue
            rel = full.relative_to(checkout).as_posix()
            try:
                text = full.read_bytes()[:2_000_000].decode("utf-8", "replace")
            except OSError:
                continue
            paths.append(rel)
            docs.append(Counter(bm25_tokens(rel + "\n" + text)))
    n = len(docs)
    avgdl = sum(d.total() for d in docs) / max(n, 1)
    df: Counter[str] = Counter()
    for d in docs:
        df.update(d.keys())
    k1, b = 1.5, 0.75
    q = bm25_tokens(query)
    scores: list[float] = []
    for d in docs:
        dl = d.total()
        s = 0.0
        for t in q:
            tf = d.get(t)
            if tf:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
        scores.append(s)
    order = sorted(range(n), key=lambda i: -scores[i])
    return [paths[i] for i in order[:SEARCH_K]]


# -- ided ---------------------------------------------------------------------------------------


@dataclass
class IdedRun:
    hits: list[Hit]
    index_seconds: float
    query_seconds: float
    matches: str


def run_ided(
    checkout: Path,
    queries: list[str],
    state: Path,
    *,
    embed: bool,
    lexical: bool,
    ranker: str = "formula",
    model: Path | None = None,
) -> list[IdedRun]:
    """Each of ``queries`` searched on one open index of ``checkout`` (indexed first; a second run
    re-reads nothing) with ``search.ranker = ranker``."""
    from daemon.config import load_config
    from daemon.core.models import SearchMode
    from daemon.index.workspace_index import WorkspaceIndex

    search: dict[str, Any] = {"ranker": ranker} | ({"ranker_model": str(model.resolve())} if model else {})
    overrides: dict[str, Any] = {"state_dir": str(state), "search": search}
    if not embed:
        overrides["embedding"] = {"enabled": False}
    config = load_config(checkout, overrides=overrides)
    started = time.perf_counter()
    runs: list[IdedRun] = []
    with WorkspaceIndex.open(config) as ws:
        ws.index()
        if embed:
            ws.embed()
        index_seconds = time.perf_counter() - started
        mode = SearchMode.LEXICAL if lexical or not embed else SearchMode.HYBRID
        for query in queries:
            ws.search(query, k=SEARCH_K, mode=mode)  # warm (model load, caches)
            started = time.perf_counter()
            result = ws.search(query, k=SEARCH_K, mode=mode)
            query_seconds = time.perf_counter() - started
            hits = [Hit(h.chunk.path, h.chunk.start_line) for h in result.hits]
            runs.append(IdedRun(hits, index_seconds, query_seconds, getattr(result, "matches", "n/a")))
    return runs


def title_of(problem_statement: str) -> str:
    """An issue's title: its first non-empty line (what an agent asks as a short question)."""
    return next((ln.strip() for ln in problem_statement.splitlines() if ln.strip()), "")


def cached_bm25_files(state_root: Path, iid: str, kind: str, checkout: Path, query: str) -> list[str]:
    """bm25-file's ranking of ``query`` (cached under the state root: it does not change)."""
    suffix = "" if kind == "issue" else f"-{kind}"
    cache = state_root / "bm25-file" / f"{iid}{suffix}.json"
    if cache.is_file():
        return list(json.loads(cache.read_text()))
    ranked = bm25_file_ranking(checkout, query)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(ranked))
    return ranked


# -- driver -------------------------------------------------------------------------------------


def load_instances(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in args.instances.read_text().splitlines() if line.strip()]
    if args.repo:
        rows = [r for r in rows if args.repo in r["repo"]]
    if args.ids:
        wanted = set(args.ids.split(","))
        rows = [r for r in rows if r["instance_id"] in wanted]
    if args.every > 1 or args.offset:
        rows = rows[args.offset :: args.every]
    if args.limit:
        per: Counter[str] = Counter()
        kept: list[dict[str, Any]] = []
        for r in rows:
            if per[r["repo"]] < args.limit:
                per[r["repo"]] += 1
                kept.append(r)
        rows = kept
    return rows


def aggregate(rows: list[Scored]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for key in (*(f"R@{k}" for k in KS), "All@5"):
        out[key] = sum(r.metrics[key] for r in rows) / len(rows) if rows else None
    fn = [r.metrics[f"FnR@{FN_K}"] for r in rows if f"FnR@{FN_K}" in r.metrics]
    out[f"FnR@{FN_K}"] = sum(fn) / len(fn) if fn else None
    return out


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(by_retriever: dict[str, list[Scored]], timings: dict[str, list[float]]) -> str:
    lines: list[str] = []
    repos = sorted({r.repo for rows in by_retriever.values() for r in rows})
    header = f"{'retriever':<27} {'repo':<28} {'n':>4} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'All@5':>6} {'FnR@10':>7}"
    lines.append(header)
    for name, rows in by_retriever.items():
        for repo in [*repos, "ALL"]:
            sub = rows if repo == "ALL" else [r for r in rows if r.repo == repo]
            if not sub:
                continue
            a = aggregate(sub)
            fn = "n/a" if a["FnR@10"] is None or name.startswith("bm25-file") else f"{a['FnR@10']:.3f}"
            lines.append(
                f"{name:<27} {repo:<28} {len(sub):>4} {a['R@1']:>6.3f} {a['R@5']:>6.3f} {a['R@10']:>6.3f}"
                f" {a['All@5']:>6.3f} {fn:>7}"
            )
    for name, values in timings.items():
        if values:
            lines.append(
                f"{name}: p50 {statistics.median(values) * 1000:.1f} ms, p95 {_pct(values, 0.95) * 1000:.1f} ms,"
                f" max {max(values) * 1000:.1f} ms (n={len(values)})"
            )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, list[dict[str, Any]]]:
    """The arguments, checked, and the instances they choose."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--instances", type=Path, default=DEFAULT_INSTANCES, help="instances.jsonl (SWE-bench fields)")
    p.add_argument("--repos-dir", type=Path, default=DEFAULT_REPOS, help="checkouts, one folder per instance_id")
    p.add_argument("--state-root", type=Path, default=DEFAULT_STATE, help="where the indexes are kept between runs")
    p.add_argument("--repo", help="only repositories whose name contains this")
    p.add_argument("--ids", help="only these instance ids (comma-separated)")
    p.add_argument("--limit", type=int, default=0, help="at most N instances per repository")
    p.add_argument("--every", type=int, default=1, help="every Nth instance (a spread subset)")
    p.add_argument("--offset", type=int, default=0, help="with --every: start at this instance (another subset)")
    p.add_argument("--embed", action="store_true", help="fill the dense vectors first; search hybrid")
    p.add_argument("--lexical", action="store_true", help="with --embed: search lexical anyway")
    p.add_argument(
        "--rankers",
        default="formula",
        help="comma-separated search.ranker values, each measured on the same index (formula, learned, auto)",
    )
    p.add_argument(
        "--queries",
        default="issue",
        help="comma-separated kinds of query asked of each instance: issue (the issue text whole), "
        "title (its first line alone, a short question); each is scored apart",
    )
    p.add_argument("--ranker-model", type=Path, help="with --rankers learned: this model file, not the bundled one")
    p.add_argument("--no-baseline", action="store_true", help="skip bm25-file")
    p.add_argument("--json", type=Path, help="write per-instance results here")
    args = p.parse_args(argv)
    if not args.instances.is_file():
        p.error(f"no instances file at {args.instances} (--instances)")
    instances = load_instances(args)
    if not instances:
        p.error("no instance matches the filters")
    args.rankers = [r for r in args.rankers.split(",") if r]
    args.queries = [k for k in args.queries.split(",") if k]
    if not args.rankers or any(r not in ("formula", "learned", "auto") for r in args.rankers):
        p.error(f"--rankers: formula, learned or auto (got {','.join(args.rankers)!r})")
    if not args.queries or any(k not in ("issue", "title") for k in args.queries):
        p.error(f"--queries: issue or title (got {','.join(args.queries)!r})")
    return args, instances


def main(argv: list[str] | None = None) -> int:
    args, instances = parse_args(argv)
    base = "ided-hybrid" if args.embed and not args.lexical else "ided-lexical"
    rankers: list[str] = args.rankers
    kinds: list[str] = args.queries

    def label(ranker: str, kind: str) -> str:
        name = base if ranker == "formula" else f"{base}-{ranker}"
        return name if kind == "issue" else f"{name} {kind}"

    baselines = [] if args.no_baseline else ["bm25-file" if k == "issue" else f"bm25-file {k}" for k in kinds]
    results: dict[str, list[Scored]] = {}
    for kind in kinds:
        results |= {label(r, kind): [] for r in rankers}
        if not args.no_baseline:
            results["bm25-file" if kind == "issue" else f"bm25-file {kind}"] = []
    timings: dict[str, list[float]] = {"ided index": []} | {f"{label(r, k)} query": [] for k in kinds for r in rankers}
    matches: Counter[str] = Counter()
    per_instance: list[dict[str, Any]] = []
    for i, inst in enumerate(instances, 1):
        iid = inst["instance_id"]
        checkout = args.repos_dir / iid
        if not checkout.is_dir():
            print(f"[{i}/{len(instances)}] {iid}: no checkout at {checkout} (run materialize.sh)", file=sys.stderr)
            continue
        queries = {"issue": inst["problem_statement"], "title": title_of(inst["problem_statement"])}
        row: dict[str, Any] = {"instance_id": iid}
        gold_rank: int | None = None
        for ranker in rankers:
            runs = run_ided(
                checkout,
                [queries[k] for k in kinds],
                args.state_root / iid,
                embed=args.embed,
                lexical=args.lexical,
                ranker=ranker,
                model=args.ranker_model,
            )
            if ranker == rankers[0]:
                timings["ided index"].append(runs[0].index_seconds)
            for kind, run in zip(kinds, runs, strict=True):
                name = label(ranker, kind)
                timings[f"{name} query"].append(run.query_seconds)
                matches[run.matches] += 1
                mine = score(inst, run.hits, checkout)
                results[name].append(mine)
                row[name] = mine.metrics
                row[f"{name} top_files"] = mine.top_files
                row[f"{name} top_symbols"] = mine.top_symbols
                if ranker == rankers[0] and kind == kinds[0]:
                    gold_rank = next((k + 1 for k, f in enumerate(mine.top_files) if f in inst["gold_files"]), None)
        for kind, name in zip(kinds, baselines, strict=False):
            ranked = cached_bm25_files(args.state_root, iid, kind, checkout, queries[kind])
            bm = score(inst, [Hit(f) for f in ranked], None)
            results[name].append(bm)
            row[name] = bm.metrics
        per_instance.append(row)
        print(
            f"[{i}/{len(instances)}] {iid}: gold file at {gold_rank or '>10'} ({rankers[0]}, {kinds[0]}), "
            f"index {timings['ided index'][-1]:.1f} s",
            file=sys.stderr,
        )
    print(report(results, timings))
    print(f"matches: {dict(matches)}")
    if args.json:
        args.json.write_text(json.dumps(per_instance, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
