"""A daemon with a model gets its runs ready before the first is asked: the run service opens once the
first index pass is done, and a worktree is checked out ahead that the first editing run takes over.

A real daemon (``ided daemon --detach``) in a temp git repository; the LLM is the scripted (replay)
provider.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from daemon.config import load_config
from daemon.core.run_models import DecisionKind, RunStatus
from daemon.service.runs.params import RunStart
from daemon.service.runs.remote import attach_runs
from daemon.service.wire.api import Methods
from daemon.service.wire.client import DaemonClient
from daemon.vcs.worktrees import RunWorktrees
from tests.e2e.test_daemon_runs import WITH_PRODUCT, _repo_with_daemon_env  # pyright: ignore[reportPrivateUsage]
from tests.integration.test_agents_runtime import ONLY_IMPLEMENTATION, coder_writes, ok, rest_succeeds
from tests.pipeline_support import WAIT, write_script

pytestmark = pytest.mark.e2e


async def _spare_of(worktrees: RunWorktrees) -> Path:
    """The spare worktree once the daemon's warm start has checked it out (WAIT seconds at most)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        spares = await asyncio.to_thread(worktrees.spares)
        if spares:
            return spares[0]
        await asyncio.sleep(0.2)
    raise AssertionError(f"no spare worktree in {worktrees.worktrees_dir} after {WAIT} s")


async def test_the_first_editing_run_of_a_warm_daemon_takes_over_the_worktree_checked_out_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo_with_daemon_env(tmp_path, monkeypatch)
    script = write_script(
        tmp_path / "script.yaml",
        [ONLY_IMPLEMENTATION, coder_writes(WITH_PRODUCT), {"role": "coder", **ok("multiply added")}, rest_succeeds()],
    )
    monkeypatch.setenv("IDED_PIPELINE__REPLAY_SCRIPT", str(script))
    config = load_config(repo)
    worktrees = RunWorktrees.for_config(config)
    runs = await attach_runs(config, client="cli", start=True)
    control = await DaemonClient.attach(config, client="other", start=False)
    try:
        spare = await _spare_of(worktrees)
        async with await runs.start(RunStart(request="Add a multiply function")) as started:
            _ = [e async for e in started]
        record = await runs.wait(started.run_id, wait_seconds=WAIT)
        decisions = await runs.decisions(started.run_id)
        await runs.reject(started.run_id)
    finally:
        await runs.aclose()
        await control.call(Methods.SHUTDOWN, None)
        await asyncio.wait_for(control.wait_closed(), 30)
        await control.close()

    assert record.status is RunStatus.SUCCEEDED and record.changes is not None
    assert not spare.exists()
    assert [f.path for f in record.changes.files] == ["src/calc.py"]
    upfront = [d for d in decisions if d.kind is DecisionKind.ENRICHMENT and d.data.get("mode") == "upfront"]
    assert upfront and "seconds" in upfront[0].data
