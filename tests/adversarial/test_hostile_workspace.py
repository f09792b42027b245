"""A hostile workspace leaks nothing through the real fronts: the CLI, MCP over stdio, a watching daemon.

Each test tries every planted escape and secret through its front, counts them (printed as one
``[adversarial]`` line per front: run with ``-s`` to see the figures) and fails on the first leak.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from daemon.config import load_config
from daemon.core.models import SearchMode, SkipReason
from daemon.errors import PathOutsideWorkspace, SecretRefused
from daemon.orchestration.agents.workspace_files import RunFiles
from daemon.service.wire.api import DaemonStatus, Methods, SearchParams
from daemon.service.wire.client import DaemonClient
from tests.adversarial.hostile_workspace import (
    AWS_KEY_ID,
    HostileWorkspace,
    Tally,
    build_hostile_workspace,
    plant_late_attacks,
)
from tests.intel_tools import SEARCH_PATH, require_server

pytestmark = pytest.mark.e2e

CALL_TIMEOUT = 120.0
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def hostile(tmp_path: Path, isolated_home: Path) -> HostileWorkspace:
    return build_hostile_workspace(tmp_path)


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("IDED_")},
        "IDED_STATE_DIR": str(tmp_path / "state"),
        "IDED_EMBEDDING__ENABLED": "false",
        "IDED_INTEL__PRESTART": "false",
        "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
        "HF_HUB_OFFLINE": "1",
    }


def _path(hit: dict[str, Any]) -> str:
    """A hit's path: a search result's (``chunk.path``) or a search tool's answer (``path``)."""
    return str(hit["chunk"]["path"] if "chunk" in hit else hit["path"])


def _leaked_markers(hits: list[dict[str, Any]], markers: list[str]) -> dict[str, list[str]]:
    """marker -> the hit paths whose text (or snippet) holds it."""
    found: dict[str, list[str]] = {}
    for hit in hits:
        text = hit["chunk"]["text"] if "chunk" in hit else f"{hit['snippet']}\n{hit['text']}"
        for marker in markers:
            if marker in text:
                found.setdefault(marker, []).append(_path(hit))
    return found


def _judge_search(ws: HostileWorkspace, tally: Tally, hits: list[dict[str, Any]]) -> None:
    leaked = _leaked_markers(hits, ws.markers)
    paths = {_path(hit) for hit in hits}
    for rel, marker in ws.escapes.items():
        tally.escape(marker not in leaked and rel not in paths, f"search returned {rel} ({marker})")
    for rel, marker in ws.secrets.items():
        tally.secret(marker in leaked or rel in paths, f"search returned {rel} ({marker})")


