"""Run records, decision logs and progress events: the models and the run-store port.

Kept apart from LangGraph's checkpoints: the records say what a run is and why it ended; the
checkpoints hold the graph state to resume from. Two adapters implement :class:`RunStore`: SQLite
(``sqlite_run_store``, one file per workspace, the default) and Postgres (``postgres_run_store``,
one database shared by many workspaces and machines, ``runs.database_url``); ``run_store_open``
picks one. Every writer stamps its records with its workspace id; ``list`` shows this workspace's
runs unless asked for every writer's. Both adapters pass one conformance suite
(tests/integration/test_run_store_conformance.py).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal, Protocol

from pydantic import Field

from daemon.core.frozen_model import FrozenModel
from daemon.core.processes import host_name, process_alive
from daemon.orchestration.plan import ExecutionPlan
from daemon.orchestration.progress import ExecutionProgress, RunChanges
from daemon.orchestration.selection_models import Selection
from daemon.orchestration.state import Attachment
from daemon.orchestration.stop_decision import StopDecision

__all__ = [
    "DecisionEntry",
    "DecisionKind",
    "RunMode",
    "RunRecord",
    "RunStatus",
    "RunStore",
    "host_name",
    "new_run_id",
    "process_alive",
]


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


class RunRecord(FrozenModel):
    """What a run is, how far it got and why it stopped."""

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
    workspace: str | None = Field(
        default=None, description="Id of the workspace that wrote the run (runs.workspace_id); the store stamps it."
    )
    host: str | None = Field(default=None, description="Machine of the process executing the run (beside pid).")


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


class DecisionEntry(FrozenModel):
    run_id: str
    seq: int
    at: str
    kind: DecisionKind
    summary: str
    data: dict[str, Any] = Field(default_factory=dict[str, Any])


class RunStore(Protocol):
    """Where runs are kept. ``workspace_id`` stamps every record this store creates.

    ``create`` refuses a run id that exists (``run_exists``); ``update`` reads, changes and writes
    a record in one transaction, so writers in other processes lose nothing; ``log`` numbers a run's
    decision entries 1, 2, ... without gaps or repeats whoever appends; ``save_event`` keeps one
    event per (run, seq), a repeated seq replaces it. Unknown ids raise ``run_not_found``; a store
    that cannot be reached raises ``run_store_failed``.
    """

    @property
    def workspace_id(self) -> str: ...

    @property
    def location(self) -> str:
        """Where the store is, for messages (a file path, or a database URL without its password)."""
        ...

    def close(self) -> None: ...

    async def create(self, record: RunRecord) -> RunRecord: ...

    async def get(self, run_id: str) -> RunRecord: ...

    async def update(self, run_id: str, **fields: Any) -> RunRecord:
        """Change fields of a stored record (validated), stamping ``updated_at``."""
        ...

    async def list(self, limit: int = 50, *, all_workspaces: bool = False) -> list[RunRecord]:
        """Newest first: this workspace's runs, or every writer's with ``all_workspaces``."""
        ...

    async def log(self, run_id: str, kind: DecisionKind, summary: str, data: dict[str, Any] | None = None) -> int:
        """Append to the run's decision log; returns the entry's sequence number."""
        ...

    async def decisions(self, run_id: str) -> list[DecisionEntry]: ...

    async def save_event(self, event: ExecutionProgress) -> None: ...

    async def events(self, run_id: str) -> list[ExecutionProgress]: ...

    async def last_event_seq(self, run_id: str) -> int: ...

    async def request_cancel(self, run_id: str) -> None: ...

    async def cancel_requested(self, run_id: str) -> bool: ...

    async def clear_cancel(self, run_id: str) -> None: ...

    async def import_run(
        self, record: RunRecord, decisions: Sequence[DecisionEntry], events: Sequence[ExecutionProgress]
    ) -> bool:
        """Store a run copied from another store as it is (record, numbered entries, events), in one
        transaction; False, and nothing written, when the run id is taken already (``ided runs migrate``)."""
        ...
