"""The run-store port written once over SQL, for the SQLite and the Postgres adapters.

Both engines hold the same three tables (runs, decision entries, progress events) and run the
same statements; an adapter supplies what differs between them (:class:`SqlDialect`: table names,
parameter mark, a row lock for read-modify-write, how a decision's summary is stored) and its
connection handling: ``_locked`` runs work on the connection under a thread lock (in one
transaction for a write), ``_lock_run`` keeps two writers from numbering one run's entries alike,
``_insert_rows`` inserts many rows at once. Every method of the port runs its SQL in a worker
thread.
"""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, LiteralString, Protocol, TypeVar

from daemon.core.run_models import DecisionEntry, DecisionKind, ExecutionProgress, RunRecord, utc_now
from daemon.errors import ErrorCode, PipelineError

__all__ = ["SqlConnection", "SqlDialect", "SqlRunStore"]

T = TypeVar("T")


class _Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class SqlConnection(Protocol):
    """What the statements need of a DB-API connection (``sqlite3`` and ``psycopg`` both have it)."""

    def execute(self, query: LiteralString, params: Sequence[Any], /) -> _Cursor: ...


C = TypeVar("C", bound=SqlConnection)


@dataclass(frozen=True, kw_only=True)
class SqlDialect:
    """What differs between the engines in the statements."""

    runs: LiteralString
    decisions: LiteralString
    events: LiteralString
    mark: LiteralString
    """The parameter placeholder (``?`` or ``%s``)."""
    row_lock: LiteralString = ""
    """Appended to the read of a run about to be updated (`` FOR UPDATE``)."""
    json_summary: bool = False
    """Whether a decision's summary is stored JSON-encoded (Postgres text refuses the NUL character)."""

    def sql(self, template: LiteralString) -> LiteralString:
        """``template`` with ``{runs}``, ``{decisions}``, ``{events}`` and ``{p}`` (a parameter) filled in."""
        return template.format(runs=self.runs, decisions=self.decisions, events=self.events, p=self.mark)

    def entry_tables(self) -> tuple[LiteralString, ...]:
        """The statements creating the decision-entry and event tables (alike in both engines)."""
        return (
            self.sql(
                """CREATE TABLE IF NOT EXISTS {decisions} (
                    run_id TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    at TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    summary TEXT NOT NULL,
                    data TEXT NOT NULL,
                    PRIMARY KEY (run_id, seq)
                )"""
            ),
            self.sql(
                """CREATE TABLE IF NOT EXISTS {events} (
                    run_id TEXT NOT NULL,
                    seq INTEGER NOT NULL,
                    event TEXT NOT NULL,
                    PRIMARY KEY (run_id, seq)
                )"""
            ),
        )

    def store_summary(self, summary: str) -> str:
        return json.dumps(summary, ensure_ascii=False) if self.json_summary else summary

    def load_summary(self, stored: str) -> str:
        return str(json.loads(stored)) if self.json_summary else stored


def _not_found(run_id: str) -> PipelineError:
    return PipelineError(f"no run with id '{run_id}' (`ided runs` lists them)", code=ErrorCode.RUN_NOT_FOUND)


def _record(row: tuple[Any, ...]) -> RunRecord:
    return RunRecord.model_validate_json(row[0]).model_copy(update={"cancel_requested": bool(row[1])})


