"""The SQLite run store (the default): one file per workspace, ``<state_dir>/pipeline/runs.sqlite3``.

WAL mode and a busy timeout let other processes (``ided cancel``, ``ided runs``, a second front)
read and write the same file while a run executes; writes that read first (``update``, ``log``)
take the write lock before they read (``BEGIN IMMEDIATE``). Every method runs its SQL in a worker
thread. Files written before runs carried a workspace id are stamped with this store's id on open.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from daemon.errors import ErrorCode, PipelineError
from daemon.orchestration.progress import ExecutionProgress
from daemon.orchestration.run_store import DecisionEntry, DecisionKind, RunRecord
from daemon.orchestration.stop_decision import utc_now

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
CREATE TABLE IF NOT EXISTS decisions (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    summary TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS events (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
"""


def runs_db_path(state_dir: Path) -> Path:
    return state_dir / "pipeline" / "runs.sqlite3"


def _not_found(run_id: str) -> PipelineError:
    return PipelineError(f"no run with id '{run_id}' (`ided runs` lists them)", code=ErrorCode.RUN_NOT_FOUND)


def _record(row: tuple[Any, ...]) -> RunRecord:
    return RunRecord.model_validate_json(row[0]).model_copy(update={"cancel_requested": bool(row[1])})


class SqliteRunStore:
    """One SQLite file; open with ``SqliteRunStore(path, workspace_id=...)``, close with ``close()``."""

    def __init__(self, path: Path, *, workspace_id: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._workspace_id = workspace_id
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, timeout=10.0)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA busy_timeout=10000")
            self._db.executescript(_SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(runs)")}
            if "workspace" not in columns:  # a file from before runs carried their workspace id
                self._db.execute("ALTER TABLE runs ADD COLUMN workspace TEXT NOT NULL DEFAULT ''")
            self._db.execute("UPDATE runs SET workspace = ? WHERE workspace = ''", (workspace_id,))
            self._db.execute("CREATE INDEX IF NOT EXISTS runs_workspace ON runs (workspace, created_at)")
            self._db.commit()
        except sqlite3.Error as exc:
            self._db.close()
            raise PipelineError(
                f"the run store {path} cannot be opened", code=ErrorCode.RUN_STORE_FAILED, cause=exc
            ) from exc

    @property
    def workspace_id(self) -> str:
        return self._workspace_id

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

    def _read(self, db: sqlite3.Connection, run_id: str) -> RunRecord:
        row = db.execute("SELECT record, cancel_requested FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            raise _not_found(run_id)
        return _record(row)

    def _insert(self, db: sqlite3.Connection, record: RunRecord) -> None:
        try:
            db.execute(
                "INSERT INTO runs (run_id, created_at, status, workflow, cancel_requested, record, workspace) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    record.run_id,
                    record.created_at,
                    record.status.value,
                    record.workflow,
                    int(record.cancel_requested),
                    record.model_dump_json(),
                    record.workspace or self._workspace_id,
                ),
            )
        except sqlite3.IntegrityError as exc:
            raise PipelineError(
                f"a run with id '{record.run_id}' exists already", code=ErrorCode.RUN_EXISTS, cause=exc
            ) from exc

    def _update(self, db: sqlite3.Connection, run_id: str, fields: dict[str, Any]) -> RunRecord:
        current = self._read(db, run_id)
        record = RunRecord.model_validate({**current.model_dump(), **fields, "updated_at": utc_now()})
        db.execute(
            "UPDATE runs SET status = ?, workflow = ?, record = ? WHERE run_id = ?",
            (record.status.value, record.workflow, record.model_dump_json(), run_id),
        )
        return record

    def _list(self, db: sqlite3.Connection, limit: int, all_workspaces: bool) -> list[RunRecord]:
        if all_workspaces:
            rows = db.execute(
                "SELECT record, cancel_requested FROM runs ORDER BY created_at DESC, run_id DESC LIMIT ?", (limit,)
            ).fetchall()
        else:
            rows = db.execute(
                "SELECT record, cancel_requested FROM runs WHERE workspace = ? "
                "ORDER BY created_at DESC, run_id DESC LIMIT ?",
                (self._workspace_id, limit),
            ).fetchall()
        return [_record(r) for r in rows]

    @staticmethod
    def _append(db: sqlite3.Connection, table: str, run_id: str, values: tuple[Any, ...]) -> int:
        (seq,) = db.execute(f"SELECT COALESCE(MAX(seq), 0) + 1 FROM {table} WHERE run_id = ?", (run_id,)).fetchone()
        marks = ", ".join("?" for _ in range(len(values) + 2))
        db.execute(f"INSERT INTO {table} VALUES ({marks})", (run_id, seq, *values))
        return int(seq)

    async def _run(self, work: Callable[[sqlite3.Connection], T], *, write: bool = False) -> T:
        return await asyncio.to_thread(self._locked, work, write=write)

    # -- the port ---------------------------------------------------------------------------------

    async def create(self, record: RunRecord) -> RunRecord:
        stamped = record if record.workspace else record.model_copy(update={"workspace": self._workspace_id})
        await self._run(lambda db: self._insert(db, stamped), write=True)
        return stamped

    async def get(self, run_id: str) -> RunRecord:
        return await self._run(lambda db: self._read(db, run_id))

    async def update(self, run_id: str, **fields: Any) -> RunRecord:
        return await self._run(lambda db: self._update(db, run_id, fields), write=True)

    async def list(self, limit: int = 50, *, all_workspaces: bool = False) -> list[RunRecord]:
        return await self._run(lambda db: self._list(db, limit, all_workspaces))

    async def log(self, run_id: str, kind: DecisionKind, summary: str, data: dict[str, Any] | None = None) -> int:
        payload = json.dumps(data or {}, ensure_ascii=False, default=str)
        values = (utc_now(), kind.value, summary, payload)
        return await self._run(lambda db: self._append(db, "decisions", run_id, values), write=True)

    async def decisions(self, run_id: str) -> list[DecisionEntry]:
        def read(db: sqlite3.Connection) -> list[tuple[Any, ...]]:
            return db.execute(
                "SELECT seq, at, kind, summary, data FROM decisions WHERE run_id = ? ORDER BY seq", (run_id,)
            ).fetchall()

        return [
            DecisionEntry(
                run_id=run_id, seq=r[0], at=r[1], kind=DecisionKind(r[2]), summary=r[3], data=json.loads(r[4])
            )
            for r in await self._run(read)
        ]

    async def save_event(self, event: ExecutionProgress) -> None:
        def write(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT OR REPLACE INTO events VALUES (?, ?, ?)", (event.run_id, event.seq, event.model_dump_json())
            )

        await self._run(write, write=True)

    async def events(self, run_id: str) -> list[ExecutionProgress]:
        def read(db: sqlite3.Connection) -> list[tuple[Any, ...]]:
            return db.execute("SELECT event FROM events WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()

        return [ExecutionProgress.model_validate_json(r[0]) for r in await self._run(read)]

    async def last_event_seq(self, run_id: str) -> int:
        def read(db: sqlite3.Connection) -> int:
            (seq,) = db.execute("SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = ?", (run_id,)).fetchone()
            return int(seq)

        return await self._run(read)

    async def request_cancel(self, run_id: str) -> None:
        def write(db: sqlite3.Connection) -> None:
            self._read(db, run_id)
            db.execute("UPDATE runs SET cancel_requested = 1 WHERE run_id = ?", (run_id,))

        await self._run(write, write=True)

    async def cancel_requested(self, run_id: str) -> bool:
        def read(db: sqlite3.Connection) -> bool:
            row = db.execute("SELECT cancel_requested FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            return bool(row and row[0])

        return await self._run(read)

    async def clear_cancel(self, run_id: str) -> None:
        def write(db: sqlite3.Connection) -> None:
            db.execute("UPDATE runs SET cancel_requested = 0 WHERE run_id = ?", (run_id,))

        await self._run(write, write=True)

    async def import_run(
        self, record: RunRecord, decisions: Sequence[DecisionEntry], events: Sequence[ExecutionProgress]
    ) -> bool:
        def write(db: sqlite3.Connection) -> bool:
            if db.execute("SELECT 1 FROM runs WHERE run_id = ?", (record.run_id,)).fetchone() is not None:
                return False
            self._insert(db, record)
            db.execute(
                "UPDATE runs SET cancel_requested = ? WHERE run_id = ?", (int(record.cancel_requested), record.run_id)
            )
            db.executemany(
                "INSERT INTO decisions VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (record.run_id, d.seq, d.at, d.kind.value, d.summary, json.dumps(d.data, ensure_ascii=False))
                    for d in decisions
                ],
            )
            db.executemany(
                "INSERT INTO events VALUES (?, ?, ?)", [(record.run_id, e.seq, e.model_dump_json()) for e in events]
            )
            return True

        return await self._run(write, write=True)
