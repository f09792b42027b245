"""Search inside a run: the workspace index with the run's changed files laid over it.

``RunTreeOverlay`` follows one run's worktree: before each search (``refresh``) it asks git which
files differ from where the run started (``git diff`` against the start commit, plus untracked files
that are not ignored; paths relative to the run's workdir, so they are workspace-relative like the
index's) and re-chunks only those whose size or modification time moved since it last read them,
into an in-memory ``OverlayIndex`` (``daemon.index.overlay``). Searches asked together share one
refresh (one that began after they were asked), so the concurrent searches of upfront retrieval pay
the git calls about once. A file the run reverted leaves the overlay. It is held in memory for the
run and dropped (``close``) when the run ends. While the run's tree is known to be as checked out
(``pristine``: a new run's upfront retrieval, before any agent ran) a refresh asks git nothing: on a
large checkout each ``git diff`` against the start commit costs about half a second (django: the
files of a fresh checkout are as new as its index, so git compares their contents).

Over it:

- ``OverlaySearch``: an ``IndexSearch`` (the retrieval agent's index port) whose answers are the
  workspace index's, less every hit in a path the run changed or deleted, merged with the overlay's
  own hits (``merge_results``: one list by score; both sides are ranked by ``daemon.index.ranking``,
  whose scores are relative to each list's best, so they interleave);
- ``OverlayWorkspace``: the ``Workspace`` port with the same search (the agents' ``search_code`` and
  ``search_docs`` tools); code intelligence and status pass through to the workspace's;
- ``OverlayFacts``: language-server facts less those located in a path the run changed (their lines
  describe the original file);
- ``OtherRunsHistory``: the run history less the run's own decision log (a run's notes are not context
  for that run).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel

from daemon.core.models import MatchConfidence, SearchFilters, SearchHit, SearchMode, SearchResult
from daemon.core.ports import Workspace
from daemon.index.file_reader import FileContent, read_file
from daemon.index.overlay import OverlayIndex
from daemon.retrieval.ports import CodeFact, CodeFacts, DecisionHistory, DecisionNote, IndexSearch
from daemon.vcs.git_runner import GitRunner

if TYPE_CHECKING:
    from daemon.core.intel_models import IntelStatus

__all__ = [
    "OtherRunsHistory",
    "OverlayFacts",
    "OverlaySearch",
    "OverlayWorkspace",
    "RefreshReport",
    "RunTreeOverlay",
    "merge_results",
]

logger = logging.getLogger(__name__)

R = TypeVar("R", bound=BaseModel)

_STRENGTH = {MatchConfidence.NONE: 0, MatchConfidence.WEAK: 1, MatchConfidence.STRONG: 2}
_DEFAULT_K = 10
_EXTRA_BASE_HITS = 20
"""How many more hits the workspace index is asked for than wanted, to make up for the masked ones."""


@dataclass(frozen=True, kw_only=True)
class RefreshReport:
    """What one ``refresh`` did."""

    changed: int
    deleted: int
    reread: int
    chunks: int
    seconds: float


class RunTreeOverlay:
    """The changed files of one run's tree as an overlay (see the module doc). Thread-safe."""

    def __init__(
        self, workdir: Path, start_commit: str, *, max_file_bytes: int = 1_000_000, max_chunk_lines: int = 150
    ) -> None:
        self.workdir = workdir
        self.start_commit = start_commit
        self._max_file_bytes = max_file_bytes
        self._index = OverlayIndex(max_chunk_lines=max_chunk_lines)
        self._seen: dict[str, tuple[int, int]] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._begun = 0
        self._pristine = False

    @property
    def pristine(self) -> bool:
        """Whether the tree is taken to be as checked out at the start commit (refreshes ask git nothing)."""
        return self._pristine

    @pristine.setter
    def pristine(self, value: bool) -> None:
        """True only while nothing can have written in the tree (no agent of the run has started)."""
        with self._lock:
            self._pristine = value

    @property
    def masked(self) -> frozenset[str]:
        return self._index.masked

    @property
    def closed(self) -> bool:
        return self._closed

    def _changes(self) -> tuple[set[str], set[str]]:
        git = GitRunner(self.workdir)
        fields = git.zsplit(
            "diff", "--no-renames", "--no-ext-diff", "--relative", "--name-status", "-z", self.start_commit
        )
        present: set[str] = set()
        deleted: set[str] = set()
        for status, path in zip(fields[::2], fields[1::2], strict=False):
            (deleted if status.startswith("D") else present).add(path)
        present.update(git.zsplit("ls-files", "--others", "--exclude-standard", "-z"))
        return present, deleted

    @property
    def refreshes(self) -> int:
        """How many refreshes have begun (read it when a search is asked; pass it to ``refresh(after=...)``)."""
        return self._begun

    def refresh(self, *, after: int | None = None) -> RefreshReport | None:
        """Bring the overlay in line with the worktree now (blocking; ``VcsError`` when git fails).

        ``after``: ``refreshes`` when the caller's search was asked; None, and nothing done, when a
        refresh that began after that already ran (searches asked together share one).
        """
        started = time.perf_counter()
        with self._lock:
            if self._closed:
                return RefreshReport(changed=0, deleted=0, reread=0, chunks=0, seconds=0.0)
            if after is not None and self._begun > after:
                return None
            if self._pristine and not self._seen:
                return RefreshReport(changed=0, deleted=0, reread=0, chunks=0, seconds=0.0)
            self._begun += 1
            present, deleted = self._changes()
            reread = 0
            for path in set(self._seen) - present - deleted:
                self._index.restore(path)
                del self._seen[path]
            for path in deleted:
                self._index.drop(path)
                self._seen.pop(path, None)
            for path in present:
                reread += self._read(path)
            report = RefreshReport(
                changed=len(present),
                deleted=len(deleted),
                reread=reread,
                chunks=self._index.chunk_count,
                seconds=time.perf_counter() - started,
            )
        logger.debug("run overlay %s: %s", self.workdir, report)
        return report

    def _read(self, path: str) -> int:
        full = self.workdir / path
        try:
            st = full.stat()
        except OSError:
            self._index.drop(path)
            self._seen.pop(path, None)
            return 0
        stamp = (st.st_mtime_ns, st.st_size)
        if self._seen.get(path) == stamp:
            return 0
        content = read_file(full, self._max_file_bytes)
        if isinstance(content, FileContent):
            self._index.put(path, content.data)
        else:  # binary, too large, a secret: the run's version is not searchable, the original is stale
            self._index.put(path, b"")
        self._seen[path] = stamp
        return 1

    def search(self, query: str, *, k: int, filters: SearchFilters | None) -> tuple[SearchResult, frozenset[str]]:
        """The overlay's hits after a ``refresh`` begun since this call (blocking), and the paths it masks."""
        self.refresh(after=self._begun)
        with self._lock:
            return self._index.search(query, k=k, filters=filters), self._index.masked

    def close(self) -> None:
        """Drop everything the overlay holds; later searches see the workspace index only."""
        with self._lock:
            self._closed = True
            self._index.clear()
            self._seen.clear()


