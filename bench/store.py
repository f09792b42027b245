"""Vector-store benchmark: Qdrant Edge, a real Qdrant server and qdrant-client local mode, through ided's
own adapters.

For each store and size N it builds a store of N synthetic points of realistic shape (sparse
vectors of about 60 nonzeros drawn from a Zipf vocabulary of 50k ids, BM25-style TF weights;
384-dim normalized random dense vectors; chunk payloads of about 1 kB of text, 20 chunks per
file, 80% code), then prints upsert rate, flush, reopen and optimize times, size on disk, memory
(Edge: the growth of this process's RSS; server: the server process's RSS) and the p50/p95 latency
of lexical, dense and hybrid (RRF) queries (k=10, prefetch 50), with and without a kind filter, plus
a hybrid query under a path glob. Edge is measured before ``optimize()`` (plain appendable segment,
what a store looks like while it is being filled) and after it; the server after its optimizer has
built the indexes (the time that takes is "optimize s").

``--team C`` then simulates a team on the largest size: C clients search one shared index with
hybrid queries for ``--team-seconds``, first alone, then while one indexer keeps upserting batches.
On the server the clients are separate processes, each with its own connection; on Edge (one
process owns a shard) they are threads of the owning process, which is how the daemon serves its
attached clients.

``--tenancy K`` measures how K workspaces share one server (``--tenancy-points`` each): K
collections (what ided does) against one collection with a keyword ``tenant`` field
(``is_tenant``) that every query filters on: server RSS, disk, load time, hybrid p50/p95.

    uv run --frozen python bench/store.py --n 100000 --stores edge server --team 4 --tenancy 20

The server comes from ``scripts/build-qdrant-server.sh`` (``IDED_QDRANT_BIN`` overrides); each
measurement starts its own on loopback with fresh storage. qdrant-client local mode is brute force
in Python; sizes above ``--local-max`` are skipped.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from qdrant_client import QdrantClient, models

from daemon.core.models import Chunk, ChunkKind, SearchFilters, SymbolKind, chunk_point_id
from daemon.core.ports import SparseVector, StoredPoint, StoreQuery, VectorStore
from daemon.index.store_edge import EdgeVectorStore
from daemon.index.store_qdrant import QdrantClientStore
from tests.qdrant_server_support import qdrant_binary, running_qdrant

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


def rss_mb(pid: int | None = None) -> float:
    """Resident memory of a process (this one by default), in MB."""
    status = Path(f"/proc/{pid or 'self'}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


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
    "lexical": lambda s, sp, d: s.query(StoreQuery(sparse=sp, limit=K, prefetch_limit=PREFETCH)),
    "lexical+kind": lambda s, sp, d: s.query(StoreQuery(sparse=sp, filters=CODE, limit=K, prefetch_limit=PREFETCH)),
    "dense": lambda s, sp, d: s.query(StoreQuery(dense=d, limit=K, prefetch_limit=PREFETCH)),
    "dense+kind": lambda s, sp, d: s.query(StoreQuery(dense=d, filters=CODE, limit=K, prefetch_limit=PREFETCH)),
    "hybrid": lambda s, sp, d: s.query(StoreQuery(sparse=sp, dense=d, limit=K, prefetch_limit=PREFETCH)),
    "hybrid+kind": lambda s, sp, d: s.query(
        StoreQuery(sparse=sp, dense=d, filters=CODE, limit=K, prefetch_limit=PREFETCH)
    ),
    "hybrid+glob": lambda s, sp, d: s.query(
        StoreQuery(sparse=sp, dense=d, filters=GLOB, limit=K, prefetch_limit=PREFETCH)
    ),
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
    baseline = rss_mb()
    store = EdgeVectorStore.open(directory, dense_dim=DIM, dense_model=MODEL)
    build(store, n, before)
    before.figures["disk MB"] = f"{disk_bytes(directory.parent) / 1e6:.0f}"
    measure_queries(store, before, queries, seed=1)
    before.figures["RSS MB"] = f"+{rss_mb() - baseline:.0f}"
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
    after.figures["RSS MB"] = f"+{rss_mb() - baseline:.0f}"
    store.close()
    started = time.perf_counter()
    store = EdgeVectorStore.open(directory, dense_dim=DIM, dense_model=MODEL)
    after.figures["reopen s"] = f"{time.perf_counter() - started:.2f}"
    assert store.count() == n
    store.close()
    return [before, after]


def wait_green(url: str, collection: str) -> float:
    """Seconds until the server's optimizer has finished with ``collection`` (status green), polled."""
    client = QdrantClient(url=url, check_compatibility=False, timeout=60)
    started = time.perf_counter()
    try:
        while client.get_collection(collection).status != models.CollectionStatus.GREEN:
            time.sleep(0.2)  # polling the server's own status
    finally:
        client.close()
    return time.perf_counter() - started


