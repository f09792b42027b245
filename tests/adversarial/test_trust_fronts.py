"""Workspace trust over the protocol fronts, real stdio: ACP asks through ``session/request_permission``
and honours the answer; LSP, which cannot ask, refuses a code run with ``workspace_untrusted``; MCP
refuses the tools of a language whose server an untrusted repository's ``.ided.toml`` chose (and never
starts it), naming how to trust."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp.schema import PermissionOption, RequestPermissionResponse, ToolCallProgress, ToolCallStart, ToolCallUpdate
from pygls.exceptions import JsonRpcException

from daemon.trust import TrustStore
from tests.adversarial.test_trust import CALC, hostile_repo, touch
from tests.e2e.acp_support import (
    WAIT_S,
    RecordingClient,
    env_for,
    initialize,
    prompt_text,
    recorded_runs,
    spawn_ided_acp,
)
from tests.e2e.lsp_support import lsp_client
from tests.e2e.test_lsp_runs import REQUEST_FAILED, runs_client
from tests.e2e.test_mcp_stdio import call_error, mcp_session
from tests.pipeline_support import choose, everyone_succeeds, write_script
from tests.vcs_support import make_repo

pytestmark = pytest.mark.e2e


def bug_fix_script(tmp_path: Path) -> Path:
    return write_script(
        tmp_path / "script.yaml",
        [
            {"role": "orchestrator", "answer": choose("bug_fix", code_review="SKIP"), "repeat": True},
            everyone_succeeds(),
        ],
    )


async def test_acp_asks_before_the_repositorys_commands_run_and_honours_each_answer(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    repo = hostile_repo(tmp_path / "repo", marker)
    env = env_for(tmp_path, bug_fix_script(tmp_path))
    client = RecordingClient(permission_answers=[("untrusted", None), ("trust_always", None)])
    async with spawn_ided_acp(tmp_path, env, client=client) as agent:
        await initialize(agent.conn)

        refused = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        reply = await asyncio.wait_for(agent.conn.prompt(session_id=refused, prompt=prompt_text("fix add")), WAIT_S)
        assert reply.stop_reason == "end_turn"
        ((call, options),) = client.permission_requests
        assert call.kind == "execute"
        assert [(o.option_id, o.kind) for o in options] == [
            ("trust_once", "allow_once"),
            ("trust_always", "allow_always"),
            ("untrusted", "reject_once"),
        ]
        (shown,) = [u for u in client.tool_calls(refused) if isinstance(u, ToolCallStart) and u.kind == "execute"]
        raw: Any = shown.raw_input
        assert raw["commands"] == [{"name": "test", "command": touch(marker), "source": str(repo / ".ided.toml")}]
        ended = [
            u
            for u in client.tool_calls(refused)
            if isinstance(u, ToolCallProgress) and u.tool_call_id == call.tool_call_id
        ]
        assert ended[-1].status == "failed"
        assert not marker.exists()
        assert "will not run" in client.messages(refused)
        assert "not trusted" in client.thoughts(refused) and f"ided trust {repo}" in client.thoughts(refused)

        again = await asyncio.wait_for(agent.conn.prompt(session_id=refused, prompt=prompt_text("fix add")), WAIT_S)
        assert again.stop_reason == "end_turn" and len(client.permission_requests) == 1  # the session's answer holds
        assert not marker.exists()

        trusting = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        reply = await asyncio.wait_for(agent.conn.prompt(session_id=trusting, prompt=prompt_text("fix add")), WAIT_S)
        assert reply.stop_reason == "end_turn" and len(client.permission_requests) == 2
        assert marker.exists()
        assert TrustStore.default({"XDG_CONFIG_HOME": env["XDG_CONFIG_HOME"]}).trusted(repo)

        marker.unlink()
        later = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        reply = await asyncio.wait_for(agent.conn.prompt(session_id=later, prompt=prompt_text("fix add")), WAIT_S)
        assert reply.stop_reason == "end_turn" and len(client.permission_requests) == 2  # trusted: not asked
        assert marker.exists()


async def test_acp_asks_nothing_in_ask_mode_or_where_the_repository_defines_no_command(tmp_path: Path) -> None:
    repo = hostile_repo(tmp_path / "repo", tmp_path / "PWNED", toml_commands=False)
    env = env_for(tmp_path, bug_fix_script(tmp_path))
    client = RecordingClient()
    async with spawn_ided_acp(tmp_path, env, client=client) as agent:
        await initialize(agent.conn)
        sid = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        reply = await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=prompt_text("fix add")), WAIT_S)
        assert reply.stop_reason == "end_turn" and client.permission_requests == []
    assert (repo / "calc.py").read_text() == CALC


async def test_lsp_refuses_a_code_run_in_an_untrusted_workspace_naming_how_to_trust(
    tmp_path: Path, isolated_home: Path
) -> None:
    marker = tmp_path / "PWNED"
    repo = hostile_repo(tmp_path / "repo", marker)
    script = bug_fix_script(tmp_path)
    extra = ("--set", f"pipeline.replay_script={script}", "--set", "pipeline.resilience.cache=false")
    async with runs_client(repo, tmp_path / "state", *extra) as client:
        with pytest.raises(JsonRpcException) as caught:
            await client.ided("ided/run/start", {"request": "fix add", "mode": "code"})
        assert caught.value.code == REQUEST_FAILED
        data: Any = caught.value.data
        assert data["code"] == "workspace_untrusted" and data["how_to_trust"] == f"ided trust {repo}"
        assert f"ided trust {repo}" in str(caught.value) and ".ided.toml" in str(caught.value)
        assert not marker.exists()

        dry = await client.ided("ided/run/start", {"request": "fix add", "mode": "code", "dryRun": True})
        assert dry["status"] == "planned"

        TrustStore.default().add(repo)
        started = await client.ided("ided/run/start", {"request": "fix add", "mode": "code"})
        notes: list[dict[str, Any]] = []
        while not notes or notes[-1]["kind"] != "run_finished":
            notes.append(await asyncio.wait_for(client.run_progress.get(), WAIT_S))
        assert {n["runId"] for n in notes} == {started["runId"]}
        assert marker.exists()


async def test_mcp_refuses_a_language_server_the_untrusted_repository_chose_and_never_starts_it(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "PWNED"
    repo = make_repo(
        tmp_path / "repo",
        {
            "calc.py": CALC,
            ".ided.toml": f'[intel.servers.python]\ncommand = "bash"\nargs = ["-c", "touch {marker}"]\n',
        },
    )
    async with mcp_session(repo, tmp_path, prestart=True) as (client, _):
        text = await call_error(client, "find_definition", path="calc.py", line=1, symbol="add")
    assert "workspace_untrusted" in text and f"ided trust {repo}" in text
    assert "intel.servers.python.command" in text
    assert not marker.exists()

    TrustStore.default({"XDG_CONFIG_HOME": str(tmp_path / "home" / ".config")}).add(repo)
    async with mcp_session(repo, tmp_path, prestart=True) as (client, _):
        # by position: a name would be answered from the index while the (trusted) server starts
        text = await call_error(client, "find_definition", file="calc.py", line=1, column=5)
    assert "workspace_untrusted" not in text
    assert marker.exists()  # trusted: the repository's server command ran (and, being no server, failed)


async def test_lsp_intel_refuses_a_language_server_the_untrusted_repository_chose_through_the_daemon(
    tmp_path: Path, isolated_home: Path
) -> None:
    marker = tmp_path / "PWNED"
    repo = make_repo(
        tmp_path / "repo",
        {
            "calc.py": CALC,
            ".ided.toml": f'[intel.servers.python]\ncommand = "bash"\nargs = ["-c", "touch {marker}"]\n',
        },
    )
    async with lsp_client(repo, tmp_path / "state") as client:
        with pytest.raises(JsonRpcException) as caught:
            await client.ided("ided/intel/definition", {"symbol": "add"})
        data: Any = caught.value.data
        assert data["code"] == "workspace_untrusted", caught.value.message
        assert f"ided trust {repo}" in caught.value.message
    assert not marker.exists()


class WaitingClient(RecordingClient):
    """Records the permission request, then never answers it (a person who walked away)."""

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        await super().request_permission(session_id, tool_call, options, **kwargs)
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_acp_cancel_while_asked_ends_the_prompt_before_any_run_starts(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    repo = hostile_repo(tmp_path / "repo", marker)
    client = WaitingClient()
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, bug_fix_script(tmp_path)), client=client) as agent:
        await initialize(agent.conn)
        sid = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        prompt = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=prompt_text("fix add")))
        await client.wait_for(lambda: bool(client.permission_requests), "the trust request")
        await agent.conn.cancel(session_id=sid)
        reply = await asyncio.wait_for(prompt, WAIT_S)
        assert reply.stop_reason == "cancelled"
        assert await recorded_runs(tmp_path) == []
    assert not marker.exists()
