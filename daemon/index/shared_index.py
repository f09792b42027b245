"""The workspace index as the code-intel tools use it: opened in the background, shared with an
index pass, one thread inside it at a time.

``WorkspaceIndex`` (and the fastembed/Qdrant stack behind it, ~1.5 s to import) is imported and
opened in a worker thread, so the language-server tools never wait for it. Symbol lookups that
find the index busy get ``None`` and fall back to a Tree-sitter scan; searches wait (bounded) and
then fail with a message that says why. Every method blocks: call them through ``asyncio.to_thread``.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

from daemon.config import Config
from daemon.core.models import Chunk, ChunkKind, IndexStatus, SearchFilters, SearchMode, SearchResult
from daemon.errors import DaemonError, IndexingError

if TYPE_CHECKING:
    from daemon.index.workspace_index import WorkspaceIndex

__all__ = ["SharedIndex"]

logger = logging.getLogger(__name__)

_CLOSE_WAIT_SECONDS = 10.0


class SharedIndex:
    """See the module docstring. ``wait_seconds`` bounds every wait for the index."""

    def __init__(self, config: Config, *, wait_seconds: float) -> None:
        self._config = config
        self._wait = wait_seconds
        self._index: WorkspaceIndex | None = None
        self._note: str | None = "the index is being opened"
        self._opened = threading.Event()
        self._indexed = False  # a pass has completed at least once (then status() need not be asked)
        self._lock = threading.Lock()  # one thread at a time in the index (pass vs. queries)
        self._busy_since: float | None = None
        self._owned = True

    def adopt(self, index: WorkspaceIndex) -> None:
        """Use an index someone else opened and keeps up to date (the daemon's); never close it."""
        self._index = index
        self._note = None
        self._indexed = True
        self._owned = False
        self._opened.set()

    def open(self, *, run_pass: bool) -> None:
        """Open the index (and run an incremental pass when ``run_pass``); failures become the note."""
        with self._lock:
            self._busy_since = time.monotonic()
            try:
                from daemon.index.workspace_index import WorkspaceIndex

                try:
                    self._index = WorkspaceIndex.open(self._config)
                    self._note = None
                except DaemonError as exc:
                    self._note = f"the index could not be opened: {exc}"
                    logger.warning("%s", self._note)
                finally:
                    self._opened.set()
                if run_pass and self._index is not None:
                    report = self._index.index()
                    self._indexed = True
                    logger.info(
                        "startup index pass: %d files indexed, %d unchanged",
                        report.files_indexed,
                        report.files_unchanged,
                    )
            finally:
                self._busy_since = None

    def close(self) -> None:
        # An index pass still running in its thread holds the lock: wait a little, then leave the
        # store to the process exit (the workspace lock is released by the kernel).
        if not self._lock.acquire(timeout=_CLOSE_WAIT_SECONDS):
            logger.warning("an index pass is still running; not waiting for it to close the index")
            return
        try:
            index, self._index = self._index, None
            if index is not None and self._owned:
                index.close()
        finally:
            self._lock.release()

    def candidates(self, query: str) -> list[Chunk] | None:
        """Lexical candidates for symbol resolution; None when the index is unusable or busy."""
        index = self._index
        if index is None or not self._lock.acquire(blocking=False):
            return None
        try:
            result = index.search(
                query, k=50, filters=SearchFilters(kind=ChunkKind.CODE), mode=SearchMode.LEXICAL, rerank=False
            )
        except DaemonError as exc:
            logger.warning("index lookup for %r failed: %s", query, exc)
            return None
        finally:
            self._lock.release()
        return [hit.chunk for hit in result.hits]

    def search(
        self, query: str, k: int | None, filters: SearchFilters | None, mode: SearchMode | None = None
    ) -> SearchResult:
        """Hybrid search; ``IndexingError`` saying why when the index is not usable (yet)."""
        if not self._opened.wait(self._wait):
            raise IndexingError("the index is still being opened; retry in a few seconds")
        index = self._index
        if index is None:
            raise IndexingError(self._note or "the workspace index is not available")
        if not self._lock.acquire(timeout=self._wait):
            raise IndexingError(f"the index is being updated ({self._busy():.1f} s so far); retry in a few seconds")
        try:
            if not self._indexed and index.status().last_update is None:
                raise IndexingError(
                    "the workspace has not been indexed yet; run `ided index` or wait for the startup pass"
                )
            self._indexed = True
            return index.search(query, k=k, filters=filters, mode=mode or SearchMode.HYBRID)
        finally:
            self._lock.release()

    def status(self) -> tuple[IndexStatus | None, str | None]:
        """(status, note): the index status when it can be read now, else why not."""
        index = self._index
        if index is None or not self._opened.is_set():
            return None, self._note
        if not self._lock.acquire(timeout=1.0):
            return None, f"an index pass is running ({self._busy():.1f} s so far)"
        try:
            return index.status(), self._note
        finally:
            self._lock.release()

    def _busy(self) -> float:
        since = self._busy_since
        return 0.0 if since is None else time.monotonic() - since
