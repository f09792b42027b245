"""Index benchmark on a real corpus (default: the venv's site-packages).

Prints: bare Tree-sitter parse speed (1 and 2 processes), the per-file worker pipeline (read +
parse + chunk + BM25 + encode) on one process, a full lexical index pass (scan + parse + chunk +
BM25 + store) in files/s and MB/s with its ratio to bare parsing and the CPU seconds the writer
(the process that owns the store) spent, a no-change re-index, a re-index after touching every file
(same content), dense embedding chunks/s on a sample (``--embed-sample 0`` skips the dense part),
lexical and hybrid query latency p50/p95 and the index size on disk.

The CPU figures matter on a shared machine: wall time there depends on what else runs, while the
writer's CPU per file and the one-process worker rate bound the pass on an idle one
(``ideal 2-core pass`` = 2 cores / (worker CPU per file + writer CPU per file)).

    uv run --frozen python bench/index.py --limit 10000

(``bench/index.py`` is the entry point: it imports this module inside ``main`` so that the pool's
forkserver workers, which re-run the main script's top level, start as light as under ``ided``.)
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import sysconfig
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from daemon.config import Config, load_config
from daemon.core.languages import language_for_path
from daemon.core.models import SearchMode
from daemon.core.ports import DenseEmbedder
from daemon.index.file_worker import FileJob, WorkerSettings, process_batch
from daemon.index.workspace_index import WorkspaceIndex
from daemon.intel.parsers import parse

TREE_SITTER_LANGUAGES = {"python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp", "markdown"}


def collect(root: Path, limit: int, max_bytes: int) -> list[tuple[Path, str]]:
    found: list[tuple[Path, str]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in {"__pycache__", ".git", "node_modules"})
        for name in sorted(filenames):
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            language = language_for_path(rel)
            if language not in TREE_SITTER_LANGUAGES:
                continue
            try:
                if path.is_symlink() or path.stat().st_size > max_bytes:
                    continue
                path.read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            found.append((path, language))
            if len(found) >= limit:
                return found
    return found


def _parse_all(items: list[tuple[str, str]]) -> int:
    total = 0
    for path, language in items:
        data = Path(path).read_bytes()
        parse(language, data)
        total += len(data)
    return total


def bare_parse(files: list[tuple[Path, str]], processes: int) -> float:
    items = [(str(p), lang) for p, lang in files]
    started = time.perf_counter()
    if processes == 1:
        _parse_all(items)
    else:
        shards = [items[i::processes] for i in range(processes)]
        with ProcessPoolExecutor(processes) as pool:
            list(pool.map(_parse_all, shards))
    return time.perf_counter() - started


def worker_pipeline(files: list[tuple[Path, str]], root: Path, config: Config) -> float:
    """CPU seconds for one process to read, chunk and encode every file (what a pool worker does)."""
    settings = WorkerSettings(
        max_file_bytes=config.index.max_file_bytes,
        max_chunk_lines=config.index.max_chunk_lines,
        text_window_lines=config.index.text_window_lines,
    )
    jobs = [FileJob(str(p.relative_to(root)), str(p), p.stat().st_size, 0, lang, None) for p, lang in files]
    started = time.process_time()
    for i in range(0, len(jobs), 48):
        process_batch(jobs[i : i + 48], settings)
    return time.process_time() - started


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def row(label: str, value: str, bound: str = "") -> None:
    print(f"{label:<44} {value:<28} {bound}")


def make_config(workspace: Path, state: Path, *, embed: bool, mode: str) -> Config:
    return load_config(
        workspace,
        env={"HOME": str(state / "home")},
        overrides={"state_dir": str(state), "embedding": {"enabled": embed}, "qdrant": {"mode": mode}},
    )


def time_queries(ws: WorkspaceIndex, queries: list[str], mode: SearchMode) -> list[float]:
    ws.search(queries[0], k=10, mode=mode)  # warm
    out: list[float] = []
    for q in queries:
        started = time.perf_counter()
        ws.search(q, k=10, mode=mode)
        out.append((time.perf_counter() - started) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    parser.add_argument("--limit", type=int, default=5000, help="files to index")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--embed-sample", type=int, default=256, help="chunks to embed for the dense figures")
    parser.add_argument("--store", choices=["edge", "local"], default="edge")
    args = parser.parse_args()

    files = collect(args.root, args.limit, 1_000_000)
    total_bytes = sum(p.stat().st_size for p, _ in files)
    tmp = Path(tempfile.mkdtemp(prefix="ided-bench-"))
    workspace = tmp / "ws"
    for path, _ in files:
        dest = workspace / path.relative_to(args.root)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest)
    copied = [(workspace / p.relative_to(args.root), lang) for p, lang in files]
    mb = total_bytes / 1e6
    print(f"corpus: {len(files)} files, {mb:.1f} MB from {args.root}; store={args.store}; cores={os.cpu_count()}")
    print()

    t1 = bare_parse(copied, 1)
    t2 = bare_parse(copied, 2)
    row("bare tree-sitter parse, 1 process", f"{len(files) / t1:,.0f} files/s {mb / t1:.1f} MB/s")
    row("bare tree-sitter parse, 2 processes", f"{len(files) / t2:,.0f} files/s {mb / t2:.1f} MB/s")

    state = tmp / "state"
    config = make_config(workspace, state, embed=False, mode=args.store)
    worker_pipeline(copied[:50], workspace, config)  # warm: grammars, caches
    t_worker = worker_pipeline(copied, workspace, config)
    worker_ms = t_worker * 1000 / len(files)
    row(
        "worker pipeline, 1 process (CPU time)",
        f"{len(files) / t_worker:,.0f} files/s {mb / t_worker:.1f} MB/s",
        f"{worker_ms:.2f} ms/file read+chunk+BM25+encode",
    )
    with WorkspaceIndex.open(config) as ws:
        cpu_started = time.process_time()
        started = time.perf_counter()
        report = ws.index()
        t_index = time.perf_counter() - started
        writer_cpu = time.process_time() - cpu_started
        chunks = ws.status().chunks
        writer_ms = writer_cpu * 1000 / max(1, report.files_indexed)
        row(
            "full lexical index (scan..store)",
            f"{report.files_indexed / t_index:,.0f} files/s {mb / t_index:.1f} MB/s",
            f"{t_index:.1f} s, {chunks:,} chunks, {chunks / t_index:,.0f} chunks/s",
        )
        row("  writer CPU (scan, store, manifest)", f"{writer_cpu:.2f} s", f"{writer_ms:.2f} ms/file")
        ideal = 2 / ((worker_ms + writer_ms) / 1000)
        row("  ideal 2-core pass", f"{ideal:,.0f} files/s", f"{10_000 / ideal:.1f} s per 10k files")
        row("  ratio to bare parse (2 processes)", f"{t2 / t_index:.0%}", "target >= 70%")
        row(
            "  10,000 files would take",
            f"{t_index * 10_000 / max(1, report.files_indexed):.1f} s",
            f"target <= 15 s ({report.files_indexed:,} of {len(files):,} files indexed, the rest skipped)",
        )
        started = time.perf_counter()
        again = ws.index()
        t_noop = time.perf_counter() - started
        per_10k = t_noop * 10_000 / len(files)
        row("re-index, nothing changed", f"{t_noop:.2f} s", f"{per_10k:.2f} s per 10k files (target <= 1 s)")
        assert again.files_indexed == 0
        for path, _ in copied:
            os.utime(path)
        started = time.perf_counter()
        ws.index()
        t_touch = time.perf_counter() - started
        row("re-index, every file touched (same bytes)", f"{t_touch:.2f} s", "content hash path, no re-chunking")

        rng = random.Random(7)
        sample = ws.search("def return self", k=200, mode=SearchMode.LEXICAL).hits
        names = [h.chunk.name for h in sample if h.chunk.name]
        queries = [rng.choice(names) for _ in range(args.queries)] if names else ["parse"] * args.queries
        lex = time_queries(ws, queries, SearchMode.LEXICAL)
        row(
            f"lexical query at {chunks:,} chunks",
            f"p50 {percentile(lex, 50):.1f} ms p95 {percentile(lex, 95):.1f} ms",
        )
    size_lexical = du(state)

    with WorkspaceIndex.open(make_config(workspace, state, embed=True, mode=args.store)) as ws:
        embedder = ws.dense_embedder() if args.embed_sample > 0 else None
        if args.embed_sample <= 0:
            row("dense embedding", "skipped (--embed-sample 0)")
        elif embedder is None:
            row("dense embedding", "unavailable", ws.status().dense_unavailable_reason or "")
        else:
            started = time.perf_counter()
            n = ws.embed(limit=args.embed_sample)
            t_embed = time.perf_counter() - started
            row("dense embedding (sample)", f"{n / t_embed:,.1f} chunks/s", f"{n} chunks in {t_embed:.1f} s")
            row("  whole corpus would take", f"{chunks / (n / t_embed) / 60:,.1f} min")
            hyb = time_queries(ws, queries, SearchMode.HYBRID)
            frac = ws.status().embedded_fraction
            row(
                f"hybrid query at {chunks:,} chunks ({frac:.1%} embedded)",
                f"p50 {percentile(hyb, 50):.1f} ms p95 {percentile(hyb, 95):.1f} ms",
                "target p50 <= 30 ms at 100k",
            )
            row("  of which query embedding", f"{statistics.median(_embed_times(embedder, queries)):.1f} ms median")
    row("index size on disk", f"{du(state) / 1e6:.1f} MB", f"lexical only {size_lexical / 1e6:.1f} MB")
    shutil.rmtree(tmp, ignore_errors=True)


def _embed_times(embedder: DenseEmbedder, queries: list[str]) -> list[float]:
    out: list[float] = []
    for q in queries[:20]:
        started = time.perf_counter()
        embedder.embed_query(q)
        out.append((time.perf_counter() - started) * 1000)
    return out


if __name__ == "__main__":
    sys.exit(main())