def _cli(tmp_path: Path, ws: HostileWorkspace, *args: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-P", "-m", "daemon", *args, "--json"],
        cwd=ws.root,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=CALL_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_search_cli_serves_no_escape_and_no_secret_and_counts_each_skip(
    hostile: HostileWorkspace, tmp_path: Path
) -> None:
    tally = Tally("cli search")
    result = _cli(tmp_path, hostile, "search", " ".join([*hostile.markers, hostile.decoy_marker]), "-k", "50")
    hits: list[dict[str, Any]] = result["hits"]
    _judge_search(hostile, tally, hits)
    print(tally.line())
    assert tally.leaks == []
    assert hostile.decoy in {h["chunk"]["path"] for h in hits}, "the ordinary credentials.py must be indexed"
    status = _cli(tmp_path, hostile, "status")
    skipped = status["last_report"]["skipped"]
    # by name (.env, the links to it and to prod.env, service-account.json, id_rsa) at the scan,
    # by content (the GCP key under another name, the tokens in code) when read: all counted as secret
    assert skipped[SkipReason.SECRET.value] == len(hostile.secrets)
    assert skipped[SkipReason.SYMLINK_OUTSIDE.value] == len(hostile.escapes)


async def _call(client: Client, tool: str, **arguments: Any) -> tuple[bool, str, dict[str, Any] | None]:
    result = await asyncio.wait_for(client.call_tool(tool, arguments), CALL_TIMEOUT)
    text = "".join(getattr(block, "text", "") for block in result.content)
    return bool(result.is_error), text, result.structured_content


async def test_mcp_tools_refuse_every_escape_and_secret_and_serve_the_decoy(
    hostile: HostileWorkspace, tmp_path: Path
) -> None:
    tally = Tally("mcp (stdio)")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-P", "-m", "daemon", "mcp", "--standalone", "-w", str(hostile.root)],
        env=_env(tmp_path),
        cwd=str(hostile.root),
    )
    with (tmp_path / "mcp-stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=CALL_TIMEOUT) as client:
            error, text, found = await _call(
                client, "search_code", query=" ".join([*hostile.markers, hostile.decoy_marker]), k=50, detail=True
            )
            assert not error, text
            assert found is not None
            _judge_search(hostile, tally, found["hits"])
            assert hostile.decoy in {_path(h) for h in found["hits"]}
            for rel, marker in hostile.escapes.items():
                error, text, _ = await _call(client, "get_ast_node", file=rel, line=1)
                tally.escape(error and marker not in text, f"get_ast_node {rel}")
                assert "path_outside_workspace" in text or "does not exist" in text, text
            for rel, marker in hostile.secrets.items():
                for tool in ("get_ast_node", "document_symbols"):
                    args: dict[str, Any] = {"file": rel, "line": 1} if tool == "get_ast_node" else {"file": rel}
                    error, text, _ = await _call(client, tool, **args)
                    tally.secret(not error or marker in text, f"{tool} {rel}")
                    assert "secret_refused" in text, text
            error, text, node = await _call(client, "get_ast_node", file=hostile.decoy, line=2)
            assert not error and node is not None, text
    print(tally.line())
    assert tally.leaks == []


async def test_language_server_answers_quote_no_line_of_a_secret_file(
    hostile: HostileWorkspace, tmp_path: Path
) -> None:
    require_server("python")
    tally = Tally("mcp language-server answers")
    env = {**_env(tmp_path), "IDED_INTEL__SEARCH_PATH": json.dumps(list(SEARCH_PATH))}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-P", "-m", "daemon", "mcp", "--standalone", "-w", str(hostile.root)],
        env=env,
        cwd=str(hostile.root),
    )
    with (tmp_path / "mcp-stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=CALL_TIMEOUT) as client:
            for tool in ("find_definition", "get_references", "get_signature"):
                error, text, found = await _call(client, tool, file="py/uses_settings.py", line=5, column=12)
                assert not error and found is not None, text
                answer = json.dumps(found)
                # the server did answer about the secret file's constant
                assert "AWS_ACCESS_KEY_ID" in answer if tool == "get_signature" else "deploy/settings.py" in answer, (
                    answer
                )
                tally.secret(AWS_KEY_ID in answer or "zqsecretaws" in answer, f"{tool} quoted {answer[:300]}")
    print(tally.line())
    assert tally.leaks == []


async def _first_pass_done(client: DaemonClient) -> None:
    while True:
        status = await client.call_model(Methods.DAEMON_STATUS, None, DaemonStatus)
        if status.index.last_update is not None and status.busy is None:
            return
        await asyncio.sleep(0.05)


async def test_a_watching_daemon_indexes_no_link_out_and_no_secret_that_arrives_later(
    hostile: HostileWorkspace, tmp_path: Path
) -> None:
    tally = Tally("daemon watcher")
    overrides: dict[str, Any] = {
        "state_dir": str(tmp_path / "state"),
        "embedding": {"enabled": False},
        "daemon": {"idle_shutdown_seconds": 0, "debounce_ms": 20},
    }
    config = load_config(hostile.root, overrides=overrides)
    changed: set[str] = set()
    arrived = asyncio.Event()
    late_escapes: dict[str, str] = {}
    late_secrets: dict[str, str] = {}

    async def on_note(method: str, params: dict[str, Any]) -> None:
        if method == Methods.INDEX_CHANGED:
            changed.update(params["paths"])
            if {*late_escapes, *late_secrets} <= changed and late_escapes:
                arrived.set()

    client = await DaemonClient.attach(
        config, client="other", overrides=overrides, subscribe=True, on_notification=on_note
    )
    try:
        await asyncio.wait_for(_first_pass_done(client), 120)
        escapes, secrets, benign = plant_late_attacks(hostile)
        late_escapes.update(escapes)
        late_secrets.update(secrets)
        if {*late_escapes, *late_secrets} <= changed:
            arrived.set()
        await asyncio.wait_for(arrived.wait(), 60)
        markers = sorted({*escapes.values(), *secrets.values(), *hostile.markers})
        query = " ".join([*markers, "zqlatebenign"])
        result = await client.call(Methods.INDEX_SEARCH, SearchParams(query=query, k=50, mode=SearchMode.LEXICAL))
        hits: list[dict[str, Any]] = result["hits"]
        assert benign in {h["chunk"]["path"] for h in hits}, "the benign late file was indexed"
        late = HostileWorkspace(
            root=hostile.root,
            outside=hostile.outside,
            escapes={**hostile.escapes, **escapes},
            secrets={**hostile.secrets, **secrets},
        )
        _judge_search(late, tally, hits)
    finally:
        await client.call(Methods.SHUTDOWN, None)
        await client.close()
    print(tally.line())
    assert tally.leaks == []


async def test_agents_read_file_refuses_links_out_and_secrets_and_reads_the_decoy(hostile: HostileWorkspace) -> None:
    tally = Tally("agent read_file")
    files = RunFiles(hostile.root, editable=False)
    for rel, marker in {**hostile.escapes, "../outside/passwd.txt": "zqoutpasswd"}.items():
        try:
            text = await files.read(rel)
        except PathOutsideWorkspace:
            tally.escape(True, rel)
        else:
            tally.escape(marker not in text, f"read_file {rel}")
    for rel, marker in hostile.secrets.items():
        try:
            text = await files.read(rel)
        except SecretRefused:
            tally.secret(False, rel)
        else:
            tally.secret(True, f"read_file {rel} ({marker}: {text[:40]!r})")
    assert hostile.decoy_marker in await files.read(hostile.decoy)
    print(tally.line())
    assert tally.leaks == []
