"""What dense vectors add, by kind of query, and what a chunk's vector costs.

A real repository (``--source``, any number) is copied with every docstring removed (line numbers
kept: a docstring's lines become ``pass`` and blank lines), indexed with the real index (Tree-sitter
chunks, BM25, Qdrant Edge, the configured embedding model) and asked two kinds of one-line query
about its documented functions and methods (tests left out), each with one right answer, the
function itself:

* **question**: the docstring's first sentence, as an agent asks "where is X handled" in plain
  words (the docstring is not in the index, so the words must be found another way);
* **identifier**: the function's bare name (``resolve_redirects``), for names defined once in the
  repository (a name defined twice has two right answers).

(The third kind, an issue's whole text, is ``bench/localization.py``: ``--embed`` against
``--embed --lexical`` on the same indexes.)

Each query runs lexically, then, once the vectors are complete, hybrid (the default search) and
dense alone, all through ``WorkspaceIndex.search`` (the code path of every front). Printed per kind:
MRR@10, R@1, R@5, R@10 and p50 query time per mode, hybrid's gain over lexical, and the embedding's
cost: chunks/s, seconds per 1,000 chunks, and the model's tokens per chunk (capped at
``max_tokens``). ``--setting LABEL=JSON`` repeats the dense part under other embedding settings
(``embedding`` config keys, plus ``variant``: ``compact`` or ``whole``, the text embedded per chunk,
``daemon.index.embed_text``), each with an index of its own, interleaved nowhere: settings run one
after the other on the same corpus, so quote their ratios, not their absolute speeds.

    python bench/query_types.py --source DIR [--source DIR] [--sample 80] [--seed 7]
        [--setting base={} --setting t128='{"max_tokens": 128}'] [--no-dense] [--json out.json]
        [--rankers formula,learned]   # each search.ranker on the same indexes, lexical and hybrid

A checkout of a repository from a bare mirror: ``git --git-dir=MIRROR archive HEAD | tar -x -C DIR``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import shutil
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

os.environ.setdefault("HF_HUB_OFFLINE", "1")

KINDS = ("question", "identifier")
K = 10
_SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".tox", ".venv", "build", "dist"})
_TEST_RE = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*$|_tests?\.py$|(^|/)conftest\.py$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


@dataclass(frozen=True)
class Target:
    path: str
    qualified: str
    name: str
    first: int
    last: int


@dataclass(frozen=True)
class Query:
    kind: str
    text: str
    target: Target


@dataclass
class Corpus:
    root: Path
    files: int = 0
    targets: list[tuple[Target, str]] = field(default_factory=list[tuple[Target, str]])
    """Each documented function with its docstring's first sentence."""
    names: Counter[str] = field(default_factory=Counter[str])
    """How often each function or class name is defined (identifier queries need a single definition)."""


# -- the corpus: a copy without docstrings -----------------------------------------------------------


def _first_sentence(doc: str) -> str | None:
    para = doc.strip().split("\n\n", 1)[0]
    text = " ".join(line.strip() for line in para.splitlines())
    text = _SENTENCE_END.split(text, 1)[0].strip()
    words = text.split()
    if not 4 <= len(words) <= 40 or text.startswith((":", ">>>", "..")):
        return None
    return text


