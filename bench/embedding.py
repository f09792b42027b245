"""Embedding benchmark on real code: ~600 documented Python functions from the venv's site-packages.

Prints, on one table each:

* dense throughput (chunks/s) of ``OnnxEmbedder`` against max_tokens 128/256/512, batch size
  16/32/64 (texts tokenized at once; each runs alone), threads 1/2, and the embedded text (whole vs
  compact);
* sparse (``CodeBm25Encoder``) encoding speed on one core, cold and warm caches, and the mean BM25
  document length (what ``AVG_DOC_TOKENS`` should be);
* a retrieval check: query = the first sentence of a function's docstring, document = the function
  without its docstring; MRR@10 and recall@10 of dense-whole, dense-compact, sparse (and its stemming
  variants) and hybrid RRF of dense-whole + sparse.

Functions are extracted with the stdlib ``ast`` module (not the ided chunker). Default run (about
4 minutes on 2 cores): each throughput row embeds a 48-chunk sample in 3 interleaved rounds (the
median is shown; configs take turns so machine noise hits all alike), and the retrieval check
embeds all functions. ``--full`` times the whole cartesian grid (36 rows; raise ``--sample`` for
steadier figures and expect an hour or more).

    uv run --frozen python bench/embedding.py [--limit 600] [--sample 96] [--full] [--json out.json]
"""

from __future__ import annotations

import argparse
import ast
import json
import logging
import math
import os
import random
import re
import statistics
import sys
import sysconfig
import tempfile
import textwrap
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from daemon.core.models import Chunk, ChunkKind, SymbolKind
from daemon.core.ports import SparseVector
from daemon.index.embed_text import compact_text, whole_text
from daemon.index.embedder import OnnxEmbedder
from daemon.index.model_files import bundled_model_dir
from daemon.index.sparse import CodeBm25Encoder

logger = logging.getLogger(__name__)

RRF_K = 60
TOP_K = 10
SKIP_DIRS = {"__pycache__", "tests", "test", "testing", "_vendor", "vendor", "benchmarks", "examples"}


@dataclass(frozen=True, slots=True)
class Sample:
    """One documented function: the chunk to index, the docstring-less document and the query."""

    chunk: Chunk
    document: Chunk
    query: str


@dataclass(slots=True)
class Row:
    label: str
    values: dict[str, str] = field(default_factory=dict[str, str])


def _first_sentence(doc: str) -> str:
    para = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0]
    para = " ".join(para.split())
    return re.split(r"(?<=[.!?])\s+", para, maxsplit=1)[0]


def _qualified_functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, bool]]:
    out: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, bool]] = []

    def visit(node: ast.AST, prefix: str, in_class: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.", True)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                out.append((f"{prefix}{child.name}", child, in_class))

    visit(tree, "", False)
    return out


def _function_chunk(where: tuple[str, int, int, str, str, str, SymbolKind], text: str, docstring: str | None) -> Chunk:
    path, start, end, name, qualified, signature, kind = where
    return Chunk(
        path=path,
        kind=ChunkKind.CODE,
        symbol_kind=kind,
        language="python",
        text=text,
        start_line=start,
        end_line=end,
        name=name,
        qualified_name=qualified,
        signature=signature,
        docstring=docstring,
    )


def _samples_of_file(path: Path, rel: str) -> list[Sample]:
    try:
        source = path.read_text(encoding="utf-8")
        if len(source) > 400_000:
            return []
        tree = ast.parse(source)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return []
    lines = source.splitlines()
    found: list[Sample] = []
    for qualified, node, is_method in _qualified_functions(tree):
        doc = ast.get_docstring(node)
        first = node.body[0]
        if not doc or len(node.body) < 2 or node.end_lineno is None or first.end_lineno is None:
            continue
        query = _first_sentence(doc)
        if len(query) < 25 or len(query.split()) < 4 or first.lineno <= node.lineno:
            continue
        start, end = node.lineno, node.end_lineno
        text = textwrap.dedent("\n".join(lines[start - 1 : end])) + "\n"
        if not 200 <= len(text) <= 4000:
            continue
        body_lines = lines[start - 1 : first.lineno - 1] + lines[first.end_lineno : end]
        without_doc = textwrap.dedent("\n".join(body_lines)) + "\n"
        signature = " ".join(" ".join(lines[start - 1 : first.lineno - 1]).split())

        kind = SymbolKind.METHOD if is_method else SymbolKind.FUNCTION
        where = (rel, start, end, node.name, qualified, signature, kind)
        chunk = _function_chunk(where, text, doc)
        document = _function_chunk(where, without_doc, None)
        found.append(Sample(chunk=chunk, document=document, query=query))
    return found


def extract_samples(root: Path, limit: int, seed: int, per_file: int = 2, per_package: int = 30) -> list[Sample]:
    """Documented functions from a shuffled walk of ``root``, capped per file and per top-level package."""
    files: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".dist-info"))
        files.extend(Path(dirpath) / f for f in sorted(filenames) if f.endswith(".py") and not f.startswith("test"))
    rng = random.Random(seed)
    rng.shuffle(files)
    by_package: dict[str, int] = defaultdict(int)
    seen_queries: set[str] = set()
    samples: list[Sample] = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        package = rel.split("/", 1)[0]
        if by_package[package] >= per_package:
            continue
        candidates = _samples_of_file(path, rel)
        rng.shuffle(candidates)
        taken = 0
        for sample in candidates:
            key = sample.query.lower()
            if key in seen_queries or taken >= per_file or by_package[package] >= per_package:
                continue
            seen_queries.add(key)
            samples.append(sample)
            taken += 1
            by_package[package] += 1
        if len(samples) >= limit:
            break
    return samples[:limit]


