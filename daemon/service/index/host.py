"""The workspace index inside the daemon: one writer thread, background passes, change events.

Every store operation runs on one dedicated thread (the store and manifest are not shared across
threads), so searches and writes are serialized without locks. Long work runs in small slices so a
search waits milliseconds, not minutes; the embedding model runs in a worker process of its own,
at low priority, started for a fill and gone when it is done (only the reading of a slice and the
writing of its vectors take the index thread). ``status`` never queues
behind that thread: while it works, the last snapshot (taken after every call that changes the
index) is the answer, so ``ided status`` is answered at once whatever runs.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from daemon.config import Config, default_cache_root
from daemon.core.models import IndexReport, IndexStatus, SearchResult
from daemon.core.tasks import cancel_and_wait
from daemon.errors import DaemonError, EmbeddingUnavailable
from daemon.index.embed_process import EmbeddingProcess
from daemon.index.watcher import watch_batches
from daemon.index.workspace_index import WorkspaceIndex
from daemon.index.workspace_lock import DAEMON_HOLDER
from daemon.service.wire.api import IndexChanged, IndexProgressEvent, Methods, SearchParams

__all__ = ["IndexHost", "Publish"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
Publish = Callable[[str, Any], Coroutine[Any, Any, None]]

_EMBED_SLICE = 64
_PROGRESS_INTERVAL_S = 0.2


class IndexHost:
    def __init__(self, config: Config, publish: Publish) -> None:
        self.config = config
        self._publish = publish
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ided-index")
        self._embed_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ided-embed")
        self._ws: WorkspaceIndex | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._stop = asyncio.Event()
        self._embed_wanted = asyncio.Event()
        self.busy: str | None = None
        self.filling = False
        """Whether dense vectors are being filled in (the daemon does not stop for idleness meanwhile)."""
        self.failure: DaemonError | None = None
        """Why the last pass stopped short, if it did."""
        self.ready = asyncio.Event()
        self._listeners: list[Callable[[list[str]], Coroutine[Any, Any, None]]] = []
        self._in_flight = 0
        self._snapshot: IndexStatus | None = None
        self.generation = 0
        """Counts the index's changes and the watched file events: answers derived from the index are
        valid while it stays the same."""

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        # a command that holds the index in-process (`ided status`, `ided search`) is waited for
        wait_s = self.config.daemon.start_timeout_seconds / 2
        self._ws = await self._call(lambda: WorkspaceIndex.open(self.config, holder=DAEMON_HOLDER, lock_wait_s=wait_s))
        self._snapshot = await self._call(self._ws.status)
        # The watcher starts before the first pass, so no change made after the pass's scan is lost;
        # batches it sees meanwhile wait for the pass to finish.
        if self.config.daemon.watch:
            self._tasks.append(asyncio.create_task(self._watch(), name="ided-watch"))
        self._tasks.append(asyncio.create_task(self._first_pass(), name="ided-index-first-pass"))
        self._tasks.append(asyncio.create_task(self._embed_loop(), name="ided-embed"))

    async def close(self) -> None:
        self._stop.set()
        self._embed_wanted.set()
        await cancel_and_wait(self._tasks)
        if self._ws is not None:
            await self._call(self._ws.close)
            self._ws = None
        self._thread.shutdown(wait=True)
        self._embed_thread.shutdown(wait=True)

    # -- API ----------------------------------------------------------------------------------

    async def search(self, params: SearchParams) -> SearchResult:
        ws = self._require()
        return await self._call(lambda: ws.search(params.query, k=params.k, filters=params.filters(), mode=params.mode))

    def prefer(self, paths: list[str]) -> None:
        """Embed these files' chunks before the rest (a code-intel request was about them); queued on the
        index thread, not waited for."""
        ws = self._ws
        if ws is not None and paths and self.config.embedding.enabled:
            self._thread.submit(ws.prefer, paths)

    async def status(self) -> IndexStatus:
        """The index's status; the last snapshot, without waiting, while the index thread is working."""
        ws = self._require()
        if self._in_flight and self._snapshot is not None:
            return self._snapshot
        self._snapshot = await self._call(ws.status)
        return self._snapshot

    async def reindex(self, paths: list[str] | None) -> IndexReport:
        ws = self._require()
        if paths is not None:
            report = await self._call(ws.update_paths, paths)
        else:
            report = await self._call(ws.index, self._progress_reporter())
        await self._changed(paths or [], report)
        return report

    @property
    def workspace_index(self) -> WorkspaceIndex:
        return self._require()

    def run_blocking(self, work: Callable[[WorkspaceIndex], T], wait_s: float) -> T:
        """Run ``work`` on the index thread from another thread (never the event loop's), waiting at
        most ``wait_s``: ``TimeoutError`` past it, and the work is dropped if it has not started."""
        future = self._thread.submit(work, self._require())
        try:
            return future.result(timeout=wait_s)
        except TimeoutError:
            future.cancel()
            raise

    def on_files_changed(self, callback: Callable[[list[str]], Coroutine[Any, Any, None]]) -> None:
        """Also tell ``callback`` which paths the watcher saw change (language servers resync them)."""
        self._listeners.append(callback)

    @property
    def watching(self) -> bool:
        return self.config.daemon.watch

    # -- background ---------------------------------------------------------------------------

    def _progress_reporter(self) -> Callable[[str, int, int], None]:
        """A progress callback for the index thread that publishes ``index/progress`` (throttled)."""
        loop = asyncio.get_running_loop()
        last = 0.0

        def progress(phase: str, done: int, total: int) -> None:
            nonlocal last
            now = time.monotonic()
            if now - last >= _PROGRESS_INTERVAL_S or done == total:
                last = now
                event = IndexProgressEvent(phase=phase, done=done, total=total)
                asyncio.run_coroutine_threadsafe(self._publish(Methods.INDEX_PROGRESS, event), loop)

        return progress

    async def _first_pass(self) -> None:
        ws = self._require()
        progress = self._progress_reporter()
        self.busy = "initial index pass"
        try:
            report = await self._call(ws.index, progress)
            await self._changed([], report)
        except DaemonError as exc:  # disk full, store failure: the index stays as written, searchable
            self.failure = exc
            logger.error("the first index pass stopped [%s]: %s", exc.code.value, exc)
        finally:
            self.busy = None
            self.ready.set()

    async def _watch(self) -> None:
        root = self.config.workspace_path.resolve()
        state = self.config.state_path.resolve()
        async for batch in watch_batches(root, debounce_ms=self.config.daemon.debounce_ms, stop=self._stop):
            paths = [p for p in batch if not (root / p).resolve().is_relative_to(state)]
            if not paths:
                continue
            self.generation += 1
            await self.ready.wait()
            for listener in self._listeners:
                try:
                    await listener(paths)
                except Exception:  # a listener must not stop the watcher
                    logger.exception("a file-change listener failed")
            try:
                if len(paths) > self.config.daemon.batch_threshold:
                    logger.info("%d files changed at once: running one full pass", len(paths))
                    await self.reindex(None)
                else:
                    await self.reindex(paths)
            except DaemonError as exc:  # disk full, state unwritable: said with its code, and the watch goes on
                logger.error("re-indexing %d changed path(s) stopped [%s]: %s", len(paths), exc.code.value, exc)
            except Exception:  # the watcher must outlive one failed pass
                logger.exception("re-indexing %d changed path(s) failed", len(paths))

    async def _embed_loop(self) -> None:
        """Fill dense vectors in a worker process (``EmbeddingProcess``) started when chunks lack
        vectors and closed when none do: the store is read and written on the index thread
        (milliseconds a slice), the model runs in the worker at low priority, and the thread that
        waits for it waits on a pipe, so a search never waits for a batch and the daemon never holds
        the model's documents session."""
        await self.ready.wait()
        if not self.config.embedding.enabled:
            return
        ws = self._require()
        loop = asyncio.get_running_loop()
        worker: EmbeddingProcess | None = None
        try:
            while not self._stop.is_set():
                batch = await self._call(ws.missing_dense, _EMBED_SLICE)
                self.filling = bool(batch)
                if not batch:
                    if worker is not None:
                        await loop.run_in_executor(self._embed_thread, worker.close)
                        worker = None
                    await self._call(ws.flush)
                    self._embed_wanted.clear()
                    await self._embed_wanted.wait()
                    continue
                pending = await self._call(ws.pending_embeddings)
                self.busy = f"embedding ({pending} chunk(s) to go)"
                try:
                    if worker is None:
                        worker = EmbeddingProcess(self.config.embedding, default_cache_root())
                    vectors = await loop.run_in_executor(
                        self._embed_thread, worker.embed_documents, [chunk for _, chunk in batch]
                    )
                except EmbeddingUnavailable as exc:
                    worker = None  # closed by its failure
                    if await self._call(ws.dense_embedder) is None:  # the model cannot load here either
                        logger.warning("dense embedding is off (%s); status says why", exc)
                        return
                    logger.warning("dense embedding stopped until the next change: %s", exc)
                    self._embed_wanted.clear()
                    await self._embed_wanted.wait()
                    continue
                finally:
                    self.busy = None
                await self._call(ws.set_dense, {pid: vec for (pid, _), vec in zip(batch, vectors, strict=True)})
                self._snapshot = await self._call(ws.status)
        finally:
            self.filling = False
            if worker is not None:
                worker.close(grace_s=0)  # the daemon is stopping: no batch is waited for

    async def _changed(self, paths: list[str], report: IndexReport) -> None:
        self.generation += 1
        self._snapshot = await self._call(self._require().status)
        self._embed_wanted.set()
        await self._publish(Methods.INDEX_CHANGED, IndexChanged(paths=paths, report=report))

    # -- plumbing -----------------------------------------------------------------------------

    def _require(self) -> WorkspaceIndex:
        if self._ws is None:
            raise RuntimeError("the index host is not started")
        return self._ws

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        self._in_flight += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)
        finally:
            self._in_flight -= 1
