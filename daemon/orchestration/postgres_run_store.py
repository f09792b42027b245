"""The Postgres run store: one database shared by many workspaces and machines (``runs.database_url``).

Tables ``ided_runs`` (one row per run, its writer's workspace id in a column), ``ided_decisions`` and
``ided_events`` sit beside LangGraph's checkpoint tables in the same database. Records, entry data
and events are JSON text, and an entry's summary is stored JSON-encoded too: Postgres text and JSONB
refuse the NUL character, which a request or an agent's output may carry, and nothing may be lost.
One psycopg (v3) connection per store, in autocommit mode; the statements and the port's methods
are ``daemon.orchestration.sql_run_store``'s, shared with SQLite, and run in a worker thread.
Writers that read first hold a lock for the length of one transaction: ``update`` locks the run's
row (``SELECT ... FOR UPDATE``), ``log`` a transaction-scoped advisory lock keyed by the run, so
concurrent daemons neither lose an update nor number two entries alike. Creating the tables is
serialised by an advisory lock too (two daemons starting at once on an empty database). A connection
idle for a while is checked before use and reopened when the server dropped it (a restart); one that
breaks during a call fails that call with ``run_store_failed`` and is reopened on the next.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, LiteralString, TypeVar

import psycopg

from daemon.errors import ErrorCode, PipelineError
from daemon.orchestration.database_urls import redact_url
from daemon.orchestration.sql_run_store import SqlDialect, SqlRunStore

__all__ = ["PROBE_AFTER_IDLE_SECONDS", "PostgresRunStore"]

logger = logging.getLogger(__name__)

PROBE_AFTER_IDLE_SECONDS = 30.0
"""A connection unused this long is checked with ``SELECT 1`` before the next statement."""

T = TypeVar("T")

_Connection = psycopg.Connection[tuple[Any, ...]]

_LOCK_SPACE = 0x1DED  # first key of ided's advisory locks; the second is the schema or a run id's hash
_SCHEMA_LOCK = 0

_SCHEMA: tuple[LiteralString, ...] = (
    """CREATE TABLE IF NOT EXISTS ided_runs (
        run_id TEXT PRIMARY KEY,
        workspace TEXT NOT NULL,
        created_at TEXT NOT NULL,
        status TEXT NOT NULL,
        workflow TEXT,
        cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
        record TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS ided_runs_created ON ided_runs (created_at DESC, run_id DESC)",
    "CREATE INDEX IF NOT EXISTS ided_runs_workspace ON ided_runs (workspace, created_at DESC, run_id DESC)",
)


class PostgresRunStore(SqlRunStore[_Connection]):
    """Runs in a Postgres database; open with ``PostgresRunStore(url, workspace_id=...)``, close with ``close()``."""

    dialect = SqlDialect(
        runs="ided_runs",
        decisions="ided_decisions",
        events="ided_events",
        mark="%s",
        row_lock=" FOR UPDATE",
        json_summary=True,
    )

    def __init__(
        self,
        url: str,
        *,
        workspace_id: str,
        connect_timeout_seconds: float = 10.0,
        probe_after_idle_seconds: float = PROBE_AFTER_IDLE_SECONDS,
    ) -> None:
        super().__init__(workspace_id=workspace_id)
        self._url = url
        self._timeout = connect_timeout_seconds
        self._probe_after = probe_after_idle_seconds
        self._lock = threading.Lock()
        self._conn: _Connection | None = None
        self._used = time.monotonic()
        with self._lock:
            conn = self._connection()
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (_LOCK_SPACE, _SCHEMA_LOCK))
                    for statement in (*_SCHEMA, *self.dialect.entry_tables()):
                        conn.execute(statement)
            except psycopg.Error as exc:
                conn.close()
                raise self._failed("cannot create its tables", exc) from exc

    @property
    def location(self) -> str:
        return redact_url(self._url)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- synchronous core (run in threads) ------------------------------------------------------

    def _failed(self, what: str, exc: BaseException) -> PipelineError:
        return PipelineError(f"the run store at {self.location} {what}", code=ErrorCode.RUN_STORE_FAILED, cause=exc)

    def _connection(self) -> _Connection:
        """The open connection; after ``probe_after_idle_seconds`` unused, checked first (a server restarted
        meanwhile dropped it) and replaced when it no longer answers."""
        conn = self._conn
        idle = time.monotonic() - self._used
        self._used = time.monotonic()
        if conn is not None and not conn.closed and not conn.broken:
            if idle < self._probe_after:
                return conn
            try:
                conn.execute("SELECT 1")
                return conn
            except psycopg.Error:
                logger.info("the run store's connection to %s was dropped; reconnecting", self.location)
                conn.close()
        try:
            conn = psycopg.connect(self._url, autocommit=True, connect_timeout=max(1, round(self._timeout)))
        except psycopg.Error as exc:
            raise self._failed("cannot be reached", exc) from exc
        self._conn = conn
        return conn

    def _locked(self, work: Callable[[_Connection], T], *, write: bool = False) -> T:
        """``work`` under the thread lock; with ``write``, inside one transaction."""
        with self._lock:
            conn = self._connection()
            try:
                if not write:
                    return work(conn)
                with conn.transaction():
                    return work(conn)
            except psycopg.Error as exc:
                raise self._failed("failed", exc) from exc

    def _lock_run(self, conn: _Connection, run_id: str) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_LOCK_SPACE, run_id))

    def _insert_rows(self, conn: _Connection, statement: LiteralString, rows: Sequence[tuple[Any, ...]]) -> None:
        with conn.cursor() as cursor:
            cursor.executemany(statement, rows)
