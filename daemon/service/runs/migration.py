"""``ided runs migrate --to URL``: move a workspace's runs and checkpoints into a shared Postgres.

Opens the store and checkpoint saver the configuration names now (SQLite by default) as the source
and the Postgres at ``URL`` as the target, with this workspace's id, and copies with
``daemon.orchestration.run_migration``. Afterwards set ``runs.database_url`` to ``URL``; the SQLite
files stay where they were, untouched.
"""

from __future__ import annotations

from daemon.config import CheckpointConfig, Config, RunsConfig
from daemon.core.run_models import MigrationReport
from daemon.errors import ConfigError
from daemon.orchestration.checkpoints import open_checkpointer
from daemon.orchestration.run_migration import migrate_runs
from daemon.orchestration.run_store_open import open_run_store

__all__ = ["MigrationReport", "migrate_workspace_runs"]


async def migrate_workspace_runs(config: Config, to_url: str) -> MigrationReport:
    """Copy this workspace's runs (records, logs, events, checkpoints) into the Postgres at ``to_url``."""
    if to_url == config.runs.database_url:
        raise ConfigError(f"the runs are in {to_url} already (runs.database_url); nothing to migrate")
    try:
        target_runs = RunsConfig.model_validate({**config.runs.model_dump(), "database_url": to_url})
    except ValueError as exc:
        raise ConfigError(f"--to {to_url!r}: must be a postgresql:// URL", cause=exc) from exc
    state, root = config.state_path, config.workspace_path
    async with (
        open_run_store(config.runs, state_dir=state, workspace=root) as source,
        open_run_store(target_runs, state_dir=state, workspace=root) as target,
        open_checkpointer(config.pipeline.checkpoint, state, database_url=config.runs.database_url) as old,
        open_checkpointer(CheckpointConfig(), state, database_url=to_url) as new,
    ):
        return await migrate_runs(source, target, source_checkpoints=old, target_checkpoints=new)
