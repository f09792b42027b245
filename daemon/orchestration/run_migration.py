"""Copying a workspace's runs from one store to another (``ided runs migrate --to URL``).

Every run this workspace wrote is copied whole: its record (workspace id kept), its decision log
with the original numbers and times, its progress events, and the LangGraph checkpoints of its
thread (oldest first, each with its pending writes), so an interrupted run resumes from the new
store. A run whose id the target holds already is skipped and reported, never overwritten: running
the migration twice copies nothing the second time. A run's checkpoints go first and its record last
(in one transaction with its log and events), so a migration cut short is finished by running it
again. The source is only read.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from daemon.core.run_models import MigrationReport
from daemon.errors import ErrorCode, PipelineError
from daemon.orchestration.run_store import RunStore

__all__ = ["migrate_runs"]

logger = logging.getLogger(__name__)

_ALL_RUNS = 1_000_000


async def _copy_checkpoints(source: BaseCheckpointSaver[str], target: BaseCheckpointSaver[str], run_id: str) -> int:
    thread: RunnableConfig = {"configurable": {"thread_id": run_id}}
    tuples: list[CheckpointTuple] = [t async for t in source.alist(thread)]
    for item in reversed(tuples):  # oldest first: each names its parent
        configurable: dict[str, Any] = dict(item.config.get("configurable", {}))
        parent: dict[str, Any] = {"thread_id": run_id, "checkpoint_ns": configurable.get("checkpoint_ns", "")}
        if item.parent_config is not None:
            parent["checkpoint_id"] = item.parent_config.get("configurable", {}).get("checkpoint_id")
        stored = await target.aput(
            {"configurable": parent}, item.checkpoint, item.metadata, dict(item.checkpoint["channel_versions"])
        )
        writes: dict[str, list[tuple[str, Any]]] = defaultdict(list)
        for task_id, channel, value in item.pending_writes or ():
            writes[task_id].append((channel, value))
        for task_id, task_writes in writes.items():
            await target.aput_writes(stored, task_writes, task_id)
    return len(tuples)


async def _held(store: RunStore, run_id: str) -> bool:
    try:
        await store.get(run_id)
    except PipelineError as exc:
        if exc.code is ErrorCode.RUN_NOT_FOUND:
            return False
        raise
    return True


async def migrate_runs(
    source: RunStore,
    target: RunStore,
    *,
    source_checkpoints: BaseCheckpointSaver[str] | None = None,
    target_checkpoints: BaseCheckpointSaver[str] | None = None,
) -> MigrationReport:
    """Copy the runs ``source`` lists for its workspace into ``target`` (with their checkpoints when both
    savers are given)."""
    copied: list[str] = []
    skipped: list[str] = []
    checkpoints = 0
    records = await source.list(_ALL_RUNS)
    for record in reversed(records):  # oldest first, as they were written
        run_id = record.run_id
        stamped = record if record.workspace else record.model_copy(update={"workspace": source.workspace_id})
        if await _held(target, run_id):
            skipped.append(run_id)
            continue
        decisions = await source.decisions(run_id)
        events = await source.events(run_id)
        if source_checkpoints is not None and target_checkpoints is not None:  # first: the record marks it done
            checkpoints += await _copy_checkpoints(source_checkpoints, target_checkpoints, run_id)
        if not await target.import_run(stamped, decisions, events):
            skipped.append(run_id)
            continue
        copied.append(run_id)
        logger.info("run %s copied (%d decisions, %d events)", run_id, len(decisions), len(events))
    return MigrationReport(
        copied=tuple(copied),
        skipped=tuple(skipped),
        checkpoints=checkpoints,
        source=source.location,
        target=target.location,
    )