def _strip(source: str, rel: str, corpus: Corpus) -> str:
    """``source`` with each docstring's lines replaced (line numbers kept); its documented functions
    recorded in ``corpus``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return source
    lines = source.splitlines(keepends=True)
    test_file = _TEST_RE.search(rel) is not None

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                qual = f"{prefix}{child.name}"
                corpus.names[child.name] += 1
                doc = ast.get_docstring(child, clean=True)
                first = child.body[0]
                if doc and isinstance(first, ast.Expr) and first.lineno > child.lineno and first.end_lineno:
                    start, end = first.lineno - 1, first.end_lineno
                    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
                    lines[start] = f"{indent}pass\n"
                    for i in range(start + 1, end):
                        lines[i] = "\n"
                    sentence = _first_sentence(doc)
                    if (
                        sentence
                        and not test_file
                        and not isinstance(child, ast.ClassDef)
                        and not child.name.startswith("__")
                    ):
                        target = Target(rel, qual, child.name, child.lineno, child.end_lineno or child.lineno)
                        corpus.targets.append((target, sentence))
                visit(child, f"{qual}.")

    visit(tree, "")
    return "".join(lines)


def build_corpus(sources: Sequence[Path], dest: Path) -> Corpus:
    corpus = Corpus(dest)
    for source in sources:
        into = dest / source.name if len(sources) > 1 else dest
        for path in _walk(source):
            rel = path.relative_to(source).as_posix()
            out = into / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix == ".py":
                text = path.read_text(encoding="utf-8", errors="replace")
                prefix = f"{source.name}/" if len(sources) > 1 else ""
                out.write_text(_strip(text, prefix + rel, corpus), encoding="utf-8")
            else:
                shutil.copyfile(path, out)
            corpus.files += 1
    return corpus


def _walk(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                yield path


def make_queries(corpus: Corpus, sample: int, seed: int) -> list[Query]:
    rng = random.Random(seed)
    documented = list(corpus.targets)
    rng.shuffle(documented)
    questions = [Query("question", sentence, t) for t, sentence in documented[:sample]]
    unique = [t for t, _ in documented if corpus.names[t.name] == 1 and len(t.name) >= 5]
    identifiers = [Query("identifier", t.name, t) for t in unique[:sample]]
    return questions + identifiers


# -- searching -----------------------------------------------------------------------------------------


def _is_target(hit: Any, t: Target) -> bool:
    c = hit.chunk
    if c.path != t.path or c.end_line < t.first or c.start_line > t.last:
        return False
    name = c.qualified_name or c.name or ""
    return name == t.qualified or name.endswith(f".{t.name}") or name == t.name


def run_queries(ws: Any, queries: Sequence[Query], mode: Any) -> tuple[list[int | None], list[float]]:
    ranks: list[int | None] = []
    seconds: list[float] = []
    ws.search(queries[0].text, k=K, mode=mode)  # warm: the query model, the memo
    for q in queries:
        started = time.perf_counter()
        result = ws.search(q.text, k=K, mode=mode)
        seconds.append(time.perf_counter() - started)
        ranks.append(next((i + 1 for i, h in enumerate(result.hits) if _is_target(h, q.target)), None))
    return ranks, seconds


def metrics(ranks: Sequence[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {
        "MRR@10": sum(1 / r for r in ranks if r is not None) / n,
        "R@1": sum(1 for r in ranks if r is not None and r <= 1) / n,
        "R@5": sum(1 for r in ranks if r is not None and r <= 5) / n,
        "R@10": sum(1 for r in ranks if r is not None and r <= 10) / n,
    }


@dataclass
class Outcome:
    setting: str
    mode: str
    by_kind: dict[str, dict[str, float]]
    p50_ms: dict[str, float]
    ranks: dict[str, list[int | None]]


def evaluate(ws: Any, queries: Sequence[Query], mode: Any, setting: str) -> Outcome:
    by_kind: dict[str, dict[str, float]] = {}
    p50: dict[str, float] = {}
    all_ranks: dict[str, list[int | None]] = {}
    for kind in KINDS:
        subset = [q for q in queries if q.kind == kind]
        if not subset:
            continue
        ranks, seconds = run_queries(ws, subset, mode)
        by_kind[kind] = metrics(ranks)
        p50[kind] = statistics.median(seconds) * 1000
        all_ranks[kind] = ranks
    return Outcome(setting, mode.value, by_kind, p50, all_ranks)


@dataclass
class Cost:
    setting: str
    chunks: int
    seconds: float
    tokens_per_chunk: float

    @property
    def chunks_per_s(self) -> float:
        return self.chunks / self.seconds if self.seconds else 0.0


def _config(root: Path, state: Path, embedding: dict[str, Any] | None, ranker: str | None = None) -> Any:
    from daemon.config import load_config

    overrides: dict[str, Any] = {"state_dir": str(state)}
    overrides["embedding"] = {"enabled": False} if embedding is None else embedding
    if ranker is not None:
        overrides["search"] = {"ranker": ranker}
    return load_config(root, overrides=overrides)


def _label(setting: str, ranker: str | None) -> str:
    return setting if ranker is None else f"{setting}/{ranker}"


def run_setting(
    corpus: Corpus,
    queries: Sequence[Query],
    state: Path,
    label: str,
    settings: dict[str, Any],
    rankers: Sequence[str | None] = (None,),
) -> tuple[Cost, list[Outcome]]:
    from daemon.core.models import SearchMode
    from daemon.index import embed_text
    from daemon.index.workspace_index import WorkspaceIndex

    settings = dict(settings)
    variant = settings.pop("variant", embed_text.DEFAULT_VARIANT)
    embed_text.DEFAULT_VARIANT = variant  # what document_text embeds (read at each call)
    config = _config(corpus.root, state, settings)
    with WorkspaceIndex.open(config) as ws:
        ws.index()
        pending = ws.pending_embeddings()
        embedder = ws.dense_embedder()
        if embedder is None:
            raise SystemExit(f"{label}: the dense model is unavailable: {ws.status().dense_unavailable_reason}")
        started = time.perf_counter()
        done = ws.embed()
        seconds = time.perf_counter() - started
        texts = [embed_text.document_text(c) for _, c in _all_chunks(ws)]
        counter: Any = embedder  # OnnxEmbedder: the model's own tokenizer
        counts: list[int] = counter.count_tokens_batch(texts)
        cap = config.embedding.max_tokens - 2  # [CLS] and [SEP]
        tokens = statistics.fmean(min(n, cap) for n in counts) if counts else 0.0
        cost = Cost(label, done or pending, seconds, tokens)
    outcomes: list[Outcome] = []
    for ranker in rankers:  # the same vectors, each ranking of them
        with WorkspaceIndex.open(_config(corpus.root, state, settings, ranker)) as ws:
            ws.index()
            modes = (SearchMode.HYBRID, SearchMode.DENSE) if ranker == rankers[0] else (SearchMode.HYBRID,)
            outcomes += [evaluate(ws, queries, mode, _label(label, ranker)) for mode in modes]
    return cost, outcomes


def _all_chunks(ws: Any) -> list[tuple[str, Any]]:
    store = ws._store  # the bench reads every chunk once to count its tokens
    return [(str(row.id), _chunk(row.payload)) for row in store._scroll_all(None, payload=True, dense=False)]


def _chunk(payload: Any) -> Any:
    from daemon.index._payload import chunk_from_payload

    return chunk_from_payload(payload)


def run_lexical(
    corpus: Corpus, queries: Sequence[Query], state: Path, rankers: Sequence[str | None] = (None,)
) -> tuple[list[Outcome], float, int]:
    from daemon.core.models import SearchMode
    from daemon.index.workspace_index import WorkspaceIndex

    outcomes: list[Outcome] = []
    seconds, chunks = 0.0, 0
    for ranker in rankers:
        with WorkspaceIndex.open(_config(corpus.root, state, None, ranker)) as ws:
            started = time.perf_counter()
            ws.index()
            if ranker == rankers[0]:
                seconds = time.perf_counter() - started
                chunks = ws.status().chunks
            outcomes.append(evaluate(ws, queries, SearchMode.LEXICAL, _label("-", ranker)))
    return outcomes, seconds, chunks


# -- report ----------------------------------------------------------------------------------------------


def report(lexicals: list[Outcome], dense: list[tuple[Cost, list[Outcome]]], counts: dict[str, int]) -> list[str]:
    lines: list[str] = []
    cols = ("MRR@10", "R@1", "R@5", "R@10")
    lines.append(f"{'kind':<11} {'n':>4} {'setting':<10} {'mode':<8} " + " ".join(f"{c:>7}" for c in cols) + "  p50 ms")
    for kind in KINDS:
        if kind not in lexicals[0].by_kind:
            continue
        rows = lexicals + [o for _, outs in dense for o in outs]
        for o in rows:
            m = o.by_kind[kind]
            lines.append(
                f"{kind:<11} {counts[kind]:>4} {o.setting:<10} {o.mode:<8} "
                + " ".join(f"{m[c]:>7.3f}" for c in cols)
                + f"  {o.p50_ms[kind]:>6.1f}"
            )
        for _, outs in dense:
            for hybrid_run, lexical in zip((o for o in outs if o.mode == "hybrid"), lexicals, strict=False):
                hybrid = hybrid_run.by_kind[kind]
                base = lexical.by_kind[kind]
                gain = ", ".join(f"{key} {hybrid[key] - base[key]:+.3f}" for key in ("MRR@10", "R@1", "R@5"))
                lines.append(f"{kind:<11} hybrid - lexical ({hybrid_run.setting}): {gain}")
    for cost, _ in dense:
        lines.append(
            f"embedding {cost.setting}: {cost.chunks} chunks in {cost.seconds:.1f} s = {cost.chunks_per_s:.1f} chunks/s"
            f" ({1000 / max(cost.chunks_per_s, 1e-9):.1f} s per 1,000 chunks), {cost.tokens_per_chunk:.0f} tokens/chunk"
        )
    return lines


def _setting(text: str) -> tuple[str, dict[str, Any]]:
    label, _, raw = text.partition("=")
    value: object = json.loads(raw or "{}")
    if not isinstance(value, dict):
        raise SystemExit(f"--setting {label}: a JSON object expected")
    return label, cast("dict[str, Any]", value)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, action="append", required=True, help="a repository's folder")
    parser.add_argument("--sample", type=int, default=80, help="queries of each kind")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--setting", action="append", default=[], metavar="LABEL=JSON")
    parser.add_argument("--no-dense", action="store_true", help="lexical only (no embedding)")
    parser.add_argument(
        "--rankers",
        default="",
        help="comma-separated search.ranker values (formula, learned, auto), each asked every query on the same "
        "indexes (default: the configured one)",
    )
    parser.add_argument("--json", type=Path, help="write the figures and every query's rank here")
    args = parser.parse_args(argv)
    settings = [_setting(s) for s in args.setting] or [("base", {})]
    rankers: list[str | None] = [r for r in args.rankers.split(",") if r] or [None]
    if any(r not in (None, "formula", "learned", "auto") for r in rankers):
        parser.error(f"--rankers: formula, learned or auto (got {args.rankers!r})")
    with tempfile.TemporaryDirectory(prefix="ided-qt-") as tmp:
        work = Path(tmp)
        corpus = build_corpus([s.resolve() for s in args.source], work / "ws")
        queries = make_queries(corpus, args.sample, args.seed)
        counts = Counter(q.kind for q in queries)
        print(
            f"corpus: {corpus.files} files from {', '.join(str(s) for s in args.source)}; "
            f"{len(corpus.targets)} documented functions; queries: {dict(counts)}",
            flush=True,
        )
        lexicals, index_s, chunks = run_lexical(corpus, queries, work / "state-lexical", rankers)
        print(f"lexical index: {chunks} chunks in {index_s:.1f} s", flush=True)
        dense: list[tuple[Cost, list[Outcome]]] = []
        if not args.no_dense:
            for label, setting in settings:
                print(f"embedding under {label} {setting} ...", flush=True)
                dense.append(run_setting(corpus, queries, work / f"state-{label}", label, setting, rankers))
        lines = report(lexicals, dense, dict(counts))
        print("\n".join(lines))
        if args.json:
            outcomes = lexicals + [o for _, outs in dense for o in outs]
            args.json.write_text(
                json.dumps(
                    {
                        "queries": [{"kind": q.kind, "text": q.text, "target": q.target.__dict__} for q in queries],
                        "outcomes": [o.__dict__ for o in outcomes],
                        "costs": [c.__dict__ for c, _ in dense],
                    },
                    indent=1,
                )
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
