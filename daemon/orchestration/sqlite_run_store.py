"""The SQLite run store (the default): one file per workspace, ``<state_dir>/pipeline/runs.sqlite3``.

WAL mode and a busy timeout let other processes (``ided cancel``, ``ided runs``, a second front)
read and write the same file while a run executes; writes that read first (``update``, ``log``)
take the write lock before they read (``BEGIN IMMEDIATE``). The statements and the port's methods
are ``daemon.orchestration.sql_run_store``'s, shared with Postgres; every method runs its SQL in a
worker thread. Files written before runs carried a workspace id are stamped with this store's id on open.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from daemon.errors import ErrorCode, PipelineError
from daemon.orchestration.sql_run_store import SqlDialect, SqlRunStore

__all__ = ["SqliteRunStore", "runs_db_path"]

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    status TEXT NOT NULL,
    workflow TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_created ON runs (created_at);
"""


def runs_db_path(state_dir: Path) -> Path:
    return state_dir / "pipeline" / "runs.sqlite3"


class SqliteRunStore(SqlRunStore[sqlite3.Connection]):
    """One SQLite file; open with ``SqliteRunStore(path, workspace_id=...)``, close with ``close()``."""

    dialect = SqlDialect(runs="runs", decisions="decisions", events="events", mark="?")

    def __init__(self, path: Path, *, workspace_id: str) -> None:
        super().__init__(workspace_id=workspace_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(path, check_same_thread=False, timeout=10.0)
        except sqlite3.Error as exc:
            raise PipelineError(
                f"the run store {path} cannot be opened", code=ErrorCode.RUN_STORE_FAILED, cause=exc
            ) from exc
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA busy_timeout=10000")
            self._db.executescript(_SCHEMA)
            for statement in self.dialect.entry_tables():
                self._db.execute(statement)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(runs)")}
            if "workspace" not in columns:  # a file from before runs carried their workspace id
                self._db.execute("ALTER TABLE runs ADD COLUMN workspace TEXT NOT NULL DEFAULT ''")
            self._db.execute("UPDATE runs SET workspace = ? WHERE workspace = ''", (workspace_id,))
            self._db.execute("CREATE INDEX IF NOT EXISTS runs_workspace ON runs (workspace, created_at)")
            self._db.commit()
        except sqlite3.Error as exc:
            self._db.close()
            raise PipelineError(
                f"the run store {path} cannot be opened (damaged, or not a SQLite database): move it aside and "
                "ided starts a new one (the runs it listed are gone from `ided runs`; their branches stay)",
                code=ErrorCode.RUN_STORE_FAILED,
                cause=exc,
            ) from exc

    @property
    def location(self) -> str:
        return str(self.path)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- synchronous core (run in threads) ------------------------------------------------------

    def _locked(self, work: Callable[[sqlite3.Connection], T], *, write: bool = False) -> T:
        """``work`` under the thread lock; with ``write``, inside one transaction holding the write lock."""
        with self._lock:
            try:
                if not write:
                    return work(self._db)
                self._db.commit()
                self._db.execute("BEGIN IMMEDIATE")  # the write lock first: other processes write the same runs
                try:
                    result = work(self._db)
                except BaseException:
                    self._db.rollback()
                    raise
                self._db.commit()
                return result
            except sqlite3.Error as exc:
                raise PipelineError(
                    f"the run store {self.path} failed", code=ErrorCode.RUN_STORE_FAILED, cause=exc
                ) from exc

    def _insert_rows(self, conn: sqlite3.Connection, statement: str, rows: Sequence[tuple[Any, ...]]) -> None:
        conn.executemany(statement, rows)
