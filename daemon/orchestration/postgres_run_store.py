"""The Postgres run store: one database shared by many workspaces and machines (``runs.database_url``).

Tables ``ided_runs`` (one row per run, its writer's workspace id in a column), ``ided_decisions`` and
``ided_events`` sit beside LangGraph's checkpoint tables in the same database. Records, entry data
and events are JSON text, and an entry's summary is stored JSON-encoded too: Postgres text and JSONB
refuse the NUL character, which a request or an agent's output may carry, and nothing may be lost.
One psycopg (v3) connection per store, in autocommit mode; every method runs its SQL in a worker
thread. Writers that read first hold a lock for the length of one transaction: ``update`` locks the
run's row (``SELECT ... FOR UPDATE``), ``log`` a transaction-scoped advisory lock keyed by the run,
so concurrent daemons neither lose an update nor number two entries alike. Creating the tables is
serialised by an advisory lock too (two daemons starting at once on an empty database). A connection
idle for a while is checked before use and reopened when the server dropped it (a restart); one that
breaks during a call fails that call with ``run_store_failed`` and is reopened on the next.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, LiteralString, TypeVar

import psycopg

from daemon.errors import ErrorCode, PipelineError
from daemon.orchestration.progress import ExecutionProgress
from daemon.orchestration.run_store import DecisionEntry, DecisionKind, RunRecord
from daemon.orchestration.run_store_open import redact_url
from daemon.orchestration.stop_decision import utc_now

__all__ = ["PROBE_AFTER_IDLE_SECONDS", "PostgresRunStore"]

logger = logging.getLogger(__name__)

PROBE_AFTER_IDLE_SECONDS = 30.0
"""A connection unused this long is checked with ``SELECT 1`` before the next statement."""

T = TypeVar("T")

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
    """CREATE TABLE IF NOT EXISTS ided_decisions (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        at TEXT NOT NULL,
        kind TEXT NOT NULL,
        summary TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    )""",
    """CREATE TABLE IF NOT EXISTS ided_events (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        event TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    )""",
)


def _not_found(run_id: str) -> PipelineError:
    return PipelineError(f"no run with id '{run_id}' (`ided runs` lists them)", code=ErrorCode.RUN_NOT_FOUND)


def _record(row: tuple[Any, ...]) -> RunRecord:
    return RunRecord.model_validate_json(row[0]).model_copy(update={"cancel_requested": bool(row[1])})


class PostgresRunStore:
    """Runs in a Postgres database; open with ``PostgresRunStore(url, workspace_id=...)``, close with ``close()``."""

    def __init__(
        self,
        url: str,
        *,
        workspace_id: str,
        connect_timeout_seconds: float = 10.0,
        probe_after_idle_seconds: float = PROBE_AFTER_IDLE_SECONDS,
    ) -> None:
        self._url = url
        self._workspace_id = workspace_id
        self._timeout = connect_timeout_seconds
        self._probe_after = probe_after_idle_seconds
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[tuple[Any, ...]] | None = None
        self._used = time.monotonic()
        with self._lock:
            conn = self._connection()
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (_LOCK_SPACE, _SCHEMA_LOCK))
                    for statement in _SCHEMA:
                        conn.execute(statement)
            except psycopg.Error as exc:
                conn.close()
                raise self._failed("cannot create its tables", exc) from exc

    @property
    def workspace_id(self) -> str:
        return self._workspace_id

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

    def _connection(self) -> psycopg.Connection[tuple[Any, ...]]:
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

    def _locked(self, work: Callable[[psycopg.Connection[tuple[Any, ...]]], T], *, write: bool = False) -> T:
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

    @staticmethod
    def _read(conn: psycopg.Connection[tuple[Any, ...]], run_id: str, *, for_update: bool = False) -> RunRecord:
        sql = "SELECT record, cancel_requested FROM ided_runs WHERE run_id = %s"
        row = conn.execute(sql + " FOR UPDATE" if for_update else sql, (run_id,)).fetchone()
        if row is None:
            raise _not_found(run_id)
        return _record(row)

    def _insert(self, conn: psycopg.Connection[tuple[Any, ...]], record: RunRecord) -> None:
        cursor = conn.execute(
            "INSERT INTO ided_runs (run_id, workspace, created_at, status, workflow, cancel_requested, record) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (run_id) DO NOTHING",
            (
                record.run_id,
                record.workspace or self._workspace_id,
                record.created_at,
                record.status.value,
                record.workflow,
                record.cancel_requested,
                record.model_dump_json(),
            ),
        )
        if cursor.rowcount != 1:
            raise PipelineError(f"a run with id '{record.run_id}' exists already", code=ErrorCode.RUN_EXISTS)

    def _update(self, conn: psycopg.Connection[tuple[Any, ...]], run_id: str, fields: dict[str, Any]) -> RunRecord:
        current = self._read(conn, run_id, for_update=True)
        record = RunRecord.model_validate({**current.model_dump(), **fields, "updated_at": utc_now()})
        conn.execute(
            "UPDATE ided_runs SET status = %s, workflow = %s, record = %s WHERE run_id = %s",
            (record.status.value, record.workflow, record.model_dump_json(), run_id),
        )
        return record

    def _list(self, conn: psycopg.Connection[tuple[Any, ...]], limit: int, all_workspaces: bool) -> list[RunRecord]:
        if all_workspaces:
            rows = conn.execute(
                "SELECT record, cancel_requested FROM ided_runs ORDER BY created_at DESC, run_id DESC LIMIT %s",
                (limit,),
            ).fetchall()
        else:
            rows = conn.execute(
                "SELECT record, cancel_requested FROM ided_runs WHERE workspace = %s "
                "ORDER BY created_at DESC, run_id DESC LIMIT %s",
                (self._workspace_id, limit),
            ).fetchall()
        return [_record(r) for r in rows]

    @staticmethod
    def _log(conn: psycopg.Connection[tuple[Any, ...]], run_id: str, values: tuple[str, str, str, str]) -> int:
        conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_LOCK_SPACE, run_id))
        row = conn.execute(
            "INSERT INTO ided_decisions (run_id, seq, at, kind, summary, data) "
            "SELECT %s, COALESCE(MAX(seq), 0) + 1, %s, %s, %s, %s FROM ided_decisions WHERE run_id = %s "
            "RETURNING seq",
            (run_id, *values, run_id),
        ).fetchone()
        assert row is not None
        return int(row[0])

    async def _run(self, work: Callable[[psycopg.Connection[tuple[Any, ...]]], T], *, write: bool = False) -> T:
        return await asyncio.to_thread(self._locked, work, write=write)

    # -- the port ---------------------------------------------------------------------------------

    async def create(self, record: RunRecord) -> RunRecord:
        stamped = record if record.workspace else record.model_copy(update={"workspace": self._workspace_id})
        await self._run(lambda conn: self._insert(conn, stamped), write=True)
        return stamped

    async def get(self, run_id: str) -> RunRecord:
        return await self._run(lambda conn: self._read(conn, run_id))

    async def update(self, run_id: str, **fields: Any) -> RunRecord:
        return await self._run(lambda conn: self._update(conn, run_id, fields), write=True)

    async def list(self, limit: int = 50, *, all_workspaces: bool = False) -> list[RunRecord]:
        return await self._run(lambda conn: self._list(conn, limit, all_workspaces))

    async def log(self, run_id: str, kind: DecisionKind, summary: str, data: dict[str, Any] | None = None) -> int:
        payload = json.dumps(data or {}, ensure_ascii=False, default=str)
        values = (utc_now(), kind.value, json.dumps(summary, ensure_ascii=False), payload)
        return await self._run(lambda conn: self._log(conn, run_id, values), write=True)

    async def decisions(self, run_id: str) -> list[DecisionEntry]:
        def read(conn: psycopg.Connection[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
            return conn.execute(
                "SELECT seq, at, kind, summary, data FROM ided_decisions WHERE run_id = %s ORDER BY seq",
                (run_id,),
            ).fetchall()

        return [
            DecisionEntry(
                run_id=run_id,
                seq=r[0],
                at=r[1],
                kind=DecisionKind(r[2]),
                summary=json.loads(r[3]),
                data=json.loads(r[4]),
            )
            for r in await self._run(read)
        ]

    async def save_event(self, event: ExecutionProgress) -> None:
        def write(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
            conn.execute(
                "INSERT INTO ided_events (run_id, seq, event) VALUES (%s, %s, %s) "
                "ON CONFLICT (run_id, seq) DO UPDATE SET event = excluded.event",
                (event.run_id, event.seq, event.model_dump_json()),
            )

        await self._run(write)

    async def events(self, run_id: str) -> list[ExecutionProgress]:
        def read(conn: psycopg.Connection[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
            return conn.execute("SELECT event FROM ided_events WHERE run_id = %s ORDER BY seq", (run_id,)).fetchall()

        return [ExecutionProgress.model_validate_json(r[0]) for r in await self._run(read)]

    async def last_event_seq(self, run_id: str) -> int:
        def read(conn: psycopg.Connection[tuple[Any, ...]]) -> int:
            row = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM ided_events WHERE run_id = %s", (run_id,)).fetchone()
            return int(row[0]) if row else 0

        return await self._run(read)

    async def request_cancel(self, run_id: str) -> None:
        def write(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
            cursor = conn.execute("UPDATE ided_runs SET cancel_requested = TRUE WHERE run_id = %s", (run_id,))
            if cursor.rowcount == 0:
                raise _not_found(run_id)

        await self._run(write)

    async def cancel_requested(self, run_id: str) -> bool:
        def read(conn: psycopg.Connection[tuple[Any, ...]]) -> bool:
            row = conn.execute("SELECT cancel_requested FROM ided_runs WHERE run_id = %s", (run_id,)).fetchone()
            return bool(row and row[0])

        return await self._run(read)

    async def clear_cancel(self, run_id: str) -> None:
        def write(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
            conn.execute("UPDATE ided_runs SET cancel_requested = FALSE WHERE run_id = %s", (run_id,))

        await self._run(write)

    async def import_run(
        self, record: RunRecord, decisions: Sequence[DecisionEntry], events: Sequence[ExecutionProgress]
    ) -> bool:
        def write(conn: psycopg.Connection[tuple[Any, ...]]) -> bool:
            try:
                self._insert(conn, record)
            except PipelineError as exc:
                if exc.code is ErrorCode.RUN_EXISTS:
                    return False
                raise
            with conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO ided_decisions (run_id, seq, at, kind, summary, data) VALUES (%s, %s, %s, %s, %s, %s)",
                    [
                        (
                            record.run_id,
                            d.seq,
                            d.at,
                            d.kind.value,
                            json.dumps(d.summary, ensure_ascii=False),
                            json.dumps(d.data, ensure_ascii=False),
                        )
                        for d in decisions
                    ],
                )
                cursor.executemany(
                    "INSERT INTO ided_events (run_id, seq, event) VALUES (%s, %s, %s)",
                    [(record.run_id, e.seq, e.model_dump_json()) for e in events],
                )
            return True

        return await self._run(write, write=True)
