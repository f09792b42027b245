"""Writers for the run-store conformance suite, in a module light to import: spawned worker processes
import it (not the test module with its workflow catalog) to write as another daemon would.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from daemon.config import RunsConfig
from daemon.core.run_models import DecisionKind, ExecutionProgress, ProgressKind, RunRecord, RunStatus, utc_now
from daemon.orchestration.run_store import RunStore
from daemon.orchestration.run_store_open import connect_run_store

__all__ = ["RUNS_PER_WRITER", "SHARED", "WRITERS", "StoreSpec", "event", "record", "write_concurrently"]


@dataclass(frozen=True)
class StoreSpec:
    """Where one adapter's store lives; picklable, so worker processes open their own connection."""

    kind: str
    state_dir: Path
    database_url: str | None

    def open(self, workspace_id: str) -> RunStore:
        runs = RunsConfig(database_url=self.database_url, workspace_id=workspace_id)
        return connect_run_store(runs, state_dir=self.state_dir, workspace=self.state_dir)


def record(run_id: str, *, created_at: str | None = None, **fields: object) -> RunRecord:
    now = created_at or utc_now()
    return RunRecord.model_validate(
        {
            "run_id": run_id,
            "status": RunStatus.PLANNED,
            "request": "Fix",
            "created_at": now,
            "updated_at": now,
            **fields,
        }
    )


def event(run_id: str, seq: int, status: str = "running") -> ExecutionProgress:
    return ExecutionProgress(
        run_id=run_id, seq=seq, timestamp=utc_now(), event=ProgressKind.NODE_STARTED, workflow="w", status=status
    )


WRITERS = (("machine-1", "ws-a"), ("machine-1", "ws-a"), ("machine-2", "ws-b"), ("machine-2", "ws-b"))
RUNS_PER_WRITER = 12
SHARED = "shared-run"


def write_concurrently(spec: StoreSpec, writer: int, workspace_id: str) -> list[int]:
    """One writer process: its own runs, its own decisions, and entries appended to the shared run."""

    async def work() -> list[int]:
        store = spec.open(workspace_id)
        try:
            seqs: list[int] = []
            for i in range(RUNS_PER_WRITER):
                run_id = f"w{writer}-{i:02d}"
                await store.create(record(run_id))
                await store.log(run_id, DecisionKind.SELECTION, f"{run_id} selected")
                await store.update(run_id, status=RunStatus.SUCCEEDED, finished_at=utc_now())
                await store.save_event(event(run_id, 1, "succeeded"))
                seqs.append(await store.log(SHARED, DecisionKind.FOLLOW_UP, f"writer {writer} entry {i}"))
            return seqs
        finally:
            store.close()

    return asyncio.run(work())
