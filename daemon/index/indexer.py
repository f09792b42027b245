"""Incremental index passes: scan, diff against the manifest, re-chunk what changed, write.

Guarantees:
- only files whose (size, mtime) or content changed are read and re-chunked; unchanged chunks
  of a changed file keep their dense vectors (looked up by chunk hash), so nothing unchanged is
  ever re-embedded;
- a file's manifest row is written only after the store acknowledged its points (an
  acknowledged write is durable: Qdrant Edge's WAL, a server's ``wait=True``), and point ids are
  deterministic, so a pass killed at any moment leaves a store the next pass repairs
  (:meth:`Indexer.repair`) without a full rebuild and without duplicates.

Throughput: parsing, chunking, BM25 and payload serialization run in worker processes; this
process (the single store writer) only turns their compact output into engine points
(:mod:`daemon.index.encoded_chunks`). Store flushes (segments to disk; they shorten the WAL
replay of the next open) are rarer than manifest commits: every Edge call holds the GIL, so a
flush stalls the pool's result thread, and commits do not need one.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from daemon.core.models import IndexReport
from daemon.core.ports import VectorStore
from daemon.index.encoded_chunks import EncodedChunks, write_encoded
from daemon.index.file_worker import FileJob, FileOutcome, WorkerSettings, process_batch
from daemon.index.manifest import FileRecord, Manifest
from daemon.index.scanner import Scanner, ScanResult
from daemon.index.worker_pool import WorkerPool

__all__ = ["IndexProgress", "Indexer"]

logger = logging.getLogger(__name__)

IndexProgress = Callable[[str, int, int], None]
"""progress(phase, done, total): phase is "scan", "parse" or "write"."""

_BATCH_FILES = 48
_FLUSH_EVERY_FILES = 2000
"""Files between commits: the manifest records the files written since the last one."""
_STORE_FLUSH_EVERY_FILES = 20_000
"""Files between store flushes within a pass (the pass always ends with one)."""
_POOL_THRESHOLD_FILES = 200


def _no_progress(phase: str, done: int, total: int) -> None:
    return None


def _nothing() -> None:
    return None


@dataclass(slots=True)
class _Pending:
    """Outcomes written to the store but not yet flushed/recorded in the manifest."""

    records: list[FileRecord]
    removed: list[str]

    @classmethod
    def empty(cls) -> _Pending:
        return cls(records=[], removed=[])


class Indexer:
    """Runs index passes for one workspace over one store and one manifest."""

    def __init__(
        self,
        *,
        scanner: Scanner,
        store: VectorStore,
        manifest: Manifest,
        settings: WorkerSettings,
        workers: int | None = None,
        before_write: Callable[[], None] | None = None,
    ) -> None:
        """``before_write`` runs before each batch is written (the free-space check: it raises to stop the pass)."""
        self._scanner = scanner
        self._store = store
        self._manifest = manifest
        self._settings = settings
        self._before_write = before_write or _nothing
        self._workers = workers if workers is not None else max(1, min(os.cpu_count() or 1, 4))

    # -- repair -------------------------------------------------------------------------------

    def repair(self) -> list[str]:
        """Make the manifest and the store agree after a crash; returns the paths purged."""
        bad = self._manifest.reconcile(self._store.counts_by_path())
        if bad:
            logger.warning("repairing %d file(s) left inconsistent by an interrupted pass", len(bad))
            self._store.delete_paths(bad)
            self._store.flush()
        return bad

    # -- full pass ----------------------------------------------------------------------------

    def run(self, progress: IndexProgress = _no_progress) -> IndexReport:
        with WorkerPool(self._workers) as pool:
            return self._run(pool, progress)

    def _run(self, pool: WorkerPool, progress: IndexProgress) -> IndexReport:
        started = time.perf_counter()
        self.repair()
        progress("scan", 0, 0)
        # a first index parses every file it finds: once there are enough for the pool, its workers
        # start while the scan goes on
        first = self._workers > 1 and self._manifest.count() == 0
        scan = self._scanner.scan(milestone=(_POOL_THRESHOLD_FILES, pool.start) if first else None)
        progress("scan", scan.seen, scan.seen)
        report = IndexReport(files_seen=scan.seen)
        _count_skips(report, scan)
        known = self._manifest.all()
        jobs: list[FileJob] = []
        for f in scan.files:
            rec = known.get(f.rel_path)
            if rec is not None and rec.size == f.size and rec.mtime_ns == f.mtime_ns:
                report.files_unchanged += 1
                continue
            jobs.append(FileJob(f.rel_path, str(f.abs_path), f.size, f.mtime_ns, f.language, rec.hash if rec else None))
        present = {f.rel_path for f in scan.files}
        vanished = [p for p in known if p not in present]
        if vanished:
            self._store.delete_paths(vanished)
            self._store.flush()
            self._manifest.delete_many(vanished)
            report.files_removed = len(vanished)
        self._process(jobs, known, report, progress, pool)
        report.seconds = time.perf_counter() - started
        self._manifest.set_meta(
            {"last_update": datetime.now(UTC).isoformat(timespec="seconds"), "last_report": report.model_dump_json()}
        )
        logger.info(
            "indexed %d file(s), %d unchanged, %d removed, %d skipped in %.2fs",
            report.files_indexed,
            report.files_unchanged,
            report.files_removed,
            sum(report.skipped.values()),
            report.seconds,
        )
        return report

    # -- targeted pass (watcher) ---------------------------------------------------------------

    def update_paths(self, rel_paths: Iterable[str]) -> IndexReport:
        """Re-index just these paths (created, changed or deleted); used for file-save events.

        A path that is a directory stands for its whole subtree: its files are (re-)indexed and
        recorded files under it that are gone are removed, as when it was deleted or moved away.
        """
        started = time.perf_counter()
        report = IndexReport()
        jobs: dict[str, FileJob] = {}
        gone: set[str] = set()
        for rel in sorted(set(rel_paths)):
            abs_path = self._scanner.root / rel
            if abs_path.is_dir() and not abs_path.is_symlink():
                self._collect_dir(rel, report, jobs, gone)
                continue
            report.files_seen += 1
            reason = self._scanner.check_path(rel)
            rec = self._manifest.get(rel)
            if rec is None and not os.path.lexists(abs_path):
                gone.update(self._manifest.paths_under(rel))  # a deleted or moved-away directory
            if reason is not None or not abs_path.is_file():
                if reason is not None:
                    report.skipped[reason] = report.skipped.get(reason, 0) + 1
                if rec is not None:
                    gone.add(rel)
                continue
            language = self._language_of(rel)
            real = self._scanner.resolved(rel)  # a link's target, checked to lie inside by check_path
            try:
                st = real.stat()
            except OSError:
                if rec is not None:
                    gone.add(rel)
                continue
            jobs[rel] = FileJob(rel, str(real), st.st_size, st.st_mtime_ns, language, rec.hash if rec else None)
        gone.difference_update(jobs)
        if gone:
            removed = sorted(gone)
            self._store.delete_paths(removed)
            self._store.flush()
            self._manifest.delete_many(removed)
            report.files_removed = len(removed)
        ordered = [jobs[p] for p in sorted(jobs)]
        known = {j.rel_path: r for j in ordered if (r := self._manifest.get(j.rel_path)) is not None}
        with WorkerPool(self._workers) as pool:
            self._process(ordered, known, report, _no_progress, pool)
        report.seconds = time.perf_counter() - started
        self._manifest.set_meta({"last_update": datetime.now(UTC).isoformat(timespec="seconds")})
        return report

    def _collect_dir(self, rel_dir: str, report: IndexReport, jobs: dict[str, FileJob], gone: set[str]) -> None:
        """Jobs for the indexable files under ``rel_dir``; recorded files no longer there are ``gone``."""
        scan = self._scanner.scan_dir(rel_dir)
        report.files_seen += scan.seen
        _count_skips(report, scan)
        present: set[str] = set()
        for f in scan.files:
            present.add(f.rel_path)
            rec = self._manifest.get(f.rel_path)
            if rec is not None and rec.size == f.size and rec.mtime_ns == f.mtime_ns:
                report.files_unchanged += 1
                continue
            jobs[f.rel_path] = FileJob(
                f.rel_path, str(f.abs_path), f.size, f.mtime_ns, f.language, rec.hash if rec else None
            )
        gone.update(p for p in self._manifest.paths_under(rel_dir) if p not in present)

    def _language_of(self, rel: str) -> str:
        language = self._scanner.classify(rel)
        assert language is not None  # check_path returned None, so it is classified
        return language

    # -- internals ----------------------------------------------------------------------------

    def _process(
        self,
        jobs: list[FileJob],
        known: dict[str, FileRecord],
        report: IndexReport,
        progress: IndexProgress,
        pool: WorkerPool,
    ) -> None:
        total = len(jobs)
        done = 0
        pending = _Pending.empty()
        since_commit = 0
        since_flush = 0
        progress("parse", 0, total)
        for outcomes in self._outcomes(jobs, pool):
            try:
                self._before_write()
            except BaseException:
                self._commit(pending, flush=True)  # keep what is written: the next pass goes on from there
                raise
            self._write(outcomes, known, report, pending)
            done += len(outcomes)
            since_commit += len(outcomes)
            since_flush += len(outcomes)
            progress("parse", done, total)
            if since_commit >= _FLUSH_EVERY_FILES:
                flush = since_flush >= _STORE_FLUSH_EVERY_FILES
                self._commit(pending, flush=flush)
                pending = _Pending.empty()
                since_commit = 0
                since_flush = 0 if flush else since_flush
        self._commit(pending, flush=True)

    def _outcomes(self, jobs: list[FileJob], pool: WorkerPool) -> Iterator[list[FileOutcome]]:
        batches = [jobs[i : i + _BATCH_FILES] for i in range(0, len(jobs), _BATCH_FILES)]
        if self._workers <= 1 or len(jobs) < _POOL_THRESHOLD_FILES:
            for batch in batches:
                yield process_batch(batch, self._settings)
            return
        yield from pool.map(batches, self._settings)

    def _write(
        self, outcomes: list[FileOutcome], known: dict[str, FileRecord], report: IndexReport, pending: _Pending
    ) -> None:
        changed: list[FileOutcome] = []
        for o in outcomes:
            job = o.job
            if o.skipped is not None:
                report.skipped[o.skipped] = report.skipped.get(o.skipped, 0) + 1
                examples = report.skipped_examples.setdefault(o.skipped, [])
                if len(examples) < 5:
                    examples.append(job.rel_path)
                if job.rel_path in known:
                    pending.removed.append(job.rel_path)
            elif o.unchanged:
                rec = known[job.rel_path]
                pending.records.append(
                    FileRecord(job.rel_path, job.size, job.mtime_ns, rec.hash, rec.language, rec.chunks)
                )
                report.files_unchanged += 1
            else:
                changed.append(o)
        if pending.removed:
            self._store.delete_paths(pending.removed)
        if not changed:
            return
        previously = [o.job.rel_path for o in changed if o.job.rel_path in known]
        reuse = self._store.dense_by_hash(previously) if previously else {}
        if previously:
            self._store.delete_paths(previously)
            report.chunks_deleted += sum(known[p].chunks for p in previously)
        files: list[EncodedChunks] = [o.points for o in changed if o.points is not None and len(o.points)]
        if files:
            write_encoded(self._store, files, reuse)
        for o in changed:
            job = o.job
            assert o.hash is not None
            pending.records.append(
                FileRecord(job.rel_path, job.size, job.mtime_ns, o.hash, job.language, o.chunk_count)
            )
            report.files_indexed += 1
            report.bytes_parsed += o.bytes_parsed
            report.chunks_written += o.chunk_count

    def _commit(self, pending: _Pending, *, flush: bool) -> None:
        """Record ``pending`` in the manifest; the store already holds it durably (see module doc)."""
        if flush:
            self._store.flush()
        if pending.removed:
            self._manifest.delete_many(pending.removed)
        if pending.records:
            self._manifest.put_many(pending.records)


def _count_skips(report: IndexReport, scan: ScanResult) -> None:
    for reason, n in scan.skipped.items():
        report.skipped[reason] = report.skipped.get(reason, 0) + n
    for reason, examples in scan.examples.items():
        kept = report.skipped_examples.setdefault(reason, [])
        kept.extend(examples[: max(0, 5 - len(kept))])
