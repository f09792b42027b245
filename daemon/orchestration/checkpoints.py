"""LangGraph checkpoint savers: SQLite by default, Postgres when configured (optional driver).

Checkpoints live apart from run records (``runs.sqlite3``): by default in
``<state_dir>/pipeline/checkpoints.sqlite3``. The graph runs with ``durability="sync"``, so a step's
checkpoint is on disk before the next step starts and a killed process resumes from the last
finished node.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from daemon.config import CheckpointConfig
from daemon.errors import ConfigError, PipelineError

__all__ = ["checkpoint_path", "open_checkpointer"]

logger = logging.getLogger(__name__)

POSTGRES_HINT = "install the optional driver: `uv pip install langgraph-checkpoint-postgres 'psycopg[binary,pool]'`"


def checkpoint_path(config: CheckpointConfig, state_dir: Path) -> Path:
    return Path(config.sqlite_path) if config.sqlite_path else state_dir / "pipeline" / "checkpoints.sqlite3"


@asynccontextmanager
async def _postgres(url: str) -> AsyncGenerator[BaseCheckpointSaver[str]]:
    try:
        module = importlib.import_module("langgraph.checkpoint.postgres.aio")
    except ImportError as exc:
        raise PipelineError(
            f"pipeline.checkpoint.backend = 'postgres' needs a driver that is missing: {POSTGRES_HINT}", cause=exc
        ) from exc
    saver_type: Any = module.AsyncPostgresSaver
    async with saver_type.from_conn_string(url) as saver:
        await saver.setup()
        yield cast(BaseCheckpointSaver[str], saver)


@asynccontextmanager
async def open_checkpointer(config: CheckpointConfig, state_dir: Path) -> AsyncGenerator[BaseCheckpointSaver[str]]:
    """The configured checkpoint saver, open for the duration of the context."""
    if config.backend == "postgres":
        if not config.postgres_url:
            raise ConfigError("pipeline.checkpoint.backend = 'postgres' needs pipeline.checkpoint.postgres_url")
        async with _postgres(config.postgres_url) as saver:
            yield saver
        return
    path = checkpoint_path(config, state_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        await saver.setup()
        yield saver