# ---------------------------------------------------------------- dense throughput


@dataclass(frozen=True, slots=True)
class DenseConfig:
    max_tokens: int = 256
    batch_size: int = 32
    threads: int | None = None
    variant: str = "whole"

    def label(self) -> str:
        threads = "all" if self.threads is None else str(self.threads)
        return f"tok={self.max_tokens} batch={self.batch_size} threads={threads} {self.variant}"


VARIANTS: dict[str, Callable[[Chunk], str]] = {"whole": whole_text, "compact": compact_text}


def make_embedder(model_dir: Path, cfg: DenseConfig) -> OnnxEmbedder:
    return OnnxEmbedder(
        model_dir,
        max_tokens=cfg.max_tokens,
        batch_size=cfg.batch_size,
        threads=cfg.threads,
        text_of=VARIANTS[cfg.variant],
        load="documents",
    )


def dense_throughput(
    model_dir: Path, chunks: Sequence[Chunk], configs: Sequence[DenseConfig], rounds: int
) -> list[Row]:
    """Median chunks/s and CPU time per chunk over ``rounds`` rounds, configs taking turns.

    CPU time is steadier than wall time on a shared machine; with threads > 1 it includes
    onnxruntime's spinning worker threads, so compare it within one thread setting.
    """
    embedders = [make_embedder(model_dir, cfg) for cfg in configs]
    tokens: list[float] = []
    for cfg, embedder in zip(configs, embedders, strict=True):
        embedder.embed_documents(chunks[:4])  # warm-up
        texts = [VARIANTS[cfg.variant](c) for c in chunks]
        counts = [min(n + 2, cfg.max_tokens) for n in embedder.count_tokens_batch(texts)]
        tokens.append(statistics.fmean(counts))  # each text runs alone, unpadded
    rates: list[list[float]] = [[] for _ in configs]
    cpu_ms: list[list[float]] = [[] for _ in configs]
    for r in range(rounds):
        for i, embedder in enumerate(embedders):
            start, cpu_start = time.perf_counter(), time.process_time()
            embedder.embed_documents(chunks)
            rates[i].append(len(chunks) / (time.perf_counter() - start))
            cpu_ms[i].append((time.process_time() - cpu_start) * 1000 / len(chunks))
        print(f"  round {r + 1}/{rounds}: " + " ".join(f"{x[-1]:.1f}" for x in rates), file=sys.stderr, flush=True)
    return [
        Row(
            cfg.label(),
            {
                "chunks/s": f"{statistics.median(rate):.1f}",
                "min-max": f"{min(rate):.1f}-{max(rate):.1f}",
                "CPU ms/chunk": f"{statistics.median(cpu):.0f}",
                "tokens/chunk": f"{tok:.0f}",
            },
        )
        for cfg, rate, cpu, tok in zip(configs, rates, cpu_ms, tokens, strict=True)
    ]


def default_grid() -> list[DenseConfig]:
    return [
        DenseConfig(max_tokens=128),
        DenseConfig(max_tokens=256),
        DenseConfig(max_tokens=512),
        DenseConfig(batch_size=16),
        DenseConfig(batch_size=64),
        DenseConfig(threads=1),
        DenseConfig(variant="compact"),
        DenseConfig(max_tokens=128, variant="compact"),
    ]


