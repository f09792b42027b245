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

from collections.abc import Sequence
from typing import Any, Protocol

from daemon.core.processes import host_name, process_alive
from daemon.core.run_models import DecisionEntry, DecisionKind, ExecutionProgress, RunRecord

__all__ = ["RunStore", "host_name", "process_alive"]


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
