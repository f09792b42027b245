"""Vector-store benchmark: Qdrant Edge vs qdrant-client local mode, through ided's own adapters.

For each store and size N it builds a store of N synthetic points of realistic shape (sparse
vectors of about 60 nonzeros drawn from a Zipf vocabulary of 50k ids, BM25-style TF weights;
384-dim normalized random dense vectors; chunk payloads of about 1 kB of text, 20 chunks per
file, 80% code), then prints build rate, flush, reopen and optimize times, size on disk and the
p50/p95 latency of lexical, dense and hybrid (RRF) queries (k=10, prefetch 50), with and without
a kind filter, plus a hybrid query under a path glob. Edge is measured before ``optimize()``
(plain appendable segment, what a store looks like while it is being filled) and after it.

    uv run --frozen python bench/store.py --n 10000 100000

qdrant-client local mode is brute force in Python; sizes above ``--local-max`` are skipped.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from daemon.core.models import Chunk, ChunkKind, SearchFilters, SymbolKind, chunk_point_id
from daemon.core.ports import SparseVector, StoredPoint, VectorStore
from daemon.index.store_edge import EdgeVectorStore
from daemon.index.store_qdrant import QdrantClientStore

DIM = 384
VOCAB = 50_000
NNZ = 60
ZIPF_A = 1.15
CHUNKS_PER_FILE = 20
BATCH = 512
K = 10
PREFETCH = 50
MODEL = "bench/random-384"
LANGUAGES = ("python", "typescript", "go", "rust", "java")
WORDS = [
    "def",
    "class",
    "return",
    "self",
    "value",
    "index",
    "store",
    "query",
    "result",
    "config",
    "path",
    "token",
    "vector",
    "chunk",
]


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def disk_bytes(root: Path) -> int:
    """Allocated bytes under ``root`` (what ``du`` reports; mmap files may be sparse)."""
    total = 0
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            try:
                total += os.lstat(Path(dirpath) / name).st_blocks * 512
            except OSError:
                continue
    return total


def zipf_ids(rng: np.random.Generator, draws: int) -> np.ndarray:
    """Token ids from a Zipf law over the vocabulary (id 0 the most frequent)."""
    ids = rng.zipf(ZIPF_A, size=draws * 2)
    ids = ids[ids <= VOCAB][:draws] - 1
    return ids


def sparse_doc(rng: np.random.Generator) -> SparseVector:
    ids, counts = np.unique(zipf_ids(rng, NNZ * 2), return_counts=True)
    if len(ids) > NNZ:
        keep = rng.choice(len(ids), NNZ, replace=False)
        ids, counts = ids[keep], counts[keep]
    tf = counts.astype(np.float64)
    weights = tf * 2.2 / (tf + 1.2)  # BM25 saturation, k1=1.2, no length norm
    return SparseVector(indices=[int(x) for x in ids], values=[float(x) for x in weights])


def sparse_query(rng: np.random.Generator) -> SparseVector:
    ids = np.unique(zipf_ids(rng, int(rng.integers(3, 7)))[:6] + int(rng.integers(0, 50)))
    ids = ids[ids < VOCAB]
    return SparseVector(indices=[int(x) for x in ids], values=[1.0] * len(ids))


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def make_chunk(i: int, rng: np.random.Generator) -> Chunk:
    file_no = i // CHUNKS_PER_FILE
    docs = file_no % 5 == 4
    language = "markdown" if docs else LANGUAGES[file_no % len(LANGUAGES)]
    ext = {"markdown": "md", "python": "py", "typescript": "ts", "go": "go", "rust": "rs", "java": "java"}[language]
    suffix = "_test" if file_no % 7 == 3 else ""
    path = f"pkg{file_no % 37}/sub{file_no % 11}/file{file_no}{suffix}.{ext}"
    words: list[int] = [int(w) for w in rng.integers(0, len(WORDS), 150)]
    text = " ".join(WORDS[w] for w in words)
    start = 1 + (i % CHUNKS_PER_FILE) * 40
    return Chunk(
        path=path,
        kind=ChunkKind.DOCS if docs else ChunkKind.CODE,
        symbol_kind=SymbolKind.SECTION if docs else SymbolKind.FUNCTION,
        language=language,
        text=text,
        start_line=start,
        end_line=start + 30,
        name=f"symbol_{i}",
        qualified_name=f"Module{file_no}.symbol_{i}",
        signature=None if docs else f"def symbol_{i}(self, value: int) -> int",
        docstring=None if docs else "Return the value, indexed.",
        imports=() if docs else ("os", "typing"),
    )


def batches(n: int, seed: int) -> Iterator[list[StoredPoint]]:
    rng = np.random.default_rng(seed)
    for start in range(0, n, BATCH):
        count = min(BATCH, n - start)
        dense = unit_vectors(rng, count)
        out: list[StoredPoint] = []
        for j in range(count):
            chunk = make_chunk(start + j, rng)
            out.append(
                StoredPoint(
                    id=chunk_point_id(chunk.path, start + j, chunk.chunk_hash),
                    chunk=chunk,
                    sparse=sparse_doc(rng),
                    dense=[float(x) for x in dense[j]],
                )
            )
        yield out


@dataclass
class Run:
    label: str
    n: int
    figures: dict[str, str] = field(default_factory=dict[str, str])
    latency: dict[str, tuple[float, float]] = field(default_factory=dict[str, tuple[float, float]])


QueryFn = Callable[[VectorStore, SparseVector, list[float]], object]
CODE = SearchFilters(kind=ChunkKind.CODE)
GLOB = SearchFilters(path_glob="pkg1*/*_test.*")
QUERIES: dict[str, QueryFn] = {
    "lexical": lambda s, sp, d: s.query(sparse=sp, dense=None, filters=None, limit=K, prefetch_limit=PREFETCH),
    "lexical+kind": lambda s, sp, d: s.query(sparse=sp, dense=None, filters=CODE, limit=K, prefetch_limit=PREFETCH),
    "dense": lambda s, sp, d: s.query(sparse=None, dense=d, filters=None, limit=K, prefetch_limit=PREFETCH),
    "dense+kind": lambda s, sp, d: s.query(sparse=None, dense=d, filters=CODE, limit=K, prefetch_limit=PREFETCH),
    "hybrid": lambda s, sp, d: s.query(sparse=sp, dense=d, filters=None, limit=K, prefetch_limit=PREFETCH),
    "hybrid+kind": lambda s, sp, d: s.query(sparse=sp, dense=d, filters=CODE, limit=K, prefetch_limit=PREFETCH),
    "hybrid+glob": lambda s, sp, d: s.query(sparse=sp, dense=d, filters=GLOB, limit=K, prefetch_limit=PREFETCH),
}


def measure_queries(store: VectorStore, run: Run, queries: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    inputs = [(sparse_query(rng), [float(x) for x in v]) for v in unit_vectors(rng, queries + 3)]
    for name, fn in QUERIES.items():
        for sp, d in inputs[:3]:
            fn(store, sp, d)  # warm-up
        seconds: list[float] = []
        for sp, d in inputs[3:]:
            started = time.perf_counter()
            fn(store, sp, d)
            seconds.append(time.perf_counter() - started)
        run.latency[name] = (percentile(seconds, 50) * 1000, percentile(seconds, 95) * 1000)


def build(store: VectorStore, n: int, run: Run) -> None:
    spent = 0.0
    for batch in batches(n, seed=n):
        started = time.perf_counter()
        store.upsert(batch)
        spent += time.perf_counter() - started
    started = time.perf_counter()
    store.flush()
    flush = time.perf_counter() - started
    run.figures["build pts/s"] = f"{n / spent:,.0f}"
    run.figures["flush s"] = f"{flush:.2f}"


def bench_edge(root: Path, n: int, queries: int) -> list[Run]:
    directory = root / f"edge-{n}" / "shard"
    before, after = Run("edge", n), Run("edge+optimize", n)
    store = EdgeVectorStore.open(directory, dense_dim=DIM, dense_model=MODEL)
    build(store, n, before)
    before.figures["disk MB"] = f"{disk_bytes(directory.parent) / 1e6:.0f}"
    measure_queries(store, before, queries, seed=1)
    store.close()
    started = time.perf_counter()
    store = EdgeVectorStore.open(directory, dense_dim=DIM, dense_model=MODEL)
    before.figures["reopen s"] = f"{time.perf_counter() - started:.2f}"
    started = time.perf_counter()
    store.optimize()
    after.figures["optimize s"] = f"{time.perf_counter() - started:.1f}"
    store.flush()
    after.figures["disk MB"] = f"{disk_bytes(directory.parent) / 1e6:.0f}"
    measure_queries(store, after, queries, seed=1)
    store.close()
    started = time.perf_counter()
    store = EdgeVectorStore.open(directory, dense_dim=DIM, dense_model=MODEL)
    after.figures["reopen s"] = f"{time.perf_counter() - started:.2f}"
    assert store.count() == n
    store.close()
    return [before, after]


def bench_local(root: Path, n: int, queries: int) -> list[Run]:
    directory = root / f"local-{n}"
    run = Run("qdrant-local", n)
    store = QdrantClientStore.open_local(directory, "bench", dense_dim=DIM, dense_model=MODEL)
    build(store, n, run)
    run.figures["disk MB"] = f"{disk_bytes(directory) / 1e6:.0f}"
    measure_queries(store, run, queries, seed=1)
    store.close()
    started = time.perf_counter()
    store = QdrantClientStore.open_local(directory, "bench", dense_dim=DIM, dense_model=MODEL)
    run.figures["reopen s"] = f"{time.perf_counter() - started:.2f}"
    assert store.count() == n
    store.close()
    return [run]


def print_tables(runs: list[Run]) -> None:
    heads = [f"{r.label} {r.n // 1000}k" for r in runs]
    width = max(14, *(len(h) for h in heads)) + 2
    keys = ["build pts/s", "flush s", "optimize s", "reopen s", "disk MB"]
    print("\n" + "".ljust(14) + "".join(h.rjust(width) for h in heads))
    for key in keys:
        print(key.ljust(14) + "".join(r.figures.get(key, "-").rjust(width) for r in runs))
    print("\nquery ms p50/p95 (k=10, prefetch 50)")
    print("".ljust(14) + "".join(h.rjust(width) for h in heads))
    for name in QUERIES:
        cells = [f"{r.latency[name][0]:.1f}/{r.latency[name][1]:.1f}" if name in r.latency else "-" for r in runs]
        print(name.ljust(14) + "".join(c.rjust(width) for c in cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, nargs="+", default=[10_000, 100_000], help="store sizes (points)")
    parser.add_argument("--queries", type=int, default=50, help="timed queries per kind")
    parser.add_argument("--local-max", type=int, default=10_000, help="largest size run in local mode")
    parser.add_argument("--stores", nargs="+", default=["edge", "local"], choices=["edge", "local"])
    parser.add_argument("--dir", type=Path, default=None, help="work directory (default: a temporary one)")
    args = parser.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="ided-bench-store-"))
    runs: list[Run] = []
    try:
        for n in args.n:
            if "edge" in args.stores:
                runs += bench_edge(root, n, args.queries)
                print(f"edge {n}: done", flush=True)
            if "local" in args.stores:
                if n > args.local_max:
                    print(f"qdrant-local {n}: skipped (above --local-max {args.local_max})", flush=True)
                    continue
                runs += bench_local(root, n, args.queries)
                print(f"qdrant-local {n}: done", flush=True)
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)
    print_tables(runs)
    hybrid = [r for r in runs if r.n >= 100_000 and "hybrid" in r.latency]
    for r in hybrid:
        verdict = "meets" if r.latency["hybrid"][0] <= 30 else "misses"
        print(f"{r.label} {r.n // 1000}k: hybrid p50 {r.latency['hybrid'][0]:.1f} ms {verdict} the 30 ms target")


if __name__ == "__main__":
    main()
