"""Benchmark: bare Tree-sitter parse vs read + parse + chunk, per language, on one core.

Default corpus: the venv's site-packages (``.py`` and any other indexed code/Markdown found there),
plus ``/usr/lib/node_modules`` and ``/usr/local/go/src`` when present. Run::

    uv run --frozen python bench/chunking.py [--root DIR ...] [--limit N] [--repeat R]

``--limit`` caps the files per language (sorted by path, so runs are comparable). Sources are
read once up front for the bare parse and the in-memory chunk; the ``read+chunk`` column also
reads every file from disk (page cache warm) as the indexer does. Times are CPU seconds of the
process (``time.process_time``, single thread), the best of ``--repeat`` interleaved passes.
``ratio`` = chunk files/s / parse files/s (target: >= 0.70).
"""

from __future__ import annotations

import argparse
import os
import sysconfig
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from daemon.core.languages import CODE_LANGUAGES, language_for_path
from daemon.intel.chunking import chunk_source
from daemon.intel.parsers import get_parser

__all__ = ["main"]

_BENCH_LANGUAGES = CODE_LANGUAGES | {"markdown"}
_SKIP_DIRS = frozenset({".git", "__pycache__", "testdata"})
_MAX_BYTES = 1_000_000


@dataclass(slots=True)
class Corpus:
    language: str
    paths: list[Path]
    sources: list[bytes]

    @property
    def size(self) -> int:
        return sum(len(s) for s in self.sources)


def default_roots() -> list[Path]:
    roots = [Path(sysconfig.get_paths()["purelib"]), Path("/usr/lib/node_modules"), Path("/usr/local/go/src")]
    return [root for root in roots if root.is_dir()]


def collect(roots: Iterable[Path], limit: int) -> dict[str, Corpus]:
    found: dict[str, list[Path]] = {}
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
            for name in sorted(files):
                language = language_for_path(name)
                if language in _BENCH_LANGUAGES:
                    found.setdefault(language, []).append(Path(folder) / name)
    corpora: dict[str, Corpus] = {}
    for language, paths in sorted(found.items()):
        kept: list[Path] = []
        sources: list[bytes] = []
        for path in paths:
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if 0 < len(data) <= _MAX_BYTES:
                kept.append(path)
                sources.append(data)
            if len(kept) >= limit:
                break
        if kept:
            corpora[language] = Corpus(language, kept, sources)
    return corpora


def timed(run: Callable[[], int]) -> tuple[float, int]:
    """CPU seconds of this process (robust to other load on a shared machine) and the result."""
    start = time.process_time()
    count = run()
    return time.process_time() - start, count


def measure(corpus: Corpus, repeat: int) -> dict[str, float]:
    parser = get_parser(corpus.language)
    language = corpus.language

    def bare() -> int:
        for source in corpus.sources:
            parser.parse(source)
        return 0

    def chunk() -> int:
        return sum(len(chunk_source(str(p), s, language)) for p, s in zip(corpus.paths, corpus.sources, strict=True))

    def read_chunk() -> int:
        return sum(len(chunk_source(str(p), p.read_bytes(), language)) for p in corpus.paths)

    t_parse = t_chunk = t_read = float("inf")
    chunks = 0
    for _ in range(repeat):  # interleaved, so drifts in machine load hit every column alike
        t_parse = min(t_parse, timed(bare)[0])
        elapsed, chunks = timed(chunk)
        t_chunk = min(t_chunk, elapsed)
        t_read = min(t_read, timed(read_chunk)[0])
    files = len(corpus.sources)
    megabytes = corpus.size / 1e6
    return {
        "files": files,
        "mb": megabytes,
        "parse_fps": files / t_parse,
        "parse_mbs": megabytes / t_parse,
        "chunk_fps": files / t_chunk,
        "chunk_mbs": megabytes / t_chunk,
        "chunks_ps": chunks / t_chunk,
        "read_fps": files / t_read,
        "chunks": chunks,
        "ratio": t_parse / t_chunk,
        "read_ratio": t_parse / t_read,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument("--root", action="append", type=Path, help="corpus root (repeatable)")
    parser.add_argument("--limit", type=int, default=500, help="files per language")
    parser.add_argument("--repeat", type=int, default=2, help="passes per measurement; the best counts")
    args = parser.parse_args(argv)
    roots: list[Path] = args.root or default_roots()
    corpora = collect(roots, args.limit)
    header = (
        f"{'language':<11}{'files':>6}{'MB':>7} | {'parse f/s':>9}{'MB/s':>7} | "
        f"{'chunk f/s':>9}{'MB/s':>7}{'chunks/s':>9}{'chunks':>8} | {'read+chunk f/s':>14} | {'ratio':>5}{'w/read':>7}"
    )
    print("roots:", ", ".join(str(r) for r in roots))
    print(header)
    print("-" * len(header))
    for language, corpus in corpora.items():
        m = measure(corpus, args.repeat)
        print(
            f"{language:<11}{m['files']:>6.0f}{m['mb']:>7.2f} | {m['parse_fps']:>9.0f}{m['parse_mbs']:>7.2f} | "
            f"{m['chunk_fps']:>9.0f}{m['chunk_mbs']:>7.2f}{m['chunks_ps']:>9.0f}{m['chunks']:>8.0f} | "
            f"{m['read_fps']:>14.0f} | {m['ratio']:>5.2f}{m['read_ratio']:>7.2f}"
        )


if __name__ == "__main__":
    main()
