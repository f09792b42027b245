"""A second, independent ACP client: the TypeScript SDK (npm ``@agentclientprotocol/sdk``, its
``client()`` builder, pinned in tests/e2e/acp_ts) spawns ``python -m daemon.acp`` over real stdio on
a fixture git repository with a replay-scripted coder (``tests/e2e/acp_ts/client.mjs``): initialize,
a new session, a ``/dry-run`` plan, an editing prompt whose diff and permission request the client
accepts; the user's branch then has the run's commit. The SDK validates every message it receives
against its own schemas, so ided's wire format is checked by code that is not ided's."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.acp_support import CALC, WAIT_S, env_for, fixture_repo
from tests.e2e.test_acp_review import FIXED, editing_script
from tests.vcs_support import git

pytestmark = pytest.mark.e2e

CLIENT_DIR = Path(__file__).parent / "acp_ts"
SDK = CLIENT_DIR / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json"


def node_or_skip() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node not found: the TypeScript ACP client test needs Node.js 20+ (and npm)")
    if not SDK.is_file():
        pytest.skip("@agentclientprotocol/sdk is not installed: run scripts/install-test-tools.sh (npm ci)")
    return node


def tail_of(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:] if log.exists() else ""


async def drive(node: str, repo: Path, env: dict[str, str], stderr: Path) -> dict[str, Any]:
    """Run client.mjs to the end; its stdout is one JSON summary of the flow."""
    process = await asyncio.create_subprocess_exec(
        node,
        str(CLIENT_DIR / "client.mjs"),
        "--python",
        sys.executable,
        "--repo",
        str(repo),
        "--stderr",
        str(stderr),
        "--timeout-ms",
        str(int(WAIT_S * 1000)),
        cwd=CLIENT_DIR,
        env={**os.environ, **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), WAIT_S + 15)
    agent_log = tail_of(stderr)
    assert process.returncode == 0, f"client.mjs exited {process.returncode}: {err.decode()}\nagent: {agent_log}"
    return json.loads(out)


def of_kind(updates: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] == kind]


async def test_the_typescript_sdk_client_plans_a_dry_run_and_accepts_a_reviewed_edit_onto_the_users_branch(
    tmp_path: Path,
) -> None:
    node = node_or_skip()
    repo = fixture_repo(tmp_path)
    before = git(repo, "rev-parse", "HEAD")
    summary = await drive(node, repo, env_for(tmp_path, editing_script(tmp_path)), tmp_path / "agent-stderr.log")

    caps = summary["initialize"]["agentCapabilities"]
    assert caps["loadSession"] is True and caps["promptCapabilities"]["embeddedContext"] is True
    assert summary["modes"]["currentModeId"] == "code"

    dry_run = summary["dryRun"]
    assert dry_run["stopReason"] == "end_turn"
    (plan,) = of_kind(dry_run["updates"], "plan")
    assert [(e["_meta"]["ided/stage_id"], e["status"]) for e in plan["entries"]][:3] == [
        ("reproduction", "pending"),
        ("diagnosis", "pending"),
        ("fix", "pending"),
    ]
    assert any("Workflow bug_fix" in u["content"]["text"] for u in of_kind(dry_run["updates"], "agent_thought_chunk"))

    edit = summary["edit"]
    assert edit["stopReason"] == "end_turn"
    assert any(
        u["kind"] == "edit" and u["title"] == "write_file calc.py" for u in of_kind(edit["updates"], "tool_call")
    )
    contents: list[dict[str, Any]] = [c for u in of_kind(edit["updates"], "tool_call") for c in u.get("content", [])]
    diffs = [c for c in contents if c["type"] == "diff"]
    assert diffs == [{"type": "diff", "path": str(repo / "calc.py"), "oldText": CALC, "newText": FIXED}]
    (request,) = summary["permissionRequests"]
    assert [o["optionId"] for o in request["options"]] == ["accept", "reject", "feedback"]
    assert of_kind(edit["updates"], "plan")[-1]["entries"][2]["status"] == "completed"
    assert summary["agentExit"] == {"code": 0, "signal": None}

    assert (repo / "calc.py").read_text() == FIXED
    assert git(repo, "rev-list", "--count", f"{before}..HEAD") == "1"
    assert "fix attempt 1 by coder" in git(repo, "log", "-1", "--format=%s")