def server_binary() -> Path:
    binary = qdrant_binary()
    if binary is None:
        raise SystemExit(
            "no Qdrant server binary: build it with scripts/build-qdrant-server.sh (or set IDED_QDRANT_BIN)"
        )
    return binary


def bench_server(root: Path, n: int, queries: int, team: int, team_seconds: float) -> list[Run]:
    run = Run("server", n)
    with running_qdrant(server_binary(), root / f"server-{n}") as server:
        assert server.url is not None and server.pid is not None and server.storage is not None
        store = QdrantClientStore.open_server(server.url, "bench", api_key=None, dense_dim=DIM, dense_model=MODEL)
        build(store, n, run)
        run.figures["optimize s"] = f"{wait_green(server.url, 'bench'):.1f}"
        run.figures["disk MB"] = f"{disk_bytes(server.storage) / 1e6:.0f}"
        measure_queries(store, run, queries, seed=1)
        run.figures["RSS MB"] = f"{rss_mb(server.pid):.0f}"
        assert store.count() == n
        store.close()
        if team:
            for writing in (False, True):
                team_round_server(server.url, n, team, team_seconds, writing=writing, pid=server.pid)
    return [run]


# -- a simulated team -------------------------------------------------------------------------------


def _query_inputs(seed: int, count: int) -> list[tuple[SparseVector, list[float]]]:
    rng = np.random.default_rng(seed)
    return [(sparse_query(rng), [float(x) for x in v]) for v in unit_vectors(rng, count)]


def _search_until(store: VectorStore, seed: int, stop_at: float) -> list[float]:
    inputs = _query_inputs(seed, 200)
    seconds: list[float] = []
    i = 0
    while time.time() < stop_at:
        sp, d = inputs[i % len(inputs)]
        started = time.perf_counter()
        store.query(StoreQuery(sparse=sp, dense=d, limit=K, prefetch_limit=PREFETCH))
        seconds.append(time.perf_counter() - started)
        i += 1
    return seconds


WRITER_BATCHES = 60
"""Batches (of BATCH points) the indexer prepares before a team round; it stops early when they run out."""


def _writer_batches(n: int) -> list[list[StoredPoint]]:
    """New points for the indexer (ids apart from the built store's), made before the round starts."""
    return [
        [
            StoredPoint(id=str(uuid.uuid5(uuid.NAMESPACE_OID, p.id)), chunk=p.chunk, sparse=p.sparse, dense=p.dense)
            for p in batch
        ]
        for batch in batches(WRITER_BATCHES * BATCH, seed=n + 7)
    ]


def _write_until(store: VectorStore, prepared: list[list[StoredPoint]], stop_at: float) -> tuple[int, float]:
    """Upsert the prepared batches until ``stop_at``; points written and seconds spent inside upsert."""
    written, spent = 0, 0.0
    for batch in prepared:
        if time.time() >= stop_at:
            break
        started = time.perf_counter()
        store.upsert(batch)
        spent += time.perf_counter() - started
        written += len(batch)
    return written, spent


def _server_reader(
    url: str, seed: int, start_at: float, stop_at: float, out: multiprocessing.Queue[list[float]]
) -> None:
    store = QdrantClientStore.open_server(url, "bench", api_key=None, dense_dim=DIM, dense_model=MODEL)
    try:
        time.sleep(max(0.0, start_at - time.time()))  # every client starts at the same wall-clock time
        out.put(_search_until(store, seed, stop_at))
    finally:
        store.close()


def _server_writer(
    url: str, n: int, start_at: float, stop_at: float, out: multiprocessing.Queue[tuple[int, float]]
) -> None:
    prepared = _writer_batches(n)
    store = QdrantClientStore.open_server(url, "bench", api_key=None, dense_dim=DIM, dense_model=MODEL)
    try:
        time.sleep(max(0.0, start_at - time.time()))
        out.put(_write_until(store, prepared, stop_at))
    finally:
        store.close()


