"""Per-file work of an index pass: read, check, chunk, lexically encode and serialize.

Pure and picklable so it runs inline for small passes or in worker processes for large ones
(parsing is CPU-bound; the pool uses both cores while the parent writes to the store). Everything
per chunk that does not need the store happens here, in the workers: the point id, the chunk hash,
the BM25 vector and the payload JSON (see ``daemon.index.encoded_chunks``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from daemon.core.models import Chunk, SkipReason, chunk_point_id
from daemon.index._payload import chunk_json
from daemon.index.encoded_chunks import EncodedChunks
from daemon.index.file_reader import read_file
from daemon.index.sparse import CodeBm25Encoder
from daemon.intel.chunking import chunk_source

__all__ = ["FileJob", "FileOutcome", "WorkerSettings", "encode_chunks", "process_batch"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WorkerSettings:
    max_file_bytes: int
    max_chunk_lines: int
    text_window_lines: int
    include_secrets: bool = False
    """Index files whose content holds credentials (``index.include_secrets``)."""
    root_device: int | None = None
    """The workspace root's ``st_dev``: a file read on another file system is skipped (None: not checked)."""


@dataclass(frozen=True, slots=True)
class FileJob:
    rel_path: str
    abs_path: str
    size: int
    mtime_ns: int
    language: str
    known_hash: str | None  # the manifest's hash: equal content is not re-chunked


@dataclass(frozen=True, slots=True)
class FileOutcome:
    job: FileJob
    skipped: SkipReason | None = None
    hash: str | None = None
    unchanged: bool = False
    points: EncodedChunks | None = None
    bytes_parsed: int = 0

    @property
    def chunk_count(self) -> int:
        return 0 if self.points is None else len(self.points)


@cache
def _encoder() -> CodeBm25Encoder:
    return CodeBm25Encoder()


def _process(job: FileJob, settings: WorkerSettings) -> FileOutcome:
    content = read_file(
        Path(job.abs_path),
        settings.max_file_bytes,
        include_secrets=settings.include_secrets,
        root_device=settings.root_device,
    )
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
    return FileOutcome(
        job=job, hash=content.hash, points=encode_chunks(job.rel_path, chunks), bytes_parsed=len(content.data)
    )


def encode_chunks(path: str, chunks: list[Chunk]) -> EncodedChunks:
    """Point ids, hashes, BM25 vectors and payload JSON of one file's chunks."""
    encoder = _encoder()
    hashes = tuple(c.chunk_hash for c in chunks)
    vectors = [encoder.encode_document(c) for c in chunks]
    return EncodedChunks(
        path=path,
        ids=tuple(chunk_point_id(path, i, h) for i, h in enumerate(hashes)),
        hashes=hashes,
        kinds=tuple(c.kind.value for c in chunks),
        languages=tuple(c.language for c in chunks),
        chunk_json=tuple(chunk_json(c) for c in chunks),
        sparse_indices=tuple(v.indices for v in vectors),
        sparse_values=tuple(v.values for v in vectors),
    )


def process_batch(jobs: list[FileJob], settings: WorkerSettings) -> list[FileOutcome]:
    """Process a batch of files; one file's failure never affects the others."""
    return [_process(job, settings) for job in jobs]
