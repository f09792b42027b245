"""Mine (query, answer) pairs for the learned ranker from public repositories' git history.

For each repository (a bare git directory, ``<mirrors>/<owner>+<name>/repo``), its first-parent
history from HEAD back is cut into *epochs* of ``--epoch`` commits. Each epoch's oldest commit is a
*snapshot* (the tree that :mod:`bench.ranker_data` indexes once); the commits that follow it in the
epoch give the queries. A commit is kept when:

* it fixes or closes something, or is a pull request's merge: its message says ``fix``/``bug``,
  ``closes #N``/``fixes #N``/``resolves #N``, ends with ``(#N)`` (a squash merge) or is a
  ``Merge pull request #N`` commit (its body is the pull request's title); bumps, releases,
  reverts, typo and pre-commit commits are not;
* it changes (``git diff`` against its first parent) 1 to ``MAX_FILES`` existing non-test ``.py``
  files; the *answer* is those files and the functions, methods and classes whose lines the diff
  removes or changes, or into whose body it inserts lines, located with ``ast`` at the parent (nested
  functions fold into the function that holds them: the dev set's rule), 1 to ``MAX_FUNCTIONS``;
* every answer function is the same text at the snapshot as at the parent, so the snapshot's index
  holds exactly the code the query is about.

Each kept commit gives up to three queries, the realistic mix an index is asked: ``issue`` (the
title and body, cleaned of trailers and pull-request boilerplate, when the body says something),
``title`` (the title alone, a few plain words) and ``test`` (the source of a test function the commit
adds or changes, pasted as a failing test is). Each snapshot adds ``docstring`` queries (the first
sentence of a documented function's docstring; that docstring is blanked in the indexed checkout,
see ``strip`` in the snapshot record) and ``identifier`` queries (a function's bare name).

Deterministic: the same mirrors and arguments give the same files. Nothing mined is committed; the
counts it prints go in docs/search.md.

    python bench/mine_pairs.py --mirrors DIR --out ~/.cache/ided/ranker/pairs [--repos a+b,c+d]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import random
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

TRAIN_REPOS = (
    "pallets+werkzeug",
    "pallets+jinja",
    "python-attrs+attrs",
    "marshmallow-code+marshmallow",
    "PyCQA+isort",
    "psf+black",
    "pygments+pygments",
    "tornadoweb+tornado",
    "scrapy+scrapy",
    "pypa+pip",
    "pydantic+pydantic",
    "dask+dask",
    "aio-libs+aiohttp",
    "ipython+ipython",
    "sqlalchemy+alembic",
    "python-pillow+Pillow",
    "celery+celery",
    "pypa+setuptools",
    "statsmodels+statsmodels",
)
"""Repositories the ranker is trained on."""
HELD_OUT_REPOS = ("pallets+click", "encode+httpx", "Textualize+rich", "networkx+networkx")
"""Mined the same way but never trained on: the ranker's held-out check and the short-question benchmark."""
NEVER = frozenset(
    {"astropy", "django", "flask", "matplotlib", "pylint", "pytest", "requests", "scikit-learn", "seaborn"}
    | {"sphinx", "sympy", "xarray"}
)
"""The SWE-bench repositories: measured on, never mined (requests is an evaluation repository only)."""

MAX_FILES = 4
MAX_FUNCTIONS = 10
MAX_QUERY_CHARS = 4000

_FIX = re.compile(
    r"\bfix(e[sd]|ing)?\b|\bbugs?\b|\b(close[sd]?|resolve[sd]?)\s+(\S+)?#\d+|\(#\d+\)\s*$|^Merge pull request #\d+",
    re.IGNORECASE | re.MULTILINE,
)
_SKIP = re.compile(
    r"^(Revert|Bump|Release|Prepare|Update changelog|\[pre-commit|pre-commit|Merge branch|Merge remote)"
    r"|\btypos?\b|\bchangelog\b|\bversion bump\b|\bdependabot\b",
    re.IGNORECASE,
)
_TRAILER = re.compile(
    r"^\s*(Signed-off-by|Co-authored-by|Co-Authored-By|Reviewed-by|Acked-by|Tested-by|Reported-by|Suggested-by"
    r"|Change-Id|Cherry-picked|See-also|Refs?|Fixes|Closes|Resolves)\s*:.*$",
    re.IGNORECASE | re.MULTILINE,
)
_PR_MERGE = re.compile(r"^Merge pull request #\d+ from \S+\s*$")
_PR_REF = re.compile(r"\s*\((?:gh-|GH-)?#\d+\)\s*$")
_BOILER = re.compile(
    r"^\s*(- \[[ xX]\].*|\* \[[ xX]\].*|<!--.*?-->|#+ *(Checklist|Description|Summary|Changes)\s*:?\s*"
    r"|\* (?:commit|Merge) .*|Closes #\d+\.?|Fixes #\d+\.?|Resolves #\d+\.?)$",
    re.IGNORECASE | re.MULTILINE,
)
_TEST_PATH = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$|_tests?\.py$|(^|/)conftest\.py$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def git(git_dir: Path, *args: str) -> str:
    out = subprocess.run(["git", "--git-dir", str(git_dir), *args], capture_output=True, check=False)
    return out.stdout.decode("utf-8", "replace")


