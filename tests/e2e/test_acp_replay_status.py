"""``session/load`` replays a run's review as it stands now, and ``_ided/status`` reports the workspace daemon.

The ACP SDK's own client over real stdio, real git repositories, the replay-scripted coder of
``test_acp_review``: a review accepted (then rolled back, then cleaned up), rejected or left open in
one ``ided acp`` process is loaded in a new one; the status notification comes from a real daemon
that ``ided acp`` starts (``acp.attach_daemon``), compared with that daemon's own ``daemon/status``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest
from acp.schema import FileEditToolCallContent, ToolCallProgress, ToolCallStart

from daemon.config import load_config
from daemon.core.run_models import DecisionKind
from daemon.orchestration.sqlite_run_store import SqliteRunStore, runs_db_path
from daemon.service.wire.api import DaemonStatus, Methods, ReindexParams
from daemon.service.wire.client import DaemonClient, DaemonUnavailable
from daemon.vcs.worktrees import RunWorktrees
from tests.e2e.acp_support import (
    CALC,
    WAIT_S,
    RecordingClient,
    env_for,
    fixture_repo,
    initialize,
    prompt_text,
    spawn_ided_acp,
)
from tests.e2e.test_acp_review import FIXED, editing_script
from tests.vcs_support import git

pytestmark = pytest.mark.e2e

STATUS = "ided/status"


@dataclass
class StatusRecorder(RecordingClient):
    """A recording client that also keeps the agent's extension notifications (name without the ``_``)."""

    notifications: list[tuple[str, dict[str, Any]]] = field(default_factory=lambda: list[tuple[str, dict[str, Any]]]())

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        async with self._changed:
            self.notifications.append((method, params))
            self._changed.notify_all()

    def statuses(self, session_id: str) -> list[dict[str, Any]]:
        return [p for m, p in self.notifications if m == STATUS and p.get("session_id") == session_id]


async def run_one_review(tmp_path: Path, repo: Path, answer: str | None) -> tuple[str, str]:
    """One editing prompt in a first ``ided acp`` process, its review answered ``answer`` (None: left open)."""
    client = RecordingClient(permission_answers=[(answer, None)] if answer else [])
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, editing_script(tmp_path)), client=client) as agent:
        await initialize(agent.conn)
        sid = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
        await asyncio.wait_for(agent.conn.prompt(session_id=sid, prompt=prompt_text("fix add")), WAIT_S)
        (start,) = [u for u in client.tool_calls(sid) if isinstance(u, ToolCallStart) and "/review-" in u.tool_call_id]
    return sid, str(raw_input_of(start)["run_id"])


def raw_input_of(update: ToolCallStart | ToolCallProgress) -> dict[str, Any]:
    raw: object = update.raw_input
    return cast(dict[str, Any], raw) if isinstance(raw, dict) else {}


def review_of(client: RecordingClient, session_id: str, run_id: str) -> tuple[ToolCallStart, ToolCallProgress]:
    """The replayed review call of ``run_id`` and its last update."""
    (call,) = [
        u
        for u in client.tool_calls(session_id)
        if isinstance(u, ToolCallStart) and raw_input_of(u).get("run_id") == run_id
    ]
    updates = [u for u in client.tool_calls(session_id) if isinstance(u, ToolCallProgress)]
    final = [u for u in updates if u.tool_call_id == call.tool_call_id]
    assert final, f"no update for {call.tool_call_id}"
    return call, final[-1]


def calc_diff(call: ToolCallStart) -> FileEditToolCallContent:
    (diff,) = [c for c in call.content or [] if isinstance(c, FileEditToolCallContent)]
    return diff


async def review_decisions(state_dir: Path, run_id: str) -> int:
    store = await asyncio.to_thread(SqliteRunStore, runs_db_path(state_dir), workspace_id="reader")
    try:
        return sum(d.kind is DecisionKind.REVIEW for d in await store.decisions(run_id))
    finally:
        await asyncio.to_thread(store.close)


async def test_loading_a_session_replays_an_accepted_review_with_its_diffs_then_rolled_back_then_cleaned_up(
    tmp_path: Path,
) -> None:
    repo = fixture_repo(tmp_path)
    sid, run_id = await run_one_review(tmp_path, repo, "accept")
    accepted = git(repo, "rev-parse", "HEAD")
    env = env_for(tmp_path, editing_script(tmp_path))
    config = load_config(repo, env=env)
    reviews_logged = await review_decisions(config.state_path, run_id)
    client = StatusRecorder()
    async with spawn_ided_acp(tmp_path, env, client=client) as agent:
        await initialize(agent.conn)
        await asyncio.wait_for(agent.conn.load_session(cwd=str(repo), session_id=sid, mcp_servers=[]), WAIT_S)
        call, final = review_of(client, sid, run_id)
        assert call.kind == "edit" and call.status == "pending" and call.title.startswith(f"Review run {run_id}")
        assert raw_input_of(call)["files"][0]["path"] == "calc.py"
        diff = calc_diff(call)
        assert diff.path == str(repo / "calc.py") and diff.old_text == CALC and diff.new_text == FIXED
        assert final.status == "completed" and (final.field_meta or {})["ided/review"] == "accepted"
        assert f"Accepted: 1 commit(s) on refs/heads/main ({accepted[:10]})" in str(final.raw_output)
        assert client.permission_requests == []
        assert await review_decisions(config.state_path, run_id) == reviews_logged  # a replay is no review

        rolled = await asyncio.wait_for(
            agent.conn.prompt(session_id=sid, prompt=prompt_text(f"/rollback {run_id}")), WAIT_S
        )
        assert rolled.stop_reason == "end_turn" and (repo / "calc.py").read_text() == CALC
        revert = git(repo, "rev-parse", "HEAD")
        client.updates.clear()
        await asyncio.wait_for(agent.conn.load_session(cwd=str(repo), session_id=sid, mcp_servers=[]), WAIT_S)
        _, final = review_of(client, sid, run_id)
        assert final.status == "completed" and (final.field_meta or {})["ided/review"] == "rolled_back"
        assert f"rolled back by 1 revert commit(s) ({revert[:10]})" in str(final.raw_output)

        report = await asyncio.to_thread(RunWorktrees.for_config(config).cleanup, older_than_days=0)
        assert report.removed_runs == (run_id,)
        client.updates.clear()
        await asyncio.wait_for(agent.conn.load_session(cwd=str(repo), session_id=sid, mcp_servers=[]), WAIT_S)
        assert not [u for u in client.tool_calls(sid) if "/review-" in u.tool_call_id]
        assert f"ided/run/{run_id} was removed by cleanup" in client.messages(sid)
        assert "Its diff cannot be shown" in client.messages(sid)


