"""A run that starts at once: a long-lived runtime (the daemon's) gets ready before the first run is asked
(``PipelineRuntime.warm``) and keeps a worktree checked out ahead that each editing run takes over.

Real git repositories in temp dirs; the LLM is the scripted (replay) provider.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from daemon.config import VcsConfig
from daemon.core.run_models import RunStatus
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.resilience import ResilienceLayer
from daemon.orchestration.runtime import PipelineRuntime
from daemon.vcs.worktrees import RunWorktrees
from tests.integration.test_agents_runtime import ONLY_IMPLEMENTATION, coder_writes, folder, ok, rest_succeeds
from tests.pipeline_support import WAIT, builtin_catalog, replay_config, write_script

WITH_PRODUCT = "def add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    return a * b\n"


def _entries() -> list[dict[str, Any]]:
    return [
        ONLY_IMPLEMENTATION,
        coder_writes(WITH_PRODUCT, match=r"Attempt: 1\b"),
        {"role": "coder", "match": r"Attempt: 1\b", **ok("multiply added")},
        rest_succeeds(),
    ]


@asynccontextmanager
async def _runtime(
    tmp_path: Path, worktrees: RunWorktrees, *, long_lived: bool, vcs: VcsConfig | None = None
) -> AsyncGenerator[PipelineRuntime]:
    config = replay_config(write_script(tmp_path / "script.yaml", _entries()))
    models = ModelRegistry.from_config(config, env={}, layer=ResilienceLayer(config.resilience))
    async with PipelineRuntime.open(
        catalog=builtin_catalog(),
        models=models,
        state_dir=tmp_path / "state",
        config=config,
        worktrees=worktrees,
        vcs=vcs or VcsConfig(),
        long_lived=long_lived,
    ) as runtime:
        yield runtime
    models.close()


async def test_a_long_lived_runtime_keeps_a_spare_worktree_that_each_editing_run_takes_over(tmp_path: Path) -> None:
    repo = folder(tmp_path / "repo")
    worktrees = RunWorktrees(repo, tmp_path / "state")
    async with _runtime(tmp_path, worktrees, long_lived=True) as runtime:
        await runtime.warm()
        [spare] = worktrees.spares()
        record = await runtime.run("Add a multiply function", wait_seconds=WAIT)
        assert record.status is RunStatus.SUCCEEDED and record.changes is not None
        assert not spare.exists()  # moved to the run's place
        worktree = Path(record.changes.worktree)
        assert (worktree / "src" / "calc.py").read_text() == WITH_PRODUCT
        assert [f.path for f in record.changes.files] == ["src/calc.py"]
        await runtime.settled()
        [after] = worktrees.spares()  # the next run's, checked out once this one ended
        assert after != spare and (after / "src" / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (repo / "src" / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


async def test_a_one_shot_runtime_or_spare_worktree_false_checks_nothing_out_ahead(tmp_path: Path) -> None:
    repo = folder(tmp_path / "repo")
    worktrees = RunWorktrees(repo, tmp_path / "state")
    async with _runtime(tmp_path, worktrees, long_lived=False) as runtime:
        await runtime.warm()
        assert worktrees.spares() == []
        record = await runtime.run("Add a multiply function", wait_seconds=WAIT)
        await runtime.settled()
        assert record.changes is not None and worktrees.spares() == []
    (tmp_path / "second").mkdir()
    async with _runtime(
        tmp_path / "second", worktrees, long_lived=True, vcs=VcsConfig(spare_worktree=False)
    ) as runtime:
        await runtime.warm()
        assert worktrees.spares() == []