class SqlRunStore(ABC, Generic[C]):
    """The port's methods over an adapter's connection; see the module docstring for what it supplies."""

    dialect: SqlDialect

    def __init__(self, *, workspace_id: str) -> None:
        self._workspace_id = workspace_id

    @property
    def workspace_id(self) -> str:
        return self._workspace_id

    # -- what an adapter supplies ---------------------------------------------------------------

    @abstractmethod
    def _locked(self, work: Callable[[C], T], *, write: bool = False) -> T:
        """``work`` on the connection under the thread lock; with ``write``, inside one transaction."""

    def _lock_run(self, conn: C, run_id: str) -> None:
        """Hold, until the transaction ends, the right to number ``run_id``'s entries (none by default:
        the adapter's write transaction holds the whole store)."""

    @abstractmethod
    def _insert_rows(self, conn: C, statement: LiteralString, rows: Sequence[tuple[Any, ...]]) -> None:
        """Run ``statement`` once for each of ``rows``."""

    # -- statements (run in threads) ------------------------------------------------------------

    def _read(self, conn: C, run_id: str, *, for_update: bool = False) -> RunRecord:
        sql = self.dialect.sql("SELECT record, cancel_requested FROM {runs} WHERE run_id = {p}")
        row = conn.execute(sql + self.dialect.row_lock if for_update else sql, (run_id,)).fetchone()
        if row is None:
            raise _not_found(run_id)
        return _record(row)

    def _insert(self, conn: C, record: RunRecord) -> None:
        cursor = conn.execute(
            self.dialect.sql(
                "INSERT INTO {runs} (run_id, workspace, created_at, status, workflow, cancel_requested, record) "
                "VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p}) ON CONFLICT (run_id) DO NOTHING"
            ),
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

    def _update(self, conn: C, run_id: str, fields: dict[str, Any]) -> RunRecord:
        current = self._read(conn, run_id, for_update=True)
        record = RunRecord.model_validate({**current.model_dump(), **fields, "updated_at": utc_now()})
        conn.execute(
            self.dialect.sql("UPDATE {runs} SET status = {p}, workflow = {p}, record = {p} WHERE run_id = {p}"),
            (record.status.value, record.workflow, record.model_dump_json(), run_id),
        )
        return record

    def _list(self, conn: C, limit: int, all_workspaces: bool) -> list[RunRecord]:
        if all_workspaces:
            rows = conn.execute(
                self.dialect.sql(
                    "SELECT record, cancel_requested FROM {runs} ORDER BY created_at DESC, run_id DESC LIMIT {p}"
                ),
                (limit,),
            ).fetchall()
        else:
            rows = conn.execute(
                self.dialect.sql(
                    "SELECT record, cancel_requested FROM {runs} WHERE workspace = {p} "
                    "ORDER BY created_at DESC, run_id DESC LIMIT {p}"
                ),
                (self._workspace_id, limit),
            ).fetchall()
        return [_record(r) for r in rows]

    def _log(self, conn: C, run_id: str, values: tuple[str, str, str, str]) -> int:
        self._lock_run(conn, run_id)
        (seq,) = conn.execute(
            self.dialect.sql("SELECT COALESCE(MAX(seq), 0) + 1 FROM {decisions} WHERE run_id = {p}"), (run_id,)
        ).fetchone()
        conn.execute(
            self.dialect.sql(
                "INSERT INTO {decisions} (run_id, seq, at, kind, summary, data) VALUES ({p}, {p}, {p}, {p}, {p}, {p})"
            ),
            (run_id, seq, *values),
        )
        return int(seq)

    def _set_cancel(self, conn: C, run_id: str, requested: bool) -> int:
        sql = self.dialect.sql("UPDATE {runs} SET cancel_requested = {p} WHERE run_id = {p}")
        return conn.execute(sql, (requested, run_id)).rowcount

    async def _run(self, work: Callable[[C], T], *, write: bool = False) -> T:
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
        values = (utc_now(), kind.value, self.dialect.store_summary(summary), payload)
        return await self._run(lambda conn: self._log(conn, run_id, values), write=True)

    async def decisions(self, run_id: str) -> list[DecisionEntry]:
        sql = self.dialect.sql("SELECT seq, at, kind, summary, data FROM {decisions} WHERE run_id = {p} ORDER BY seq")
        rows = await self._run(lambda conn: conn.execute(sql, (run_id,)).fetchall())
        return [
            DecisionEntry(
                run_id=run_id,
                seq=r[0],
                at=r[1],
                kind=DecisionKind(r[2]),
                summary=self.dialect.load_summary(r[3]),
                data=json.loads(r[4]),
            )
            for r in rows
        ]

    async def save_event(self, event: ExecutionProgress) -> None:
        sql = self.dialect.sql(
            "INSERT INTO {events} (run_id, seq, event) VALUES ({p}, {p}, {p}) "
            "ON CONFLICT (run_id, seq) DO UPDATE SET event = excluded.event"
        )
        values = (event.run_id, event.seq, event.model_dump_json())
        await self._run(lambda conn: conn.execute(sql, values), write=True)

    async def events(self, run_id: str) -> list[ExecutionProgress]:
        sql = self.dialect.sql("SELECT event FROM {events} WHERE run_id = {p} ORDER BY seq")
        rows = await self._run(lambda conn: conn.execute(sql, (run_id,)).fetchall())
        return [ExecutionProgress.model_validate_json(r[0]) for r in rows]

    async def last_event_seq(self, run_id: str) -> int:
        sql = self.dialect.sql("SELECT COALESCE(MAX(seq), 0) FROM {events} WHERE run_id = {p}")
        row = await self._run(lambda conn: conn.execute(sql, (run_id,)).fetchone())
        return int(row[0]) if row else 0

    async def request_cancel(self, run_id: str) -> None:
        if await self._run(lambda conn: self._set_cancel(conn, run_id, True), write=True) == 0:
            raise _not_found(run_id)

    async def cancel_requested(self, run_id: str) -> bool:
        sql = self.dialect.sql("SELECT cancel_requested FROM {runs} WHERE run_id = {p}")
        row = await self._run(lambda conn: conn.execute(sql, (run_id,)).fetchone())
        return bool(row and row[0])

    async def clear_cancel(self, run_id: str) -> None:
        await self._run(lambda conn: self._set_cancel(conn, run_id, False), write=True)

    async def import_run(
        self, record: RunRecord, decisions: Sequence[DecisionEntry], events: Sequence[ExecutionProgress]
    ) -> bool:
        entries = [
            (
                record.run_id,
                d.seq,
                d.at,
                d.kind.value,
                self.dialect.store_summary(d.summary),
                json.dumps(d.data, ensure_ascii=False),
            )
            for d in decisions
        ]

        def write(conn: C) -> bool:
            try:
                self._insert(conn, record)
            except PipelineError as exc:
                if exc.code is ErrorCode.RUN_EXISTS:
                    return False
                raise
            self._insert_rows(
                conn,
                self.dialect.sql(
                    "INSERT INTO {decisions} (run_id, seq, at, kind, summary, data) "
                    "VALUES ({p}, {p}, {p}, {p}, {p}, {p})"
                ),
                entries,
            )
            self._insert_rows(
                conn,
                self.dialect.sql("INSERT INTO {events} (run_id, seq, event) VALUES ({p}, {p}, {p})"),
                [(record.run_id, e.seq, e.model_dump_json()) for e in events],
            )
            return True

        return await self._run(write, write=True)