async def test_loading_a_session_shows_a_rejected_review_failed_and_says_there_is_no_daemon(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path)
    sid, run_id = await run_one_review(tmp_path, repo, "reject")
    client = StatusRecorder()
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, editing_script(tmp_path)), client=client) as agent:
        await initialize(agent.conn)
        await asyncio.wait_for(agent.conn.load_session(cwd=str(repo), session_id=sid, mcp_servers=[]), WAIT_S)
        call, final = review_of(client, sid, run_id)
        assert calc_diff(call).new_text == FIXED
        assert final.status == "failed" and (final.field_meta or {})["ided/review"] == "rejected"
        assert str(final.raw_output).startswith(f"Rejected: your files are untouched; ided/run/{run_id} is kept")
        assert client.permission_requests == []
        await client.wait_for(lambda: bool(client.statuses(sid)), "_ided/status after session/load")
        (status,) = client.statuses(sid)
        assert status["daemon"] == "none" and status["index_files"] is None
        assert status["message"] == "ided: no daemon (acp.attach_daemon is off)"
    assert (repo / "calc.py").read_text() == CALC


async def test_a_review_left_open_is_offered_again_after_loading_and_accepting_it_applies_the_run(
    tmp_path: Path,
) -> None:
    repo = fixture_repo(tmp_path)
    sid, run_id = await run_one_review(tmp_path, repo, None)
    assert (repo / "calc.py").read_text() == CALC
    client = StatusRecorder(permission_answers=[("accept", None)])
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, editing_script(tmp_path)), client=client) as agent:
        await initialize(agent.conn)
        await asyncio.wait_for(agent.conn.load_session(cwd=str(repo), session_id=sid, mcp_servers=[]), WAIT_S)
        call, first = review_of(client, sid, run_id)
        assert first.status == "pending" and (first.field_meta or {})["ided/review"] == "open"

        def decided() -> bool:
            return review_of(client, sid, run_id)[1].status != "pending"

        await client.wait_for(decided, "the re-offered review to be accepted")
        ((asked, options),) = client.permission_requests
        assert asked.tool_call_id == call.tool_call_id and options[0].option_id == "accept"
        _, final = review_of(client, sid, run_id)
        assert final.status == "completed" and (final.field_meta or {})["ided/review"] == "accepted"
    assert (repo / "calc.py").read_text() == FIXED


async def test_status_after_session_new_carries_the_attached_daemons_figures(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path)
    env = env_for(tmp_path, None, acp__attach_daemon="true")
    config = load_config(repo, env=env)
    client = StatusRecorder()
    try:
        async with spawn_ided_acp(tmp_path, env, client=client) as agent:
            await initialize(agent.conn)
            first = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
            await client.wait_for(lambda: bool(client.statuses(first)), "_ided/status after session/new")
            daemon = await DaemonClient.attach(config, client="cli", start=False)  # the one ided acp started
            async with daemon:
                (early,) = client.statuses(first)
                assert early["daemon"] == "running" and early["daemon_pid"] == daemon.daemon_pid
                await daemon.call(Methods.INDEX_REINDEX, ReindexParams(paths=None), wait_s=WAIT_S)
                second = (await agent.conn.new_session(cwd=str(repo), mcp_servers=[])).session_id
                await client.wait_for(lambda: bool(client.statuses(second)), "_ided/status after a second session/new")
                truth = await daemon.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
            (status,) = client.statuses(second)
            assert status["workspace"] == str(repo.resolve()) and status["daemon_pid"] == truth.pid
            assert (
                (status["index_files"], status["chunks"]) == (truth.index.files_indexed, truth.index.chunks) == (2, 2)
            )
            assert status["embedded_fraction"] == truth.index.embedded_fraction
            assert status["indexing"] is (truth.busy is not None)
            assert [s["name"] for s in status["language_servers"]] == [s.name for s in truth.servers]
            assert status["message"].startswith(f"ided daemon {truth.pid}: 2 files, 2 chunks, ")
    finally:
        await shut_down_daemon(config)


async def shut_down_daemon(config: Any) -> None:
    try:
        daemon = await DaemonClient.attach(config, client="cli", start=False)
    except DaemonUnavailable:
        return
    try:
        await daemon.call(Methods.SHUTDOWN, None)
        await asyncio.wait_for(daemon.wait_closed(), 30)
    finally:
        await daemon.close()
