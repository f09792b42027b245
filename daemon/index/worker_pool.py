"""The parsing workers of an index pass, startable ahead of the scan.

Workers come from a forkserver (``fork`` from a process that may hold threads is unsafe); the
first pass of a process starts the forkserver, which imports ``daemon.index.file_worker``, and
then forks the workers: about 0.4 s in which the writer waits for the first results. A first index
of a workspace parses every file its scan finds, so once the scan has found enough files for a
pool it starts the pool in a thread and scans on: the thread only waits on the forkserver's
socket, which releases the GIL. ``bench/index.py`` times the pass with it.

The workers and the forkserver die with the process that started them, whatever kills it
(``daemon.index.parent_watch``): a SIGKILLed daemon leaves no worker, forkserver or resource tracker
behind. (A pool of ``spawn`` workers would be the daemon's own children, but each would import the
parser stack again, about 0.4 s of CPU per worker and pass; the forkserver imports it once.)
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor

from daemon.index.file_worker import FileJob, FileOutcome, WorkerSettings, process_batch
from daemon.index.parent_watch import exit_with

__all__ = ["WORKER_NICENESS", "WorkerPool"]

logger = logging.getLogger(__name__)

WORKER_NICENESS = 5
"""Added to the parsing workers' niceness: with them as many as the cores, the store writer (a third of
a pass's CPU) would otherwise get a fair share only, fall behind, and finish the pass alone on one core."""


class WorkerPool:
    """A process pool of ``workers`` parsing workers; use as a context manager.

    ``start()`` begins spawning them in a background thread and returns at once; ``map`` waits
    for that start (or starts them itself) and yields the batches' outcomes in order.
    """

    def __init__(self, workers: int) -> None:
        self._workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._starter: threading.Thread | None = None
        self._start_error: BaseException | None = None

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Begin starting the workers in the background (idempotent)."""
        if self._starter is None and self._pool is None:
            self._starter = threading.Thread(target=self._start_quietly, name="ided-worker-pool-start", daemon=True)
            self._starter.start()

    def map(self, batches: Sequence[list[FileJob]], settings: WorkerSettings) -> Iterator[list[FileOutcome]]:
        """``process_batch`` over ``batches`` in the workers; outcomes in the batches' order."""
        pool = self._ready()
        yield from pool.map(process_batch, batches, [settings] * len(batches))

    def close(self) -> None:
        """Stop the workers (after waiting for a start still under way)."""
        if self._starter is not None:
            self._starter.join()
            self._starter = None
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def _ready(self) -> ProcessPoolExecutor:
        if self._starter is not None:
            self._starter.join()
            self._starter = None
        if self._start_error is not None:
            error, self._start_error = self._start_error, None
            raise error
        if self._pool is None:
            self._pool = self._spawn()
        return self._pool

    def _start_quietly(self) -> None:
        try:
            self._pool = self._spawn()
        except BaseException as exc:  # re-raised in the caller's thread by ``map``
            self._start_error = exc

    def _spawn(self) -> ProcessPoolExecutor:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["daemon.index.file_worker"])
        pool = ProcessPoolExecutor(
            max_workers=self._workers, mp_context=ctx, initializer=_init_worker, initargs=(os.getpid(),)
        )
        # a forkserver pool spawns a worker per submit until it has them all: ask for every one now
        warm = [pool.submit(os.getpid) for _ in range(self._workers)]
        for future in warm:
            future.result()
        logger.debug("started %d parsing worker(s)", self._workers)
        return pool


def _init_worker(owner_pid: int) -> None:
    """Each worker dies with ``owner_pid`` (the pool's owner) and yields the CPU to the store writer
    (and to the user's editor)."""
    exit_with(owner_pid)
    with contextlib.suppress(OSError):
        os.nice(WORKER_NICENESS)