def report_team(
    label: str,
    clients: int,
    seconds: float,
    latencies: list[list[float]],
    writes: tuple[int, float] | None,
    extra: str = "",
) -> None:
    every = [x for per_client in latencies for x in per_client]
    line = (
        f"team {label}: {clients} clients, {seconds:.0f} s, {'with' if writes else 'no'} indexer: "
        f"{len(every) / seconds:,.0f} queries/s in all, hybrid p50 {percentile(every, 50) * 1000:.1f} ms, "
        f"p95 {percentile(every, 95) * 1000:.1f} ms"
    )
    if writes:
        written, spent = writes
        line += (
            f"; indexer wrote {written:,} points, {written / max(spent, 1e-9):,.0f} points/s inside upsert "
            f"({spent:.1f} s of the round)"
        )
    print(line + extra, flush=True)


def team_round_server(url: str, n: int, clients: int, seconds: float, *, writing: bool, pid: int) -> None:
    ctx = multiprocessing.get_context("spawn")
    lat_q: multiprocessing.Queue[list[float]] = ctx.Queue()
    write_q: multiprocessing.Queue[tuple[int, float]] = ctx.Queue()
    start_at = time.time() + 15.0  # the spawned interpreters import and the indexer prepares its batches first
    stop_at = start_at + seconds
    procs = [ctx.Process(target=_server_reader, args=(url, 100 + c, start_at, stop_at, lat_q)) for c in range(clients)]
    if writing:
        procs.append(ctx.Process(target=_server_writer, args=(url, n, start_at, stop_at, write_q)))
    for proc in procs:
        proc.start()
    latencies = [lat_q.get() for _ in range(clients)]
    writes = write_q.get() if writing else None
    for proc in procs:
        proc.join()
    report_team("server", clients, seconds, latencies, writes, extra=f"; server RSS {rss_mb(pid):.0f} MB")


def team_round_edge(store: EdgeVectorStore, n: int, clients: int, seconds: float, *, writing: bool) -> None:
    prepared = _writer_batches(n) if writing else []
    stop_at = time.time() + seconds
    latencies: list[list[float]] = [[] for _ in range(clients)]
    writes: list[tuple[int, float]] = []

    def reader(c: int) -> None:
        latencies[c] = _search_until(store, 100 + c, stop_at)

    def writer() -> None:
        writes.append(_write_until(store, prepared, stop_at))

    threads = [threading.Thread(target=reader, args=(c,)) for c in range(clients)]
    if writing:
        threads.append(threading.Thread(target=writer))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    report_team("edge (threads of one process)", clients, seconds, latencies, writes[0] if writes else None)


def bench_edge_team(root: Path, n: int, clients: int, seconds: float) -> None:
    """The team rounds on the Edge store bench_edge built (optimized)."""
    store = EdgeVectorStore.open(root / f"edge-{n}" / "shard", dense_dim=DIM, dense_model=MODEL)
    try:
        for writing in (False, True):
            team_round_edge(store, n, clients, seconds, writing=writing)
    finally:
        store.close()


# -- several workspaces on one server ---------------------------------------------------------------


def bench_tenancy(root: Path, workspaces: int, points: int, queries: int) -> None:
    """K collections against one collection with a tenant key, each on a fresh server."""
    for layout in ("collections", "tenant-key"):
        with running_qdrant(server_binary(), root / f"tenancy-{layout}") as server:
            assert server.url is not None and server.pid is not None and server.storage is not None
            idle = rss_mb(server.pid)
            client = QdrantClient(url=server.url, check_compatibility=False, timeout=120)
            started = time.perf_counter()
            if layout == "tenant-key":
                _create_tenant_collection(client)
            for t in range(workspaces):
                name = "shared" if layout == "tenant-key" else f"ws{t}"
                if layout == "collections":
                    QdrantClientStore.open_server(
                        server.url, name, api_key=None, dense_dim=DIM, dense_model=MODEL
                    ).close()
                for batch in batches(points, seed=1000 + t):
                    client.upsert(name, points=[_tenant_point(p, t, layout) for p in batch], wait=True)
            names = ["shared"] if layout == "tenant-key" else [f"ws{t}" for t in range(workspaces)]
            for name in names:
                wait_green(server.url, name)
            load = time.perf_counter() - started
            seconds: list[float] = []
            for sp, d in _query_inputs(5, queries):
                t = len(seconds) % workspaces
                name = "shared" if layout == "tenant-key" else f"ws{t}"
                flt = (
                    models.Filter(must=[models.FieldCondition(key="tenant", match=models.MatchValue(value=f"ws{t}"))])
                    if layout == "tenant-key"
                    else None
                )
                requests = [
                    models.QueryRequest(
                        query=models.SparseVector(indices=sp.indices, values=sp.values),
                        using="lexical",
                        filter=flt,
                        limit=PREFETCH,
                    ),
                    models.QueryRequest(query=d, using="dense", filter=flt, limit=PREFETCH),
                ]
                begun = time.perf_counter()
                client.query_batch_points(name, requests=requests)
                seconds.append(time.perf_counter() - begun)
            client.close()
            print(
                f"tenancy {layout}: {workspaces} workspaces x {points:,} points: load {load:.0f} s, "
                f"server RSS {rss_mb(server.pid):.0f} MB (idle {idle:.0f}), "
                f"disk {disk_bytes(server.storage) / 1e6:.0f} MB, "
                f"hybrid p50 {percentile(seconds, 50) * 1000:.1f} ms p95 {percentile(seconds, 95) * 1000:.1f} ms",
                flush=True,
            )


