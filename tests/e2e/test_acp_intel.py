"""``_ided/intel/<capability>``: the ACP front's extension methods for search and code intelligence.

Every capability of the registry is one (a new one is served without another line here); what a
client gets wrong, and a session with no workspace daemon, are answered with errors that say why,
over real stdio with the ACP SDK's own client. That every method answers through a real daemon and
language server is in ``test_capability_fronts.py`` (one daemon for every front).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import cast

import pytest
from acp import RequestError

from daemon.acp.intel import METHODS, ext_method_name
from daemon.service.intel.capabilities import CAPABILITIES
from tests.e2e.acp_support import WAIT_S, env_for, fixture_repo, initialize, spawn_ided_acp

pytestmark = pytest.mark.e2e


def test_every_capability_is_an_extension_method_named_after_it() -> None:
    assert list(METHODS) == [f"ided/intel/{c.name}" for c in CAPABILITIES]
    assert all(METHODS[ext_method_name(c)] is c for c in CAPABILITIES)


async def test_bad_calls_and_a_session_without_a_daemon_get_errors_that_say_why(tmp_path: Path) -> None:
    repo = fixture_repo(tmp_path)
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, None)) as agent:  # acp.attach_daemon off
        await initialize(agent.conn)
        sid = (await asyncio.wait_for(agent.conn.new_session(cwd=str(repo)), WAIT_S)).session_id

        async def error_of(method: str, params: dict[str, object]) -> RequestError:
            with pytest.raises(RequestError) as caught:
                await asyncio.wait_for(agent.conn.ext_method(method, params), WAIT_S)
            return caught.value

        unknown = await error_of("ided/intel/frobnicate", {"sessionId": sid})
        assert unknown.code == -32601 and "_ided/intel/frobnicate" in str(unknown.data)

        no_session = await error_of("ided/intel/search_code", {"query": "add"})
        assert no_session.code == -32602 and "sessionId" in str(no_session.data)

        missing = await error_of("ided/intel/search_code", {"sessionId": sid})
        assert missing.code == -32602 and "query" in str(missing.data)

        wrong = await error_of("ided/intel/find_definition", {"sessionId": sid, "file": "calc.py", "line": 0})
        assert wrong.code == -32602 and "line" in str(wrong.data)

        stranger = await error_of("ided/intel/search_code", {"sessionId": "s-nobody", "query": "add"})
        assert stranger.code == -32602 and "unknown session" in str(stranger.data)

        no_daemon = await error_of("ided/intel/search_code", {"sessionId": sid, "query": "add"})
        assert no_daemon.code == -32603
        assert "workspace daemon" in str(no_daemon) and "acp.attach_daemon is off" in str(no_daemon)
        data: object = no_daemon.data
        assert isinstance(data, dict) and cast("dict[str, object]", data)["code"] == "store_failed"

        # the session still works after every refusal
        listed = await asyncio.wait_for(agent.conn.list_sessions(cwd=str(repo)), WAIT_S)
        assert sid in [s.session_id for s in listed.sessions]
