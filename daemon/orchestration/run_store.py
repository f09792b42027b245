"""Run records, decision logs and progress events in SQLite (``<state_dir>/pipeline/runs.sqlite3``).

Kept apart from LangGraph's checkpoints: the records say what a run is and why it ended; the
checkpoints hold the graph state to resume from. WAL mode and a busy timeout let another process
(``ided cancel``, ``ided runs``) read and flag runs while one executes. Every method runs its SQL in
a worker thread.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import sqlite3
import threading
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from daemon.errors import ErrorCode, PipelineError
from daemon.orchestration.plan import ExecutionPlan
from daemon.orchestration.progress import ExecutionProgress, RunChanges
from daemon.orchestration.selection_models import Selection
from daemon.orchestration.state import Attachment
from daemon.orchestration.stop_decision import StopDecision, utc_now

__all__ = [
    "DecisionEntry",
    "DecisionKind",
    "RunMode",
    "RunRecord",
    "RunStatus",
    "RunStore",
    "new_run_id",
    "process_alive",
]

logger = logging.getLogger(__name__)

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


def new_run_id() -> str:
    """Sortable and short: ``20250101-120000-a1b2c3``."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


class RunStatus(StrEnum):
    PLANNED = "planned"
    RUNNING = "running"
    INTERRUPTED = "interrupted"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    ABORTED = "aborted"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        return self in (RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.ABORTED, RunStatus.CANCELLED)


RunMode = Literal["ask", "code"]
"""ask: read-only tools, no worktree; code: agents edit a worktree on the run's branch, reviewed at the end."""


