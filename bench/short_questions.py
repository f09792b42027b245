"""Short questions, as agents ask them: ided (formula and learned ranking) against plain BM25.

Four kinds of query with judged answers, over real repositories that the learned ranker never saw:

* ``docstring``: the first sentence of a documented function's docstring (4 to 30 words) asks for that
  function, on repositories held out of training (``bench/mine_pairs.py``'s ``HELD_OUT_REPOS``: click,
  httpx, rich, networkx) and on psf/requests (never mined). The checkout copy that is indexed has
  those docstrings blanked (``...`` and blank lines, line numbers kept), so the words asked are not
  in the indexed text; every other docstring stays, as in a real workspace.
* ``identifier``: a function's bare name (unique in its repository) asks for that function.
* ``title``: a SWE-bench-Lite dev-set issue's first line alone (its title) asks for the gold
  functions and files, over the instance's own checkout (``materialize.sh``; indexes shared with
  ``bench/localization.py``'s state root).
* ``example``: the question of issue #36 on psf/requests, "how are redirects followed", whose answer
  is ``SessionRedirectMixin.resolve_redirects``.

Retrievers on the same queries: ``bm25`` (plain BM25, ``k1=1.5, b=0.75``, over the same Tree-sitter
chunks ided indexes, each prefixed with its path and qualified name; the dev set's tokenizer), ided
lexical with the formula and with the learned ranker (one index, the same candidates). Metrics over
distinct (file, symbol) results: MRR@10 of the first answer function and R@5 (the answer functions
among the first 5); for titles also file R@5 against BM25 over whole files.

    python bench/short_questions.py [--per-repo 40] [--dev-ids A,B] [--json out.json] [--embed]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import re
import shutil
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from localization import bm25_file_ranking, bm25_tokens  # noqa: E402  (bench/localization.py)
from mine_pairs import HELD_OUT_REPOS, first_sentence, functions, git, is_test  # noqa: E402
from ranker_data import blank_docstrings, write_checkout  # noqa: E402

DEFAULT_INSTANCES = ROOT.parent / "shared" / "swebench-dev" / "instances.jsonl"
DEFAULT_REPOS = Path(os.environ.get("SWEBENCH_DEV_REPOS", "/tmp/swebench-dev-repos"))
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ided"
EVAL_REPOS = (*HELD_OUT_REPOS, "psf+requests")
EXAMPLES = (("psf+requests", "how are redirects followed", "SessionRedirectMixin.resolve_redirects"),)
K = 10


@dataclass
class Question:
    type: str
    repo: str
    query: str
    gold_functions: list[str]
    gold_files: list[str]
    ranks: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    """Per retriever: distinct ``path::symbol`` results in order (or files, for ``<name>-file``)."""


# -- plain BM25 over chunks -------------------------------------------------------------------------


class Bm25Chunks:
    """BM25 over the checkout's Python chunks (ided's chunker), path + qualified name + text."""

    def __init__(self, checkout: Path) -> None:
        from daemon.intel.chunking import chunk_source

        self.keys: list[str] = []
        docs: list[Counter[str]] = []
        for file in sorted(checkout.rglob("*.py")):
            rel = file.relative_to(checkout).as_posix()
            if any(part.startswith(".") for part in rel.split("/")):
                continue
            try:
                data = file.read_bytes()
            except OSError:
                continue
            if len(data) > 2_000_000:
                continue
            for c in chunk_source(rel, data, "python"):
                self.keys.append(f"{rel}::{c.qualified_name or ''}")
                docs.append(Counter(bm25_tokens(f"{rel}\n{c.qualified_name or ''}\n{c.text}")))
        self.docs = docs
        self.n = len(docs)
        self.avgdl = sum(d.total() for d in docs) / max(self.n, 1)
        self.df: Counter[str] = Counter()
        for d in docs:
            self.df.update(d.keys())
        self.postings: dict[str, list[int]] = defaultdict(list)
        for i, d in enumerate(docs):
            for t in d:
                self.postings[t].append(i)

    def ranked(self, query: str, depth: int = 50) -> list[str]:
        k1, b = 1.5, 0.75
        scores: dict[int, float] = defaultdict(float)
        for t in bm25_tokens(query):
            df = self.df.get(t)
            if not df:
                continue
            idf = math.log(1 + (self.n - df + 0.5) / (df + 0.5))
            for i in self.postings[t]:
                d = self.docs[i]
                tf = d[t]
                scores[i] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * d.total() / self.avgdl))
        order = sorted(scores, key=lambda i: (-scores[i], i))
        return _distinct(self.keys[i] for i in order[: depth * 3])[:depth]


def _distinct(keys: Any) -> list[str]:
    return list(dict.fromkeys(keys))


# -- ided ---------------------------------------------------------------------------------------------


class Ided:
    """One index, searched with the formula and with the learned ranker (and with ``embed``, its vectors
    filled first, each of them hybrid too)."""

    def __init__(self, checkout: Path, state: Path, model: Path | None = None, *, embed: bool = False) -> None:
        from daemon.config import load_config
        from daemon.index.learned_ranker import load_ranker
        from daemon.index.searcher import HybridSearcher
        from daemon.index.workspace_index import WorkspaceIndex

        config = load_config(checkout, overrides={"state_dir": str(state), "embedding": {"enabled": embed}})
        self.ws = WorkspaceIndex.open(config)
        started = time.perf_counter()
        self.ws.index()
        if embed:
            self.ws.embed()
        self.index_s = time.perf_counter() - started
        base: dict[str, Any] = {
            "store": self.ws._store,
            "sparse": self.ws._sparse,
            "embedder": None,
            "reranker": None,
            "prefetch": config.search.prefetch,
            "rerank_top_n": 0,
        }
        self.searchers = {
            "ided-formula": HybridSearcher(**base),
            "ided-learned": HybridSearcher(**base, ranker=load_ranker(model)),
        }
        if embed:
            base["embedder"] = self.ws.dense_embedder()
            self.searchers["ided-formula-hybrid"] = HybridSearcher(**base)
            self.searchers["ided-learned-hybrid"] = HybridSearcher(**base, ranker=load_ranker(model))

    def ranked(self, query: str) -> dict[str, tuple[list[str], list[str]]]:
        from daemon.core.models import SearchMode

        out: dict[str, tuple[list[str], list[str]]] = {}
        for name, searcher in self.searchers.items():
            mode = SearchMode.HYBRID if name.endswith("-hybrid") else SearchMode.LEXICAL
            hits = searcher.search(query, k=50, mode=mode, rerank=False).hits
            out[name] = (
                _distinct(f"{h.chunk.path}::{h.chunk.qualified_name or ''}" for h in hits),
                _distinct(h.chunk.path for h in hits),
            )
        return out

    def close(self) -> None:
        self.ws.close()


# -- the questions ------------------------------------------------------------------------------------


def repo_questions(
    name: str, git_dir: Path, commit: str, per_repo: int, identifiers: int
) -> tuple[list[Question], list[dict[str, Any]]]:
    """Docstring and identifier questions at ``commit`` (deterministic), and the docstrings to blank."""
    rng = random.Random(int(hashlib.sha256(f"short:{name}:{commit}".encode()).hexdigest()[:12], 16))
    paths = sorted(p for p in git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines() if p.endswith(".py"))
    paths = [p for p in paths if not is_test(p) and not p.startswith(("docs/", "doc/", "examples/", "benchmarks/"))]
    funcs: list[tuple[str, Any]] = []
    names: Counter[str] = Counter()
    for path in paths:
        source = git(git_dir, "show", f"{commit}:{path}")
        for f in functions(source):
            funcs.append((path, f))
            names[f.qual.rsplit(".", 1)[-1]] += 1
    rng.shuffle(funcs)
    qs: list[Question] = []
    strip: list[dict[str, Any]] = []
    n_doc = n_ident = 0
    for path, f in funcs:
        bare = f.qual.rsplit(".", 1)[-1]
        if n_doc < per_repo and f.doc and f.docstring and not bare.startswith("__"):
            sentence = first_sentence(f.docstring)
            words = re.findall(r"[A-Za-z]{2,}", sentence)
            if 4 <= len(words) <= 30 and f.doc[0] > f.first:
                qs.append(Question("docstring", name, sentence, [f"{path}::{f.qual}"], [path]))
                strip.append({"path": path, "first": f.doc[0], "last": f.doc[1]})
                n_doc += 1
                continue
        if (
            n_ident < identifiers
            and names[bare] == 1
            and not bare.startswith("__")
            and ("_" in bare.strip("_") or any(c.isupper() for c in bare[1:]))
        ):
            qs.append(Question("identifier", name, bare, [f"{path}::{f.qual}"], [path]))
            n_ident += 1
    for repo, query, qual in EXAMPLES:
        if repo == name:
            hits = [f"{p}::{f.qual}" for p, f in funcs if f.qual == qual]
            if hits:
                qs.append(Question("example", name, query, hits, [h.split("::")[0] for h in hits]))
    return qs, strip


def score(q: Question, name: str) -> dict[str, float]:
    ranked = q.ranks[name]
    gold = set(q.gold_functions)
    first = next((r for r, k in enumerate(ranked[:K], 1) if k in gold), None)
    return {"MRR@10": 1 / first if first else 0.0, "R@5": len(gold & set(ranked[:5])) / len(gold)}


def report(questions: list[Question], retrievers: list[str]) -> str:
    lines = [
        f"{'type':<11}{'n':>5}  " + "  ".join(f"{r:>22}" for r in retrievers),
        " " * 18 + "MRR@10 / R@5 per retriever",
    ]
    for t in [*sorted({q.type for q in questions}), "short", "ALL"]:
        sub = [
            q
            for q in questions
            if t == "ALL" or q.type == t or (t == "short" and q.type in ("docstring", "title", "example"))
        ]
        if not sub:
            continue
        cells: list[str] = []
        for r in retrievers:
            s = [score(q, r) for q in sub if r in q.ranks]
            if not s:
                cells.append(f"{'-':>22}")
                continue
            cells.append(
                f"{sum(x['MRR@10'] for x in s) / len(s):.3f} / {sum(x['R@5'] for x in s) / len(s):.3f}".rjust(22)
            )
        lines.append(f"{t:<11}{len(sub):>5}  " + "  ".join(cells))
    titles = [q for q in questions if q.type == "title"]
    if titles:
        lines.append("titles, file R@5:")
        for r in ("bm25-file", "ided-formula-file", "ided-learned-file"):
            s = [len(set(q.gold_files) & set(q.ranks[r][:5])) / len(q.gold_files) for q in titles if r in q.ranks]
            if s:
                lines.append(f"  {r:<20} {sum(s) / len(s):.3f} (n={len(s)})")
    return "\n".join(lines)


def run_repo(name: str, args: argparse.Namespace) -> list[Question]:
    git_dir = args.mirrors / name / "repo"
    commit = git(git_dir, "rev-parse", args.commit.get(name, "HEAD")).strip()
    questions, strip = repo_questions(name, git_dir, commit, args.per_repo, args.identifiers)
    checkout = args.work / f"{name}-{commit[:10]}"
    digest = hashlib.sha256(json.dumps(strip).encode()).hexdigest()[:8]
    marker = checkout / ".ided-short-questions"
    if not marker.is_file() or marker.read_text() != digest:
        write_checkout(git_dir, commit, checkout)
        blank_docstrings(checkout, strip)
        marker.write_text(digest)
    state = args.state_root / f"{name}-{commit[:10]}{'-embedded' if args.embed else ''}"
    ided = Ided(checkout, state, args.model, embed=args.embed)
    bm25 = Bm25Chunks(checkout)
    try:
        for q in questions:
            q.ranks["bm25"] = bm25.ranked(q.query)
            for r, (fns, _) in ided.ranked(q.query).items():
                q.ranks[r] = fns
    finally:
        ided.close()
    print(f"{name} at {commit[:10]}: {Counter(q.type for q in questions)}, index {ided.index_s:.0f} s", file=sys.stderr)
    return questions


def run_titles(args: argparse.Namespace) -> list[Question]:
    rows = [json.loads(x) for x in args.instances.read_text().splitlines() if x.strip()]
    wanted = set(args.dev_ids.split(",")) if args.dev_ids else None
    out: list[Question] = []
    for inst in rows:
        iid = inst["instance_id"]
        if wanted is not None and iid not in wanted:
            continue
        checkout = args.repos_dir / iid
        if not checkout.is_dir() or not inst.get("gold_functions"):
            continue
        title = next((ln.strip() for ln in inst["problem_statement"].splitlines() if ln.strip()), "")
        if not title:
            continue
        q = Question("title", inst["repo"], title, list(inst["gold_functions"]), list(inst["gold_files"]))
        ided = Ided(checkout, args.dev_state_root / iid, args.model)
        try:
            for r, (fns, files) in ided.ranked(title).items():
                q.ranks[r] = fns
                q.ranks[r + "-file"] = files
        finally:
            ided.close()
        q.ranks["bm25"] = Bm25Chunks(checkout).ranked(title)
        q.ranks["bm25-file"] = bm25_file_ranking(checkout, title)
        out.append(q)
        print(f"title {iid}: {title[:70]!r}", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mirrors", type=Path, default=Path(os.environ.get("IDED_MIRRORS", "mirrors")))
    p.add_argument("--repos", default=",".join(EVAL_REPOS), help="<owner>+<name> repositories (docstring questions)")
    p.add_argument("--commit", action="append", default=[], help="NAME=REV: the commit of a repository (default HEAD)")
    p.add_argument("--per-repo", type=int, default=40, help="docstring questions per repository")
    p.add_argument("--identifiers", type=int, default=10, help="identifier questions per repository")
    p.add_argument("--instances", type=Path, default=DEFAULT_INSTANCES, help="the dev set's instances.jsonl")
    p.add_argument("--repos-dir", type=Path, default=DEFAULT_REPOS, help="the dev set's checkouts")
    p.add_argument("--dev-ids", help="dev-set instances whose titles are asked (default: every checkout there)")
    p.add_argument("--no-titles", action="store_true", help="skip the dev-set titles")
    p.add_argument("--work", type=Path, default=Path("/tmp/ided-short-questions"), help="checkout copies")
    p.add_argument("--state-root", type=Path, default=CACHE / "bench-short-questions", help="their indexes")
    p.add_argument("--dev-state-root", type=Path, default=CACHE / "bench-localization", help="dev-set indexes")
    p.add_argument("--model", type=Path, help="a learned ranker's model file (default: the bundled one)")
    p.add_argument("--json", type=Path, help="write every question and ranking here")
    p.add_argument(
        "--embed",
        action="store_true",
        help="fill each repository's vectors first and ask its questions hybrid too (not the dev-set titles)",
    )
    args = p.parse_args(argv)
    args.commit = dict(c.split("=", 1) for c in args.commit)
    questions: list[Question] = []
    for name in [r for r in args.repos.split(",") if r]:
        if not (args.mirrors / name / "repo").is_dir():
            print(f"{name}: no git directory under {args.mirrors}, skipped", file=sys.stderr)
            continue
        questions.extend(run_repo(name, args))
    if not args.no_titles and args.instances.is_file():
        questions.extend(run_titles(args))
    if not questions:
        p.error("no questions: give --mirrors (and the dev set's checkouts for titles)")
    hybrid = ["ided-formula-hybrid", "ided-learned-hybrid"] if args.embed else []
    print(report(questions, ["bm25", "ided-formula", "ided-learned", *hybrid]))
    if args.json:
        args.json.write_text(json.dumps([q.__dict__ for q in questions], indent=1))
    shutil.rmtree(args.work / "tmp", ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