def is_test(path: str) -> bool:
    return _TEST_PATH.search(path) is not None


# -- functions at a commit ------------------------------------------------------------------------


@dataclass(frozen=True)
class Func:
    qual: str
    first: int
    last: int
    body_first: int
    doc: tuple[int, int] | None
    """The docstring's lines (first, last), 1-based, when it has one."""
    docstring: str | None


def functions(source: str) -> list[Func]:
    """Top-level and class-level functions and classes with their line spans (decorators included);
    nested functions fold into the function that holds them (not listed)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    out: list[Func] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                last = node.end_lineno or node.lineno
                doc_node = node.body[0] if node.body else None
                doc: tuple[int, int] | None = None
                text: str | None = None
                if (
                    isinstance(doc_node, ast.Expr)
                    and isinstance(doc_node.value, ast.Constant)
                    and isinstance(doc_node.value.value, str)
                ):
                    doc = (doc_node.lineno, doc_node.end_lineno or doc_node.lineno)
                    text = doc_node.value.value
                out.append(Func(prefix + node.name, first, last, node.body[0].lineno, doc, text))
                if isinstance(node, ast.ClassDef):
                    visit(node.body, prefix + node.name + ".")

    visit(tree.body, "")
    return out


def changed_old_lines(diff: str) -> tuple[set[int], set[int]]:
    """From a ``-U0`` diff: old-side lines removed or changed, and old-side lines after which lines were inserted."""
    changed: set[int] = set()
    inserted_after: set[int] = set()
    for m in _HUNK.finditer(diff):
        start, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
        if count == 0:
            inserted_after.add(start)
        else:
            changed.update(range(start, start + count))
    return changed, inserted_after


def touched(funcs: list[Func], changed: set[int], inserted_after: set[int]) -> list[Func]:
    """The innermost functions/classes whose lines are changed, or into whose body lines are inserted."""
    hit: dict[str, Func] = {}
    for line in changed:
        inner = [f for f in funcs if f.first <= line <= f.last]
        if inner:
            best = max(inner, key=lambda f: f.first)
            hit[best.qual] = best
    for line in inserted_after:
        inner = [f for f in funcs if f.first <= line and line + 1 <= f.last]
        if inner:
            best = max(inner, key=lambda f: f.first)
            hit[best.qual] = best
    return sorted(hit.values(), key=lambda f: f.first)


def segment(source: str, f: Func) -> str:
    return "\n".join(source.splitlines()[f.first - 1 : f.last])


# -- queries ----------------------------------------------------------------------------------------


def clean_message(subject: str, body: str) -> tuple[str, str]:
    """The title and body of a commit as a query: a PR merge's title is its body's first line;
    trailers, checklists and squash lists dropped."""
    if _PR_MERGE.match(subject):
        lines = [ln for ln in body.splitlines() if ln.strip()]
        if not lines:
            return "", ""
        subject, body = lines[0], "\n".join(lines[1:])
    title = _PR_REF.sub("", subject).strip()
    body = _TRAILER.sub("", body)
    body = _BOILER.sub("", body)
    body = re.sub(r"\n{3,}", "\n\n", body).strip()
    return title, body


def first_sentence(doc: str) -> str:
    text = " ".join(ln.strip() for ln in doc.strip().split("\n\n")[0].splitlines())
    m = re.match(r"(.+?[.!?])(\s|$)", text)
    return (m.group(1) if m else text).strip()


# -- one repository ---------------------------------------------------------------------------------


@dataclass
class RepoMiner:
    name: str
    git_dir: Path
    epoch: int
    epochs: int
    per_epoch: int
    docstrings: int
    identifiers: int
    held_out: bool
    counts: Counter[str] = field(default_factory=Counter[str])
    _files: dict[tuple[str, str], str | None] = field(default_factory=dict[tuple[str, str], "str | None"])

    def show(self, commit: str, path: str) -> str | None:
        key = (commit, path)
        if key not in self._files:
            out = subprocess.run(
                ["git", "--git-dir", str(self.git_dir), "show", f"{commit}:{path}"], capture_output=True, check=False
            )
            self._files[key] = out.stdout.decode("utf-8", "replace") if out.returncode == 0 else None
            if len(self._files) > 4000:
                self._files.clear()
        return self._files[key]

    def mine(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        fp = git(self.git_dir, "rev-list", "--first-parent", f"--max-count={self.epoch * self.epochs + 1}", "HEAD")
        chain = fp.split()
        pairs: list[dict[str, Any]] = []
        snapshots: list[dict[str, Any]] = []
        for e in range(1, self.epochs + 1):
            if e * self.epoch >= len(chain):
                break
            snap = chain[e * self.epoch]
            window = chain[(e - 1) * self.epoch : e * self.epoch]  # newer than the snapshot
            kept = self._commit_pairs(snap, window)
            strip, extra = self._snapshot_pairs(snap, kept)
            snapshots.append({"repo": self.name, "snapshot": snap, "held_out": self.held_out, "strip": strip})
            pairs.extend(kept + extra)
        return pairs, snapshots

    def _commit_pairs(self, snap: str, window: list[str]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        commits = 0
        for commit in reversed(window):  # oldest first: the closest to the snapshot
            if commits >= self.per_epoch:
                break
            made = self._one_commit(snap, commit)
            if made:
                commits += 1
                out.extend(made)
        return out

    def _one_commit(self, snap: str, commit: str) -> list[dict[str, Any]]:  # noqa: C901
        meta = git(self.git_dir, "show", "-s", "--format=%P%x00%s%x00%b", commit)
        parents, subject, body = [*meta.split("\x00"), "", "", ""][:3]
        parent = parents.split()[0] if parents.split() else ""
        if not parent or _SKIP.search(subject) or not _FIX.search(subject + "\n" + body):
            self.counts["commits skipped (message)"] += 1
            return []
        title, text = clean_message(subject, body)
        if len(title.split()) < 3:
            self.counts["commits skipped (title)"] += 1
            return []
        status = git(self.git_dir, "diff", "--no-renames", "--name-status", parent, commit)
        files: list[str] = []
        tests: list[str] = []
        for line in status.splitlines():
            st, _, path = line.partition("\t")
            if not path.endswith(".py"):
                continue
            if is_test(path):
                tests.append(path)
            elif st == "M":
                files.append(path)
        if not files or len(files) > MAX_FILES:
            self.counts["commits skipped (files)"] += 1
            return []
        gold: list[str] = []
        for path in files:
            diff = git(self.git_dir, "diff", "-U0", "--no-renames", parent, commit, "--", path)
            before = self.show(parent, path)
            at_snap = self.show(snap, path)
            if before is None or at_snap is None:
                return []
            changed, inserted = changed_old_lines(diff)
            snap_funcs = {f.qual: f for f in functions(at_snap)}
            for f in touched(functions(before), changed, inserted):
                s = snap_funcs.get(f.qual)
                if s is None or segment(at_snap, s) != segment(before, f):
                    self.counts["commits skipped (answer moved since the snapshot)"] += 1
                    return []
                gold.append(f"{path}::{f.qual}")
        if not gold or len(gold) > MAX_FUNCTIONS:
            self.counts["commits skipped (functions)"] += 1
            return []
        base = {
            "repo": self.name,
            "snapshot": snap,
            "commit": commit,
            "held_out": self.held_out,
            "gold_files": files,
            "gold_functions": gold,
        }
        made = [base | {"type": "title", "query": title}]
        if len(text) >= 80:
            made.append(base | {"type": "issue", "query": (title + "\n\n" + text)[:MAX_QUERY_CHARS]})
        test_query = self._test_query(commit, parent, tests)
        if test_query:
            made.append(base | {"type": "test", "query": test_query})
        self.counts["commits kept"] += 1
        return made

    def _test_query(self, commit: str, parent: str, tests: list[str]) -> str | None:
        """The source of the first test function the commit adds or changes (new side)."""
        for path in sorted(tests):
            diff = git(self.git_dir, "diff", "-U0", "--no-renames", parent, commit, "--", path)
            after = self.show(commit, path)
            if after is None:
                continue
            new_lines: set[int] = set()
            for m in _HUNK.finditer(diff):
                start, count = int(m.group(3)), int(m.group(4) if m.group(4) is not None else 1)
                new_lines.update(range(start, start + count))
            for f in touched(functions(after), new_lines, set()):
                if f.qual.rsplit(".", 1)[-1].startswith("test"):
                    return segment(after, f)[:MAX_QUERY_CHARS]
        return None

    def _snapshot_pairs(
        self, snap: str, commit_pairs: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Docstring and identifier queries at the snapshot, and the docstring lines to blank there."""
        rng = random.Random(int(hashlib.sha256(f"{self.name}:{snap}".encode()).hexdigest()[:12], 16))
        listing = git(self.git_dir, "ls-tree", "-r", "--name-only", snap).splitlines()
        paths = sorted(p for p in listing if p.endswith(".py") and not is_test(p))
        rng.shuffle(paths)
        answers = {g for p in commit_pairs for g in p["gold_functions"]}
        docs: list[dict[str, Any]] = []
        idents: list[dict[str, Any]] = []
        strip: list[dict[str, Any]] = []
        names: Counter[str] = Counter()
        candidates: list[tuple[str, Func]] = []
        for path in paths[:400]:
            source = self.show(snap, path)
            if source is None or len(source) > 400_000:
                continue
            for f in functions(source):
                names[f.qual.rsplit(".", 1)[-1]] += 1
                candidates.append((path, f))
        rng.shuffle(candidates)
        for path, f in candidates:
            key = f"{path}::{f.qual}"
            if key in answers:
                continue
            name = f.qual.rsplit(".", 1)[-1]
            if len(docs) < self.docstrings and f.doc and f.docstring:
                sentence = first_sentence(f.docstring)
                words = re.findall(r"[A-Za-z]{2,}", sentence)
                if 4 <= len(words) <= 30 and not sentence.lower().startswith(("see ", "deprecated", "alias")):
                    docs.append(self._pair(snap, "docstring", sentence, path, f.qual))
                    strip.append({"path": path, "first": f.doc[0], "last": f.doc[1]})
                    continue
            if (
                len(idents) < self.identifiers
                and names[name] == 1
                and not name.startswith("__")
                and ("_" in name.strip("_") or any(c.isupper() for c in name[1:]))
            ):
                idents.append(self._pair(snap, "identifier", name, path, f.qual))
            if len(docs) >= self.docstrings and len(idents) >= self.identifiers:
                break
        return strip, docs + idents

    def _pair(self, snap: str, kind: str, query: str, path: str, qual: str) -> dict[str, Any]:
        self.counts[f"{kind} queries"] += 1
        return {
            "repo": self.name,
            "snapshot": snap,
            "commit": snap,
            "held_out": self.held_out,
            "gold_files": [path],
            "gold_functions": [f"{path}::{qual}"],
            "type": kind,
            "query": query,
        }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mirrors", type=Path, required=True, help="folder of <owner>+<name>/repo bare git directories")
    p.add_argument("--out", type=Path, required=True, help="output folder (pairs.jsonl, snapshots.jsonl)")
    p.add_argument("--repos", help="comma-separated <owner>+<name> (default: the training and held-out lists)")
    p.add_argument("--epoch", type=int, default=300, help="first-parent commits per epoch (one snapshot each)")
    p.add_argument("--epochs", type=int, default=2, help="epochs per repository, newest first")
    p.add_argument("--per-epoch", type=int, default=40, help="commits kept per epoch at most")
    p.add_argument("--docstrings", type=int, default=25, help="docstring queries per snapshot")
    p.add_argument("--identifiers", type=int, default=8, help="identifier queries per snapshot")
    args = p.parse_args(argv)
    repos = args.repos.split(",") if args.repos else [*TRAIN_REPOS, *HELD_OUT_REPOS]
    for r in repos:
        if r.split("+")[-1].lower() in NEVER:
            p.error(f"{r} is a SWE-bench repository: it is measured on, never mined")
    args.out.mkdir(parents=True, exist_ok=True)
    all_pairs: list[dict[str, Any]] = []
    all_snaps: list[dict[str, Any]] = []
    total: Counter[str] = Counter()
    for name in repos:
        git_dir = args.mirrors / name / "repo"
        if not git_dir.is_dir():
            print(f"{name}: no git directory at {git_dir}, skipped", file=sys.stderr)
            continue
        miner = RepoMiner(
            name,
            git_dir,
            args.epoch,
            args.epochs,
            args.per_epoch,
            args.docstrings,
            args.identifiers,
            held_out=name in HELD_OUT_REPOS,
        )
        pairs, snaps = miner.mine()
        all_pairs.extend(pairs)
        all_snaps.extend(snaps)
        total.update(miner.counts)
        kinds = Counter(p["type"] for p in pairs)
        print(f"{name}: {len(snaps)} snapshots, {len(pairs)} queries {dict(sorted(kinds.items()))}", file=sys.stderr)
    (args.out / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in all_pairs))
    (args.out / "snapshots.jsonl").write_text("".join(json.dumps(s) + "\n" for s in all_snaps))
    kinds = Counter(p["type"] for p in all_pairs)
    held = sum(p["held_out"] for p in all_pairs)
    print(
        f"{len(all_pairs)} queries ({held} held out) over {len(all_snaps)} snapshots: {dict(sorted(kinds.items()))}",
        file=sys.stderr,
    )
    print(json.dumps(dict(sorted(total.items()))), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
