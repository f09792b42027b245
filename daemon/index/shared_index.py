"""The workspace index as the code-intel tools use it: opened in the background, shared with an
index pass, one thread inside it at a time.

``WorkspaceIndex`` (and the fastembed/Qdrant stack behind it, ~1.5 s to import) is imported and
opened in a worker thread, so the language-server tools never wait for it. Symbol lookups that
find the index busy get ``None`` and fall back to a Tree-sitter scan; searches wait (bounded) and
then fail with a message that says why. Every method blocks: call them through ``asyncio.to_thread``.

An index someone else owns is ``adopt``ed with the owner's ``run``: a function that runs work on the
owner's own thread (the daemon's index thread, ``IndexHost.run_blocking``), so the index is never
used from two threads at once. Without ``run`` (a caller that holds the index and does not write
to it meanwhile) the adopted index is read under this object's lock, as an own one is.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from daemon.config import Config
from daemon.core.models import Chunk, ChunkKind, IndexStatus, SearchFilters, SearchMode, SearchResult
from daemon.errors import DaemonError, IndexingError

if TYPE_CHECKING:
    from daemon.index.workspace_index import WorkspaceIndex

__all__ = ["OwnerThread", "SharedIndex"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

OwnerThread = Callable[[Callable[["WorkspaceIndex"], T], float], T]
"""Run a function of the index on its owner's thread, waiting at most the seconds given
(``TimeoutError`` past them; the work is then dropped if it has not started)."""

_CLOSE_WAIT_SECONDS = 10.0
_LOOKUP_WAIT_SECONDS = 0.5
"""How long a symbol lookup waits for an owner's busy index thread before the Tree-sitter fallback."""
_STATUS_WAIT_SECONDS = 1.0


class _Busy(Exception):
    """The index is busy past the wait: the caller says so in its own terms."""


class SharedIndex:
    """See the module docstring. ``wait_seconds`` bounds every wait for the index."""

    def __init__(self, config: Config, *, wait_seconds: float) -> None:
        self._config = config
        self._wait = wait_seconds
        self._index: WorkspaceIndex | None = None
        self._note: str | None = "the index is being opened"
        self._opened = threading.Event()
        self._indexed = False  # a pass has completed at least once (then status() need not be asked)
        self._lock = threading.Lock()  # one thread at a time in an own index (pass vs. queries)
        self._busy_since: float | None = None
        self._owned = True
        self._owner: OwnerThread[object] | None = None

    def adopt(self, index: WorkspaceIndex, *, run: OwnerThread[object] | None = None) -> None:
        """Use an index someone else opened and keeps up to date (the daemon's); never close it.

        ``run``: the owner's thread, which every use of the index then goes through."""
        self._index = index
        self._note = None
        self._indexed = True
        self._owned = False
        self._owner = run
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

    def _use(self, index: WorkspaceIndex, work: Callable[[WorkspaceIndex], T], wait: float | None) -> T:
        """``work`` on the index: on the owner's thread, else under the lock (``wait`` None: do not wait).

        Raises ``_Busy`` when the index stays busy past ``wait``."""
        owner = self._owner
        if owner is not None:
            try:
                return owner(work, _LOOKUP_WAIT_SECONDS if wait is None else wait)  # pyright: ignore[reportReturnType]
            except TimeoutError:
                raise _Busy from None
        acquired = self._lock.acquire(blocking=False) if wait is None else self._lock.acquire(timeout=wait)
        if not acquired:
            raise _Busy
        try:
            return work(index)
        finally:
            self._lock.release()

    def candidates(self, query: str) -> list[Chunk] | None:
        """Lexical candidates for symbol resolution; None when the index is unusable or busy."""
        index = self._index
        if index is None:
            return None

        def lookup(ws: WorkspaceIndex) -> SearchResult:
            return ws.search(
                query, k=50, filters=SearchFilters(kind=ChunkKind.CODE), mode=SearchMode.LEXICAL, rerank=False
            )

        try:
            result = self._use(index, lookup, None)
        except _Busy:
            return None
        except DaemonError as exc:
            logger.warning("index lookup for %r failed: %s", query, exc)
            return None
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

        def search(ws: WorkspaceIndex) -> SearchResult:
            if not self._indexed and ws.status().last_update is None:
                raise IndexingError(
                    "the workspace has not been indexed yet; run `ided index` or wait for the startup pass"
                )
            self._indexed = True
            return ws.search(query, k=k, filters=filters, mode=mode or SearchMode.HYBRID)

        try:
            return self._use(index, search, self._wait)
        except _Busy:
            raise IndexingError(
                f"the index is being updated ({self._busy():.1f} s so far); retry in a few seconds"
            ) from None

    def status(self) -> tuple[IndexStatus | None, str | None]:
        """(status, note): the index status when it can be read now, else why not."""
        index = self._index
        if index is None or not self._opened.is_set():
            return None, self._note
        try:
            return self._use(index, lambda ws: ws.status(), _STATUS_WAIT_SECONDS), self._note
        except _Busy:
            return None, f"an index pass is running ({self._busy():.1f} s so far)"

    def _busy(self) -> float:
        since = self._busy_since
        return 0.0 if since is None else time.monotonic() - since