class RunRecord(BaseModel):
    """What a run is, how far it got and why it stopped."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    status: RunStatus
    request: str
    workflow: str | None = None
    created_at: str
    updated_at: str
    finished_at: str | None = None
    selection: Selection | None = None
    plan: ExecutionPlan | None = None
    stop: StopDecision | None = None
    error: str | None = None
    pid: int | None = Field(default=None, description="Process executing the run while it is running.")
    resumed: int = Field(default=0, description="How many times the run was resumed.")
    cancel_requested: bool = False
    mode: RunMode = "code"
    include_uncommitted: bool = Field(
        default=False, description="The worktree started from the user's uncommitted changes."
    )
    attachments: tuple[Attachment, ...] = Field(default=(), description="Context the user attached to the request.")
    changes: RunChanges | None = Field(default=None, description="Editing runs: branch, commits and changed files.")
    follow_ups: int = Field(default=0, description="Feedback rounds answered after the run ended.")


class DecisionKind(StrEnum):
    SELECTION = "selection"
    STAGE_DECISION = "stage_decision"
    PLAN = "plan"
    ROUTE = "route"
    RETRY = "retry"
    ENRICHMENT = "enrichment"
    STAGE_RESULT = "stage_result"
    RESUME = "resume"
    CANCEL = "cancel"
    STOP = "stop"
    ERROR = "error"
    WORKTREE = "worktree"
    COMMIT = "commit"
    FOLLOW_UP = "follow_up"
    REVIEW = "review"
    ACCEPT = "accept"
    REJECT = "reject"
    ROLLBACK = "rollback"
    TRUST = "trust"


class DecisionEntry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    seq: int
    at: str
    kind: DecisionKind
    summary: str
    data: dict[str, Any] = Field(default_factory=dict[str, Any])


class RunStore:
    """One SQLite file; open with ``RunStore(path)``, close with ``close()``."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, timeout=10.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA busy_timeout=10000")
        self._db.executescript(_SCHEMA)
        self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- synchronous core (run in threads) ------------------------------------------------------

    def _write_record(self, record: RunRecord) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO runs (run_id, created_at, status, workflow, cancel_requested, record) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(run_id) DO UPDATE SET status=excluded.status, "
                "workflow=excluded.workflow, record=excluded.record",
                (
                    record.run_id,
                    record.created_at,
                    record.status.value,
                    record.workflow,
                    int(record.cancel_requested),
                    record.model_dump_json(),
                ),
            )
            self._db.commit()

    def _read_record(self, run_id: str) -> RunRecord:
        with self._lock:
            row = self._db.execute("SELECT record, cancel_requested FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            raise PipelineError(f"no run with id '{run_id}' (`ided runs` lists them)", code=ErrorCode.RUN_NOT_FOUND)
        record = RunRecord.model_validate_json(row[0])
        return record.model_copy(update={"cancel_requested": bool(row[1])})

    def _list(self, limit: int) -> list[RunRecord]:
        with self._lock:
            rows = self._db.execute(
                "SELECT record, cancel_requested FROM runs ORDER BY created_at DESC, run_id DESC LIMIT ?", (limit,)
            ).fetchall()
        return [RunRecord.model_validate_json(r[0]).model_copy(update={"cancel_requested": bool(r[1])}) for r in rows]

    def _append(self, table: str, run_id: str, values: tuple[Any, ...]) -> int:
        with self._lock:
            self._db.commit()
            self._db.execute("BEGIN IMMEDIATE")  # the write lock first: other processes append to the same run
            try:
                (seq,) = self._db.execute(
                    f"SELECT COALESCE(MAX(seq), 0) + 1 FROM {table} WHERE run_id = ?", (run_id,)
                ).fetchone()
                marks = ", ".join("?" for _ in range(len(values) + 2))
                self._db.execute(f"INSERT INTO {table} VALUES ({marks})", (run_id, seq, *values))
            except BaseException:
                self._db.rollback()
                raise
            self._db.commit()
        return int(seq)

    # -- async API --------------------------------------------------------------------------------

    async def create(self, record: RunRecord) -> RunRecord:
        await asyncio.to_thread(self._write_record, record)
        return record

    async def get(self, run_id: str) -> RunRecord:
        return await asyncio.to_thread(self._read_record, run_id)

    async def update(self, run_id: str, **fields: Any) -> RunRecord:
        """Change fields of a stored record (validated), stamping ``updated_at``."""

        def change() -> RunRecord:
            current = self._read_record(run_id)
            record = RunRecord.model_validate({**current.model_dump(), **fields, "updated_at": utc_now()})
            self._write_record(record)
            return record

        return await asyncio.to_thread(change)

    async def list(self, limit: int = 50) -> list[RunRecord]:
        return await asyncio.to_thread(self._list, limit)

    async def log(self, run_id: str, kind: DecisionKind, summary: str, data: dict[str, Any] | None = None) -> int:
        """Append to the run's decision log; returns the entry's sequence number."""
        payload = json.dumps(data or {}, ensure_ascii=False, default=str)
        return await asyncio.to_thread(self._append, "decisions", run_id, (utc_now(), kind.value, summary, payload))

    async def decisions(self, run_id: str) -> list[DecisionEntry]:
        def read() -> list[DecisionEntry]:
            with self._lock:
                rows = self._db.execute(
                    "SELECT seq, at, kind, summary, data FROM decisions WHERE run_id = ? ORDER BY seq", (run_id,)
                ).fetchall()
            return [
                DecisionEntry(
                    run_id=run_id, seq=r[0], at=r[1], kind=DecisionKind(r[2]), summary=r[3], data=json.loads(r[4])
                )
                for r in rows
            ]

        return await asyncio.to_thread(read)

    async def save_event(self, event: ExecutionProgress) -> None:
        def write() -> None:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO events VALUES (?, ?, ?)", (event.run_id, event.seq, event.model_dump_json())
                )
                self._db.commit()

        await asyncio.to_thread(write)

    async def events(self, run_id: str) -> list[ExecutionProgress]:
        def read() -> list[ExecutionProgress]:
            with self._lock:
                rows = self._db.execute("SELECT event FROM events WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
            return [ExecutionProgress.model_validate_json(r[0]) for r in rows]

        return await asyncio.to_thread(read)

    async def last_event_seq(self, run_id: str) -> int:
        def read() -> int:
            with self._lock:
                (seq,) = self._db.execute(
                    "SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = ?", (run_id,)
                ).fetchone()
            return int(seq)

        return await asyncio.to_thread(read)

    async def request_cancel(self, run_id: str) -> None:
        def write() -> None:
            self._read_record(run_id)
            with self._lock:
                self._db.execute("UPDATE runs SET cancel_requested = 1 WHERE run_id = ?", (run_id,))
                self._db.commit()

        await asyncio.to_thread(write)

    async def cancel_requested(self, run_id: str) -> bool:
        def read() -> bool:
            with self._lock:
                row = self._db.execute("SELECT cancel_requested FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            return bool(row and row[0])

        return await asyncio.to_thread(read)

    async def clear_cancel(self, run_id: str) -> None:
        def write() -> None:
            with self._lock:
                self._db.execute("UPDATE runs SET cancel_requested = 0 WHERE run_id = ?", (run_id,))
                self._db.commit()

        await asyncio.to_thread(write)


def process_alive(pid: int | None) -> bool:
    """Whether ``pid`` names a live process on this machine."""
    if pid is None or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
