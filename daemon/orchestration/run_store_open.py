"""Opening the configured run store: SQLite in the state dir by default, Postgres with ``runs.database_url``.

The Postgres adapter needs psycopg (the ``postgres`` extra); without it opening fails with
``driver_missing`` and names the packages to install. ``run_workspace_id`` is the id a workspace
stamps on its runs: ``runs.workspace_id`` or ``<host>:<workspace path>``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path

from daemon.config import RunsConfig
from daemon.orchestration.database_urls import driver_missing
from daemon.orchestration.run_store import RunStore, host_name
from daemon.orchestration.sqlite_run_store import SqliteRunStore, runs_db_path

__all__ = [
    "connect_run_store",
    "open_run_store",
    "run_workspace_id",
]

logger = logging.getLogger(__name__)


def run_workspace_id(runs: RunsConfig, workspace: Path) -> str:
    return runs.workspace_id or f"{host_name()}:{workspace.resolve()}"


def connect_run_store(runs: RunsConfig, *, state_dir: Path, workspace: Path) -> RunStore:
    """The configured store, open (blocking: call it in a worker thread from async code)."""
    workspace_id = run_workspace_id(runs, workspace)
    if runs.database_url is None:
        return SqliteRunStore(runs_db_path(state_dir), workspace_id=workspace_id)
    try:
        from daemon.orchestration.postgres_run_store import PostgresRunStore
    except ImportError as exc:
        if not (exc.name or "").startswith("psycopg"):
            raise
        raise driver_missing("runs.database_url", exc) from exc
    store = PostgresRunStore(
        runs.database_url, workspace_id=workspace_id, connect_timeout_seconds=runs.connect_timeout_seconds
    )
    logger.info("runs of %s are kept in %s", workspace_id, store.location)
    return store


@asynccontextmanager
async def open_run_store(runs: RunsConfig, *, state_dir: Path, workspace: Path) -> AsyncGenerator[RunStore]:
    """The configured store, open for the duration of the context."""
    store = await asyncio.to_thread(connect_run_store, runs, state_dir=state_dir, workspace=workspace)
    try:
        yield store
    finally:
        await asyncio.to_thread(store.close)
