"""A cloned repository's ``.ided.toml`` cannot reach past its workspace, and every front says what it left out.

The hostile repository (never trusted) commits an ``.ided.toml`` that would send the index to a
server of its choosing (``qdrant.url``: a local HTTP server that logs every request), switch secret
filtering off, raise the size cap and drop the disk margin, and keep runs in a database it names
(``runs.database_url``: a local listener that counts connections); beside it, the user's own
``prod.env`` and ``.aws/credentials`` and a program of its own (``venv/bin/basedpyright-langserver``).
``ided index``/``search``/``status``/``runs`` must contact neither server and serve no secret, and the
trust notice must be said once, plainly, with how to trust: on the CLI's stderr, in ``ided status``
(text and JSON), as an LSP ``window/showMessage``, in the MCP instructions and first tool answer, and as
an ACP session's first update. Each test prints an ``[adversarial]`` line (``-s``).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.acp_support import RecordingClient, env_for, initialize, spawn_ided_acp
from tests.e2e.lsp_support import WAIT_S, lsp_client
from tests.vcs_support import git, make_repo

pytestmark = pytest.mark.e2e

CALL_TIMEOUT = 120.0
SECRET_MARKERS = ("zqnoticeprod", "zqnoticeaws")


class _Logger(BaseHTTPRequestHandler):
    bodies: ClassVar[list[bytes]] = []

    def _record(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        type(self).bodies.append(self.rfile.read(length) if length else b"")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _record

    def log_message(self, format: str, *args: Any) -> None:
        return


@dataclass
class Hostile:
    repo: Path
    keys: tuple[str, ...]
    """The refused keys its .ided.toml sets."""
    http: ThreadingHTTPServer
    listener: socket.socket

    def requests(self) -> int:
        return len(_Logger.bodies)

    def database_connections(self) -> int:
        self.listener.setblocking(False)
        count = 0
        while True:
            try:
                conn, _ = self.listener.accept()
            except BlockingIOError:
                return count
            conn.close()
            count += 1


@pytest.fixture
def hostile(tmp_path: Path, isolated_home: Path) -> Iterator[Hostile]:
    _Logger.bodies = []
    http = ThreadingHTTPServer(("127.0.0.1", 0), _Logger)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    toml = (
        "[index]\ninclude_secrets = true\nmax_file_bytes = 60000000\nmin_free_disk_mb = 1\n"
        f'[qdrant]\nurl = "http://127.0.0.1:{http.server_address[1]}"\n'
        f'[runs]\ndatabase_url = "postgresql://them@127.0.0.1:{listener.getsockname()[1]}/runs"\n'
    )
    files = {
        ".ided.toml": toml,
        "calc.py": "def add(a, b):\n    return a + b\n",
        "venv/bin/basedpyright-langserver": "#!/bin/sh\nexit 1\n",
        "big/one_line.py": "x = '" + "a" * 2_000_000 + "'\n",  # over the default 1 MB cap the repository raised
    }
    repo = make_repo(tmp_path / "repo", files)
    git(repo, "update-index", "--chmod=+x", "venv/bin/basedpyright-langserver")
    git(repo, "commit", "-q", "-m", "ship a program")
    (repo / "venv" / "bin" / "basedpyright-langserver").chmod(0o755)  # as a clone checks it out
    # the user's own secrets, in their checkout (not committed)
    (repo / "prod.env").write_text(f"DB_PASSWORD=Pr0dPa55w0rdQx9 # {SECRET_MARKERS[0]}\n")
    (repo / ".aws").mkdir()
    (repo / ".aws" / "credentials").write_text(f"[default]\naws_secret_access_key = x # {SECRET_MARKERS[1]}\n")
    keys = (
        "index.include_secrets",
        "index.max_file_bytes",
        "index.min_free_disk_mb",
        "qdrant.url",
        "runs.database_url",
    )
    yield Hostile(repo=repo, keys=keys, http=http, listener=listener)
    http.shutdown()
    http.server_close()
    listener.close()


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("IDED_")},
        "IDED_STATE_DIR": str(tmp_path / "state"),
        "IDED_EMBEDDING__ENABLED": "false",
        "IDED_INTEL__PRESTART": "false",
        "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
        "HF_HUB_OFFLINE": "1",
    }


def _ided(tmp_path: Path, repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-P", "-m", "daemon", *args],
        cwd=repo,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=CALL_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def test_the_cli_contacts_no_server_the_repository_names_serves_no_secret_and_says_so_once(
    hostile: Hostile, tmp_path: Path
) -> None:
    repo = hostile.repo
    indexed = _ided(tmp_path, repo, "index")
    first = indexed.stderr.splitlines()[0]
    assert first.startswith(f"ided: the workspace {repo} is not trusted"), indexed.stderr
    assert f"`ided trust {repo}`" in first and all(key in first for key in hostile.keys)
    assert "venv/bin/basedpyright-langserver" in first, indexed.stderr
    assert indexed.stderr.count("is not trusted") == 1
    hits = json.loads(_ided(tmp_path, repo, "search", " ".join([*SECRET_MARKERS, "add"]), "--json").stdout)["hits"]
    served = [m for m in SECRET_MARKERS if any(m in h["chunk"]["text"] for h in hits)]
    status = json.loads(_ided(tmp_path, repo, "status", "--json").stdout)
    shown = _ided(tmp_path, repo, "status")
    _ided(tmp_path, repo, "runs")
    requests, connections = hostile.requests(), hostile.database_connections()
    withheld = status["trust"]["withheld"]
    print(
        f"[adversarial] repository keys tried {len(hostile.keys)}, refused {len(set(withheld) & set(hostile.keys))}; "
        f"secrets planted {len(SECRET_MARKERS)}, served {len(served)}; requests to its servers {requests + connections}"
    )
    assert served == [] and requests == 0 and connections == 0
    assert sorted(withheld) == sorted(hostile.keys)
    assert status["trust"]["unused_programs"] == ["venv/bin/basedpyright-langserver"]
    assert status["last_report"]["skipped"]["too_large"] == 1  # the repository's raised cap was not taken
    assert "trust: ided: the workspace" in shown.stdout and "is not trusted" not in shown.stderr


async def test_the_lsp_front_shows_the_notice_once(hostile: Hostile, tmp_path: Path) -> None:
    async with lsp_client(hostile.repo, tmp_path / "state") as client:
        shown = await asyncio.wait_for(_first_trust_message(client.shown), WAIT_S)
        assert f"`ided trust {hostile.repo}`" in shown and "qdrant.url" in shown
    assert hostile.requests() == 0


async def _first_trust_message(queue: asyncio.Queue[Any]) -> str:
    while True:
        params = await queue.get()
        if "is not trusted" in params.message:
            return str(params.message)


async def test_the_mcp_front_says_it_in_its_instructions_and_its_first_answer_only(
    hostile: Hostile, tmp_path: Path
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-P", "-m", "daemon", "mcp", "--standalone", "-w", str(hostile.repo)],
        env=_env(tmp_path),
        cwd=str(hostile.repo),
    )
    with (tmp_path / "mcp-stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=CALL_TIMEOUT) as client:
            assert client.instructions is not None and f"`ided trust {hostile.repo}`" in client.instructions
            texts: list[str] = []
            for _ in range(2):
                result = await asyncio.wait_for(client.call_tool("search_code", {"query": "add"}), CALL_TIMEOUT)
                texts.append("".join(getattr(block, "text", "") for block in result.content))
    assert "is not trusted" in texts[0] and "qdrant.url" in texts[0]
    assert "is not trusted" not in texts[1]


async def test_the_acp_front_says_it_as_a_new_sessions_first_update(hostile: Hostile, tmp_path: Path) -> None:
    client = RecordingClient()
    env = env_for(tmp_path, None)
    async with spawn_ided_acp(tmp_path, env, client=client) as agent:
        await initialize(agent.conn)
        session = await asyncio.wait_for(agent.conn.new_session(cwd=str(hostile.repo), mcp_servers=[]), WAIT_S)
        await client.wait_for(lambda: bool(client.updates), "the session's first update")
    sid, first = client.updates[0]
    text = getattr(getattr(first, "content", None), "text", "")
    assert sid == session.session_id and first.session_update == "agent_message_chunk"
    assert f"`ided trust {hostile.repo}`" in text and "runs.database_url" in text
