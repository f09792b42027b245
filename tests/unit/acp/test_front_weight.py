"""The ACP front loads no pipeline when the daemon runs its sessions' runs: the agent, its run driver,
its workspaces and the daemon's run service client import neither LangGraph nor LangChain nor git
(the pipeline loads only for runs in this process, or a dry run's picture). Checked by the modules
a fresh interpreter has loaded, not by timing."""

from __future__ import annotations

import json
import subprocess
import sys

PIPELINE = ["git", "langchain_core", "langgraph", "langsmith"]

PROBE = """
import json, sys
import daemon.acp.agent, daemon.acp.run_driver, daemon.acp.stdio, daemon.acp.workspaces
import daemon.service.runs.remote
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(sys.argv[1])))))
"""


def test_the_acp_front_with_the_daemons_runs_loads_no_pipeline() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(PIPELINE)], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout.splitlines()[-1]) == []
