"""The real embedding worker's memory and speed: ``EmbeddingProcess`` driven as the daemon drives it.

Chunks every source file under ``--source`` with ided's chunker, starts the worker process with the
default embedding settings, sends the chunks in slices of 64 (as the daemon's fill does) and prints
the chunks/s and the worker's peak and current RSS (``VmHWM``, ``VmRSS`` from ``/proc``) before it is
closed. Compare code versions by running this file with each checkout first on ``PYTHONPATH``,
interleaved:

    PYTHONPATH=<checkout> python bench/embed_worker.py --source …/requests-2.32.3/src --label before
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from daemon.config import EmbeddingConfig, default_cache_root
from daemon.core.languages import language_for_path
from daemon.core.models import Chunk
from daemon.index.embed_process import EmbeddingProcess
from daemon.intel.chunking import chunk_source

SLICE = 64


def _chunks(source: Path) -> list[Chunk]:
    chunks: list[Chunk] = []
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source).as_posix()
        language = language_for_path(rel)
        if path.is_file() and language is not None:
            chunks += chunk_source(rel, path.read_bytes(), language)
    return chunks


def _status_mib(pid: int) -> dict[str, int]:
    rows = (line.split() for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return {row[0].rstrip(":"): int(row[1]) // 1024 for row in rows if row and row[0] in ("VmHWM:", "VmRSS:")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--label", default="worker")
    args = parser.parse_args()
    chunks = _chunks(args.source)
    worker = EmbeddingProcess(EmbeddingConfig(), default_cache_root())
    try:
        started = time.perf_counter()
        for start in range(0, len(chunks), SLICE):
            worker.embed_documents(chunks[start : start + SLICE])
        seconds = time.perf_counter() - started
        assert worker.pid is not None
        mib = _status_mib(worker.pid)
    finally:
        worker.close()
    print(
        f"{args.label}: {len(chunks)} chunks, {len(chunks) / seconds:.0f} chunks/s, "
        f"worker peak {mib['VmHWM']} MiB, RSS {mib['VmRSS']} MiB"
    )


if __name__ == "__main__":
    main()