def _create_tenant_collection(client: QdrantClient) -> None:
    client.create_collection(
        "shared",
        vectors_config={"dense": models.VectorParams(size=DIM, distance=models.Distance.COSINE)},
        sparse_vectors_config={"lexical": models.SparseVectorParams(modifier=models.Modifier.IDF)},
    )
    client.create_payload_index(
        "shared",
        "tenant",
        field_schema=models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True),
        wait=True,
    )
    for key in ("path", "kind", "language"):
        client.create_payload_index("shared", key, field_schema=models.PayloadSchemaType.KEYWORD, wait=True)
    client.create_payload_index("shared", "embedded", field_schema=models.PayloadSchemaType.INTEGER, wait=True)


def _tenant_point(p: StoredPoint, tenant: int, layout: str) -> models.PointStruct:
    payload: dict[str, object] = {
        "path": p.chunk.path,
        "kind": p.chunk.kind.value,
        "language": p.chunk.language,
        "embedded": 1,
        "chunk": p.chunk.model_dump_json(exclude_defaults=True),
    }
    point_id = p.id
    if layout == "tenant-key":
        payload["tenant"] = f"ws{tenant}"
        point_id = str(uuid.uuid5(uuid.NAMESPACE_OID, f"{tenant}:{p.id}"))
    vector: dict[str, models.Vector] = {
        "lexical": models.SparseVector(indices=p.sparse.indices, values=p.sparse.values)
    }
    if p.dense is not None:
        vector["dense"] = p.dense
    return models.PointStruct(id=point_id, vector=vector, payload=payload)


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
    keys = ["build pts/s", "flush s", "optimize s", "reopen s", "disk MB", "RSS MB"]
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
    parser.add_argument("--stores", nargs="+", default=["edge", "server", "local"], choices=["edge", "server", "local"])
    parser.add_argument("--team", type=int, default=0, help="clients of the simulated team (0: no team rounds)")
    parser.add_argument("--team-seconds", type=float, default=20.0, help="length of each team round")
    parser.add_argument("--tenancy", type=int, default=0, help="workspaces sharing one server (0: skip)")
    parser.add_argument("--tenancy-points", type=int, default=5_000, help="points per workspace in --tenancy")
    parser.add_argument("--dir", type=Path, default=None, help="work directory (default: a temporary one)")
    args = parser.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="ided-bench-store-"))
    runs: list[Run] = []
    try:
        for n in args.n:
            team = args.team if n == max(args.n) else 0
            if "edge" in args.stores:
                runs += bench_edge(root, n, args.queries)
                print(f"edge {n}: done", flush=True)
                if team:
                    bench_edge_team(root, n, team, args.team_seconds)
            if "server" in args.stores:
                runs += bench_server(root, n, args.queries, team, args.team_seconds)
                print(f"server {n}: done", flush=True)
            if "local" in args.stores:
                if n > args.local_max:
                    print(f"qdrant-local {n}: skipped (above --local-max {args.local_max})", flush=True)
                    continue
                runs += bench_local(root, n, args.queries)
                print(f"qdrant-local {n}: done", flush=True)
        if args.tenancy:
            bench_tenancy(root, args.tenancy, args.tenancy_points, args.queries)
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
