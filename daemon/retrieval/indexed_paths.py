"""Which path globs match a file the workspace index knows, so a glob no file matches costs no search.

The sources search the index under path globs (the decision documents' ``retrieval.decision_globs``,
a workflow's rag source paths). A glob that matches no indexed file always answers nothing, yet its
search costs as much as any other (the engine ranks before it filters by pattern). ``IndexedPaths``
reads the indexed paths from the index's manifest (SQLite in the workspace state directory, its
``files`` table, opened read-only) and says whether a glob matches one of them, with the index's own
matching (``fnmatchcase`` over the workspace-relative path).

The answer is kept per manifest state: SQLite's ``PRAGMA data_version`` changes on this read-only
connection whenever another connection (the indexer) commits, so a check costs one pragma while the
index is unchanged, and a file indexed later is seen on the next check. When the manifest cannot be
read (no index yet, another format), every glob may match: the search runs, as before.
"""

from __future__ import annotations

import fnmatch
import logging
import sqlite3
import threading
from pathlib import Path

from daemon.index.manifest import MANIFEST_NAME

__all__ = ["IndexedPaths"]

logger = logging.getLogger(__name__)


class IndexedPaths:
    """The paths recorded in the index manifest at ``manifest`` (``<state dir>/manifest.sqlite3``)."""

    def __init__(self, manifest: Path) -> None:
        self._manifest = manifest
        self._db: sqlite3.Connection | None = None
        self._version: int | None = None
        self._paths: tuple[str, ...] = ()
        self._answers: dict[str, bool] = {}
        self._lock = threading.Lock()

    @classmethod
    def in_state_dir(cls, state_dir: Path) -> IndexedPaths:
        """The manifest of the index whose state directory is ``state_dir`` (``WorkspaceIndex.state_dir``)."""
        return cls(state_dir / MANIFEST_NAME)

    def may_match(self, glob: str) -> bool:
        """False only when the index knows its files and none of them matches ``glob``."""
        with self._lock:
            if not self._current():
                return True
            answer = self._answers.get(glob)
            if answer is None:
                answer = self._answers[glob] = any(fnmatch.fnmatchcase(p, glob) for p in self._paths)
            return answer

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
            self._db = None
            self._version = None

    def _current(self) -> bool:
        """Whether ``_paths`` is the manifest's list now (read again when the manifest changed)."""
        try:
            if self._db is None:
                if not self._manifest.is_file():
                    return False
                uri = self._manifest.resolve().as_uri() + "?mode=ro"
                self._db = sqlite3.connect(uri, uri=True, check_same_thread=False)
            version = int(self._db.execute("PRAGMA data_version").fetchone()[0])
            if version != self._version:
                rows = self._db.execute("SELECT path FROM files").fetchall()
                self._paths = tuple(str(r[0]) for r in rows)
                self._answers.clear()
                self._version = version
        except sqlite3.Error as exc:
            logger.debug("the index manifest %s cannot be read (%s): every glob is searched", self._manifest, exc)
            if self._db is not None:
                self._db.close()
            self._db, self._version = None, None
            return False
        return True