def full_grid() -> list[DenseConfig]:
    return [
        DenseConfig(max_tokens=m, batch_size=b, threads=t, variant=v)
        for m in (128, 256, 512)
        for b in (16, 32, 64)
        for t in (1, None)
        for v in ("whole", "compact")
    ]


# ---------------------------------------------------------------- sparse


def sparse_throughput(chunks: Sequence[Chunk]) -> Row:
    encoder = CodeBm25Encoder()
    start = time.perf_counter()
    encoder.encode_documents(chunks)
    cold = time.perf_counter() - start
    start = time.perf_counter()
    encoder.encode_documents(chunks)
    warm = time.perf_counter() - start
    mean_bytes = statistics.fmean(len(c.text.encode()) for c in chunks)
    mean_dl = statistics.fmean(encoder.field_counts(c).total() for c in chunks)
    return Row(
        "sparse CodeBm25Encoder (1 core)",
        {
            "cold chunks/s": f"{len(chunks) / cold:.0f}",
            "warm chunks/s": f"{len(chunks) / warm:.0f}",
            "mean bytes/chunk": f"{mean_bytes:.0f}",
            "mean BM25 dl": f"{mean_dl:.0f}",
        },
    )


def sparse_rankings(encoder: CodeBm25Encoder, docs: Sequence[Chunk], queries: Sequence[str]) -> list[list[int]]:
    """Top-k doc indices per query, scored as the store would: sum of IDF x BM25 tf weight."""
    vectors: list[SparseVector] = encoder.encode_documents(docs)
    postings: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for d, vec in enumerate(vectors):
        for i, w in zip(vec.indices, vec.values, strict=True):
            postings[i].append((d, w))
    n = len(docs)
    rankings: list[list[int]] = []
    for q in queries:
        scores: dict[int, float] = defaultdict(float)
        for term in encoder.encode_query(q).indices:
            plist = postings.get(term, [])
            idf = math.log((n - len(plist) + 0.5) / (len(plist) + 0.5) + 1.0)
            for d, w in plist:
                scores[d] += idf * w
        rankings.append(sorted(scores, key=lambda d: -scores[d])[:TOP_K])
    return rankings


# ---------------------------------------------------------------- retrieval


def dense_rankings(doc_vectors: list[list[float]], query_vectors: list[list[float]]) -> list[list[int]]:
    import numpy as np

    docs = np.asarray(doc_vectors, dtype=np.float32)
    queries = np.asarray(query_vectors, dtype=np.float32)
    scores = queries @ docs.T
    top = np.argsort(-scores, axis=1)[:, :TOP_K]
    return [[int(i) for i in row] for row in top]


def rrf(a: list[list[int]], b: list[list[int]]) -> list[list[int]]:
    fused: list[list[int]] = []
    for ra, rb in zip(a, b, strict=True):
        scores: dict[int, float] = defaultdict(float)
        for ranking in (ra, rb):
            for rank, d in enumerate(ranking, start=1):
                scores[d] += 1.0 / (RRF_K + rank)
        fused.append(sorted(scores, key=lambda d: -scores[d])[:TOP_K])
    return fused


def mrr_recall(rankings: list[list[int]]) -> tuple[float, float]:
    rr: list[float] = []
    hits = 0
    for q, ranking in enumerate(rankings):
        rank = ranking.index(q) + 1 if q in ranking else None
        rr.append(1.0 / rank if rank else 0.0)
        hits += rank is not None
    return statistics.fmean(rr), hits / len(rankings)


def sparse_retrieval_rows(docs: Sequence[Chunk], queries: Sequence[str]) -> list[Row]:
    variants = {
        "sparse (stemmed sub-words, default)": CodeBm25Encoder(),
        "sparse (prose stemmed, sub-words not)": CodeBm25Encoder(stem_subwords=False),
        "sparse (no stemming)": CodeBm25Encoder(stem=False),
    }
    rows: list[Row] = []
    for label, encoder in variants.items():
        mrr, recall = mrr_recall(sparse_rankings(encoder, docs, queries))
        rows.append(Row(label, {"MRR@10": f"{mrr:.3f}", "R@10": f"{recall:.3f}"}))
    return rows