def merge_results(base: SearchResult, overlay: SearchResult, masked: frozenset[str], k: int) -> SearchResult:
    """``base``'s hits outside ``masked`` and ``overlay``'s hits as one list of at most ``k``, by score."""
    kept = [h for h in base.hits if h.chunk.path not in masked]
    dropped = len(base.hits) - len(kept)
    hits: list[SearchHit] = sorted(
        [*overlay.hits, *kept], key=lambda h: (-h.score, 0 if h.chunk.path in masked else 1, h.id)
    )[:k]
    base_matches = base.matches if kept else MatchConfidence.NONE
    overlay_matches = overlay.matches if overlay.hits else MatchConfidence.NONE
    matches = max(base_matches, overlay_matches, key=lambda m: _STRENGTH[m])
    notes = list(base.notes)
    if masked:
        notes.append(
            f"run overlay: {len(masked)} file(s) the run changed are searched in the run's tree"
            + (f"; {dropped} hit(s) of their original version left out" if dropped else "")
        )
    return base.model_copy(
        update={
            "hits": tuple(hits),
            "matches": matches,
            "notes": tuple(notes),
            "seconds": base.seconds + overlay.seconds,
        }
    )


class OverlaySearch:
    """``IndexSearch`` over the workspace index with a run's overlay (see the module doc)."""

    def __init__(self, base: IndexSearch, overlay: RunTreeOverlay) -> None:
        self._base = base
        self._overlay = overlay

    async def search(self, query: str, *, k: int, filters: SearchFilters | None) -> SearchResult:
        own, masked = await asyncio.to_thread(self._overlay.search, query, k=k, filters=filters)
        base = await self._base.search(query, k=k + (_EXTRA_BASE_HITS if masked else 0), filters=filters)
        return merge_results(base, own, masked, k)


class OverlayWorkspace:
    """The ``Workspace`` port inside a run: search sees the run's tree; the rest is the workspace's."""

    def __init__(self, base: Workspace, overlay: RunTreeOverlay) -> None:
        self._base = base
        self._overlay = overlay

    @property
    def serves_intel(self) -> bool:
        return self._base.serves_intel

    async def search(
        self, query: str, *, k: int | None, filters: SearchFilters | None, mode: SearchMode | None = None
    ) -> SearchResult:
        own, masked = await asyncio.to_thread(self._overlay.search, query, k=k or _DEFAULT_K, filters=filters)
        asked = None if k is None else k + (_EXTRA_BASE_HITS if masked else 0)
        base = await self._base.search(query, k=asked, filters=filters, mode=mode)
        return merge_results(base, own, masked, k or max(_DEFAULT_K, len(base.hits)))

    async def intel(self, method: str, params: BaseModel, result: type[R]) -> R:
        return await self._base.intel(method, params, result)

    async def status(self) -> IntelStatus:
        return await self._base.status()

    async def aclose(self) -> None:
        """The base workspace belongs to the runtime: closing the run's view drops only the overlay."""
        await asyncio.to_thread(self._overlay.close)


class OverlayFacts:
    """``CodeFacts`` less the facts located in a file the run changed (their lines are the original's)."""

    def __init__(self, base: CodeFacts, overlay: RunTreeOverlay) -> None:
        self._base = base
        self._overlay = overlay

    async def facts(self, symbol: str, *, max_references: int) -> list[CodeFact]:
        found = await self._base.facts(symbol, max_references=max_references)
        masked = self._overlay.masked
        return [f for f in found if f.path is None or PurePosixPath(f.path).as_posix() not in masked]


class OtherRunsHistory:
    """``DecisionHistory`` less one run's own notes."""

    def __init__(self, base: DecisionHistory, run_id: str) -> None:
        self._base = base
        self._run_id = run_id

    async def recent(self, limit: int) -> list[DecisionNote]:
        notes = await self._base.recent(limit)
        return [n for n in notes if n.run_id != self._run_id]
