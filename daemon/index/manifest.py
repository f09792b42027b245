"""The file manifest: what was indexed, from which content, into how many chunks.

SQLite in the workspace state directory. A row is written only after the file's points were
flushed to the vector store, so after a crash the manifest never claims more than the store
holds; :meth:`Manifest.reconcile` finds the rest.
"""

from __future__ import annotations

import errno
import json
import sqlite3
from collections.abc import Generator, Iterable, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from daemon.errors import DaemonError, StoreError, state_error

__all__ = ["MANIFEST_NAME", "FileRecord", "Manifest"]

MANIFEST_NAME = "manifest.sqlite3"
"""The manifest's file name in a workspace's state directory."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL,
    language TEXT NOT NULL,
    chunks INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass(frozen=True, slots=True)
class FileRecord:
    path: str
    size: int
    mtime_ns: int
    hash: str
    language: str
    chunks: int


class Manifest:
    """Per-file records plus a small key/value table for index-wide facts.

    A write the disk refuses (full, read-only) raises the coded error (``disk_full``,
    ``state_unwritable``) and rolls back: the manifest never records half a commit.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        with self._errors("open the manifest"):
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def all(self) -> dict[str, FileRecord]:
        rows = self._db.execute("SELECT path, size, mtime_ns, hash, language, chunks FROM files")
        return {r[0]: FileRecord(*r) for r in rows}

    def get(self, path: str) -> FileRecord | None:
        row = self._db.execute(
            "SELECT path, size, mtime_ns, hash, language, chunks FROM files WHERE path = ?", (path,)
        ).fetchone()
        return FileRecord(*row) if row else None

    def paths_under(self, rel_dir: str) -> list[str]:
        """Recorded paths inside ``rel_dir`` (workspace-relative, no trailing slash)."""
        prefix = rel_dir.rstrip("/") + "/"
        rows = self._db.execute(
            "SELECT path FROM files WHERE substr(path, 1, ?) = ? ORDER BY path", (len(prefix), prefix)
        )
        return [str(r[0]) for r in rows]

    def put_many(self, records: Iterable[FileRecord]) -> None:
        with self._transaction():
            self._db.executemany(
                "INSERT OR REPLACE INTO files (path, size, mtime_ns, hash, language, chunks) VALUES (?, ?, ?, ?, ?, ?)",
                [(r.path, r.size, r.mtime_ns, r.hash, r.language, r.chunks) for r in records],
            )

    def delete_many(self, paths: Iterable[str]) -> None:
        with self._transaction():
            self._db.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in paths])

    def forget_stats(self) -> None:
        """Make every file look modified, so the next pass re-reads it (and keeps what hashes the same)."""
        with self._transaction():
            self._db.execute("UPDATE files SET mtime_ns = -1")

    def clear(self) -> None:
        with self._transaction():
            self._db.execute("DELETE FROM files")
            self._db.execute("DELETE FROM meta")

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM files").fetchone()[0])

    def get_meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    def set_meta(self, values: Mapping[str, str]) -> None:
        with self._transaction():
            self._db.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", list(values.items()))

    def get_json(self, key: str) -> object | None:
        raw = self.get_meta(key)
        return None if raw is None else json.loads(raw)

    def reconcile(self, store_counts: Mapping[str, int]) -> list[str]:
        """Paths whose store content disagrees with the manifest (crash mid-write): drop their rows.

        Returns the paths to purge from the store; they are re-indexed by the next pass.
        """
        records = self.all()
        bad = [p for p, n in store_counts.items() if p not in records or records[p].chunks != n]
        bad += [p for p, r in records.items() if r.chunks > 0 and p not in store_counts]
        if bad:
            self.delete_many(bad)
        return sorted(set(bad))

    def _transaction(self) -> _Tx:
        return _Tx(self._db, self._path)

    @contextmanager
    def _errors(self, action: str) -> Generator[None]:
        try:
            yield
        except (OSError, sqlite3.Error) as exc:
            raise _coded(action, self._path, exc) from exc


class _Tx:
    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self._db = db
        self._path = path

    def __enter__(self) -> None:
        try:
            self._db.execute("BEGIN")
        except sqlite3.Error as exc:
            raise _coded("write the manifest", self._path, exc) from exc

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            self._db.execute("ROLLBACK" if exc_type else "COMMIT")
        except sqlite3.Error as error:
            with suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
            raise _coded("write the manifest", self._path, error) from error
        if isinstance(exc, sqlite3.Error):
            raise _coded("write the manifest", self._path, exc) from exc


def _coded(action: str, path: Path, exc: OSError | sqlite3.Error) -> DaemonError:
    """SQLite's "database or disk is full" / "readonly database" as the coded errors; others ``store_failed``."""
    if isinstance(exc, OSError):
        return state_error(action, path, exc)
    text = str(exc).lower()
    if "disk is full" in text:
        return state_error(action, path, OSError(errno.ENOSPC, str(exc)))
    if "readonly" in text or "read-only" in text or "unable to open" in text:
        return state_error(action, path, OSError(errno.EROFS, str(exc)))
    return StoreError(f"cannot {action} ({path})", cause=exc)