def retrieval(model_dir: Path, samples: Sequence[Sample], dense_configs: Sequence[DenseConfig]) -> list[Row]:
    docs = [s.document for s in samples]
    queries = [s.query for s in samples]
    rows: list[Row] = []
    dense_by_label: dict[str, list[list[int]]] = {}
    query_vectors: list[list[float]] | None = None
    for cfg in dense_configs:
        embedder = make_embedder(model_dir, cfg)
        if query_vectors is None:
            query_vectors = embedder.embed_texts(queries)
        start = time.perf_counter()
        doc_vectors = embedder.embed_documents(docs)
        seconds = time.perf_counter() - start
        ranking = dense_rankings(doc_vectors, query_vectors)
        dense_by_label[cfg.label()] = ranking
        mrr, recall = mrr_recall(ranking)
        rows.append(
            Row(
                f"dense {cfg.variant} tok={cfg.max_tokens}",
                {"MRR@10": f"{mrr:.3f}", "R@10": f"{recall:.3f}", "chunks/s": f"{len(docs) / seconds:.1f}"},
            )
        )
        print(f"  {rows[-1].label}: {rows[-1].values}", file=sys.stderr, flush=True)
    rows.extend(sparse_retrieval_rows(docs, queries))
    default_sparse = sparse_rankings(CodeBm25Encoder(), docs, queries)
    for label, ranking in dense_by_label.items():
        mrr, recall = mrr_recall(rrf(ranking, default_sparse))
        rows.append(Row(f"hybrid RRF: sparse + dense ({label})", {"MRR@10": f"{mrr:.3f}", "R@10": f"{recall:.3f}"}))
    return rows


# ---------------------------------------------------------------- output


def print_table(title: str, rows: Sequence[Row]) -> None:
    columns: list[str] = []
    for row in rows:
        columns.extend(k for k in row.values if k not in columns)
    width = max(len(r.label) for r in rows)
    print(f"\n## {title}")
    print(" | ".join([f"{'':<{width}}", *[f"{c:>14}" for c in columns]]))
    for row in rows:
        print(" | ".join([f"{row.label:<{width}}", *[f"{row.values.get(c, ''):>14}" for c in columns]]))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    parser.add_argument("--limit", type=int, default=600, help="functions to extract (retrieval corpus)")
    parser.add_argument("--sample", type=int, default=48, help="chunks per throughput row (default run)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per throughput row (median)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--full", action="store_true", help="time the whole cartesian grid")
    parser.add_argument("--skip-dense", action="store_true", help="sparse figures only")
    parser.add_argument("--skip-retrieval", action="store_true", help="no dense retrieval check")
    parser.add_argument("--json", type=Path, help="also write the tables as JSON")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    began = time.perf_counter()
    samples = extract_samples(args.root, args.limit, args.seed)
    chunks = [s.chunk for s in samples]
    print(
        f"{len(samples)} functions from {args.root} "
        f"(mean {statistics.fmean(len(c.text) for c in chunks):.0f} chars), cpu count {os.cpu_count()}"
    )
    tables: dict[str, list[Row]] = {"sparse encoding": [sparse_throughput(chunks)]}
    model_dir = None if args.skip_dense else bundled_model_dir(Path(tempfile.mkdtemp(prefix="ided-bench-")))
    if model_dir is not None:
        sample = random.Random(args.seed).sample(chunks, min(args.sample, len(chunks)))
        grid = full_grid() if args.full else default_grid()
        print(f"dense throughput on {len(sample)} chunks per row", file=sys.stderr)
        tables["dense throughput (median of rounds)"] = dense_throughput(model_dir, sample, grid, args.rounds)
    title = "retrieval (query: docstring first sentence; doc: function without docstring)"
    if model_dir is not None and not args.skip_retrieval:
        print("retrieval check", file=sys.stderr)
        retrieval_configs = [
            DenseConfig(max_tokens=256),
            DenseConfig(max_tokens=256, variant="compact"),
            DenseConfig(max_tokens=128),
            DenseConfig(max_tokens=128, variant="compact"),
        ]
        tables[title] = retrieval(model_dir, samples, retrieval_configs)
    else:
        tables[title] = sparse_retrieval_rows([s.document for s in samples], [s.query for s in samples])
    for title, rows in tables.items():
        print_table(title, rows)
    print(f"\ntotal {time.perf_counter() - began:.0f} s")
    if args.json:
        args.json.write_text(
            json.dumps({t: {r.label: r.values for r in rows} for t, rows in tables.items()}, indent=2), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
