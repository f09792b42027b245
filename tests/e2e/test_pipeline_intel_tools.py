"""Runs opened by `open_pipeline`: the daemon's code intelligence as agent tools, its index for retrieval."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from daemon.config import Config, load_config
from daemon.core.run_models import ProgressKind, RunStatus
from daemon.service.pipeline.opening import open_pipeline
from daemon.service.wire.api import Methods
from daemon.service.wire.client import DaemonClient
from tests.e2e.test_mcp_stdio import _env
from tests.intel_tools import copy_workspace, require_server
from tests.pipeline_support import choose, everyone_succeeds, write_script

pytestmark = pytest.mark.e2e


def debugger_asks_for_a_definition(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    """A copy of the Python intel workspace whose scripted bug_fix run has its debugger call
    ``find_definition("Reporter")``; this process's environment points at the script."""
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    for key, value in _env(tmp_path / "state", tmp_path / "home").items():
        monkeypatch.setenv(key, value)
    script = write_script(
        tmp_path / "script.yaml",
        [
            {"role": "orchestrator", "answer": choose("bug_fix")},
            {
                "role": "debugger",
                "match": r"Attempt: 1\b",
                "tool_calls": [{"name": "find_definition", "args": {"symbol": "Reporter"}}],
            },
            everyone_succeeds(),
        ],
    )
    monkeypatch.setenv("IDED_PIPELINE__REPLAY_SCRIPT", str(script))
    config = load_config(workspace)
    return config


async def test_a_debugger_agent_finds_a_definition_through_the_running_daemon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = debugger_asks_for_a_definition(tmp_path, monkeypatch)
    daemon = await DaemonClient.attach(config, client="cli", start=True)
    try:
        await daemon.call(Methods.INDEX_REINDEX, None, wait_s=120)  # answers once the pass is done
        async with open_pipeline(config, models_needed=True) as runtime:
            record = await runtime.start("Reporter renders the wrong title", workflow="bug_fix", mode="ask")
            finished = await runtime.wait(record.run_id, wait_seconds=120)
            seen = await runtime.events(record.run_id)
            decisions = await runtime.decision_log(record.run_id)
    finally:
        await daemon.call(Methods.SHUTDOWN, None)
        await asyncio.wait_for(daemon.wait_closed(), 30)
        await daemon.close()

    assert finished.status is RunStatus.SUCCEEDED
    updates = [e for e in seen if e.event is ProgressKind.TOOL_CALL_UPDATE and e.agent_id == "debugger"]
    done = [e for e in updates if e.tool_status == "completed"]
    assert done and "shapes/report.py" in (done[-1].output or "")
    upfront = [d for d in decisions if d.data.get("mode") == "upfront"]
    assert upfront, "the retrieval agent gave the planned stages no upfront context"
    assert upfront[0].data["pieces"].get("diagnosis", 0) > 0
