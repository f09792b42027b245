"""Per-file work of an index pass: read, check, chunk and lexically encode.

Pure and picklable so it runs inline for small passes or in worker processes for large ones
(parsing is CPU-bound; the pool uses both cores while the parent writes to the store).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from daemon.core.models import Chunk, SkipReason, chunk_point_id
from daemon.core.ports import SparseVector
from daemon.index.file_reader import read_file
from daemon.index.sparse import CodeBm25Encoder
from daemon.intel.chunking import chunk_source

__all__ = ["FileJob", "FileOutcome", "ParsedPoint", "WorkerSettings", "process_batch"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    max_file_bytes: int
    max_chunk_lines: int
    text_window_lines: int


@dataclass(frozen=True, slots=True)
class FileJob:
    rel_path: str
    abs_path: str
    size: int
    mtime_ns: int
    language: str
    known_hash: str | None  # the manifest's hash: equal content is not re-chunked


@dataclass(frozen=True, slots=True)
class ParsedPoint:
    id: str
    chunk: Chunk
    sparse: SparseVector


@dataclass(frozen=True, slots=True)
class FileOutcome:
    job: FileJob
    skipped: SkipReason | None = None
    hash: str | None = None
    unchanged: bool = False
    points: tuple[ParsedPoint, ...] = ()
    bytes_parsed: int = 0


@cache
def _encoder() -> CodeBm25Encoder:
    return CodeBm25Encoder()


def _process(job: FileJob, settings: WorkerSettings) -> FileOutcome:
    content = read_file(Path(job.abs_path), settings.max_file_bytes)
    if isinstance(content, SkipReason):
        return FileOutcome(job=job, skipped=content)
    if content.hash == job.known_hash:
        return FileOutcome(job=job, hash=content.hash, unchanged=True)
    try:
        chunks = chunk_source(
            job.rel_path,
            content.data,
            job.language,
            max_chunk_lines=settings.max_chunk_lines,
            text_window_lines=settings.text_window_lines,
        )
    except Exception:  # a grammar bug must cost one file, never the pass
        logger.exception("chunking failed for %s", job.rel_path)
        return FileOutcome(job=job, skipped=SkipReason.PARSE_ERROR)
    encoder = _encoder()
    points = tuple(
        ParsedPoint(id=chunk_point_id(job.rel_path, i, c.chunk_hash), chunk=c, sparse=encoder.encode_document(c))
        for i, c in enumerate(chunks)
    )
    return FileOutcome(job=job, hash=content.hash, points=points, bytes_parsed=len(content.data))


def process_batch(jobs: list[FileJob], settings: WorkerSettings) -> list[FileOutcome]:
    """Process a batch of files; one file's failure never affects the others."""
    return [_process(job, settings) for job in jobs]
