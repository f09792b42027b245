"""LangGraph checkpoint savers: SQLite by default, Postgres with ``runs.database_url`` (optional driver).

Checkpoints live apart from run records: by default in ``<state_dir>/pipeline/checkpoints.sqlite3``;
with ``runs.database_url`` (or the older ``pipeline.checkpoint.backend = "postgres"`` with
``postgres_url``) in LangGraph's own tables of that Postgres database, keyed by run id. The graph
runs with ``durability="sync"``, so a step's checkpoint is stored before the next step starts and a
killed process resumes from the last finished node. The Postgres saver borrows connections from a
small pool that checks each before lending it, so a server restart between steps costs nothing; its
table set-up runs under an advisory lock, so daemons that start at once on an empty database do not
race its migrations. A SQLite checkpoint file that is damaged or not a database is ``run_store_failed``
naming the file, never a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import sqlite3
import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from daemon.config import CheckpointConfig
from daemon.errors import ConfigError, ErrorCode, PipelineError
from daemon.orchestration.database_urls import driver_missing, redact_url

__all__ = ["checkpoint_path", "checkpoint_url", "open_checkpointer"]


_LOCK_SPACE = 0x1DED  # the run store's advisory-lock space; 1: the checkpoint tables' set-up
_SETUP_LOCK = 1
_CONNECT_TIMEOUT = 10
_SETUP_WAIT_S = 300.0
"""How long a process waits for another's set-up of the checkpoint tables."""
_SETUP_RETRY_S = 0.05


async def _setup_lock(lock: Any) -> None:
    """Take the set-up's advisory lock on ``lock``, polling with ``pg_try_advisory_lock``.

    Not ``pg_advisory_lock``: a session blocked in it is a transaction in progress, and the set-up
    it waits for runs ``CREATE INDEX CONCURRENTLY``, which waits for every transaction older than
    itself. The holder then waits for the waiters and they for the holder, through a lock Postgres
    cannot see as one cycle (the holder's lock and its index build are two connections): every
    process starting at once on an empty database hung. A poll holds no transaction between tries.
    """
    deadline = time.monotonic() + _SETUP_WAIT_S
    while True:
        row = await (await lock.execute("SELECT pg_try_advisory_lock(%s, %s)", (_LOCK_SPACE, _SETUP_LOCK))).fetchone()
        if row is not None and row[0]:
            return
        if time.monotonic() > deadline:
            raise PipelineError(
                f"another process has been setting up the checkpoint tables for over {_SETUP_WAIT_S:.0f} s",
                code=ErrorCode.RUN_STORE_FAILED,
            )
        await asyncio.sleep(_SETUP_RETRY_S)


def checkpoint_path(config: CheckpointConfig, state_dir: Path) -> Path:
    return Path(config.sqlite_path) if config.sqlite_path else state_dir / "pipeline" / "checkpoints.sqlite3"


def checkpoint_url(config: CheckpointConfig, database_url: str | None) -> str | None:
    """The Postgres URL checkpoints go to, or None for SQLite. Raises ConfigError for a half-set backend."""
    if database_url:
        return database_url
    if config.backend == "postgres":
        if not config.postgres_url:
            raise ConfigError("pipeline.checkpoint.backend = 'postgres' needs pipeline.checkpoint.postgres_url")
        return config.postgres_url
    return None


@asynccontextmanager
async def _postgres(url: str) -> AsyncGenerator[BaseCheckpointSaver[str]]:
    try:
        module = importlib.import_module("langgraph.checkpoint.postgres.aio")
        psycopg = importlib.import_module("psycopg")
        rows = importlib.import_module("psycopg.rows")
        pools = importlib.import_module("psycopg_pool")
    except ImportError as exc:
        raise driver_missing("Postgres checkpoints (runs.database_url)", exc) from exc
    unreachable = f"the checkpoint database at {redact_url(url)} cannot be reached"
    try:
        lock = await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=_CONNECT_TIMEOUT)
    except psycopg.Error as exc:
        raise PipelineError(unreachable, code=ErrorCode.RUN_STORE_FAILED, cause=exc) from exc
    # a pool that checks a connection before lending it: a server restart costs no checkpoint
    pool = pools.AsyncConnectionPool(
        url,
        min_size=1,
        max_size=2,
        open=False,
        timeout=_CONNECT_TIMEOUT,
        check=pools.AsyncConnectionPool.check_connection,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": rows.dict_row},
    )
    async with lock:
        try:
            await pool.open(wait=True, timeout=_CONNECT_TIMEOUT)
        except pools.PoolTimeout as exc:
            await pool.close()
            raise PipelineError(unreachable, code=ErrorCode.RUN_STORE_FAILED, cause=exc) from exc
        saver: Any = module.AsyncPostgresSaver(conn=pool)
        try:  # the pool is closed however the set-up ends short, a cancelled wait for its lock included
            await _setup_lock(lock)
            try:
                await saver.setup()
            finally:
                await lock.execute("SELECT pg_advisory_unlock(%s, %s)", (_LOCK_SPACE, _SETUP_LOCK))
        except BaseException:
            await pool.close()
            raise
    try:
        yield cast(BaseCheckpointSaver[str], saver)
    finally:
        await pool.close()


@asynccontextmanager
async def open_checkpointer(
    config: CheckpointConfig, state_dir: Path, *, database_url: str | None = None
) -> AsyncGenerator[BaseCheckpointSaver[str]]:
    """The configured checkpoint saver, open for the duration of the context."""
    url = checkpoint_url(config, database_url)
    if url is not None:
        async with _postgres(url) as saver:
            yield saver
        return
    path = checkpoint_path(config, state_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    async with contextlib.AsyncExitStack() as stack:
        try:
            saver = await stack.enter_async_context(AsyncSqliteSaver.from_conn_string(str(path)))
            await saver.setup()
        except (sqlite3.Error, OSError) as exc:
            raise PipelineError(
                f"the checkpoint store {path} cannot be opened (damaged, or not a SQLite database): move it aside "
                "and ided starts a new one (run records stay; an unfinished run can no longer resume)",
                code=ErrorCode.RUN_STORE_FAILED,
                cause=exc,
            ) from exc
        yield saver
