"""Shared by the ``ided acp`` end-to-end tests: a recording ACP client (the SDK's own client side),
the agent process spawned over real stdio, a fixture git repository and replay scripts."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, Client, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from daemon.acp.prompt_content import PromptBlock
from daemon.core.run_models import RunStatus
from daemon.orchestration.sqlite_run_store import SqliteRunStore, runs_db_path
from tests.vcs_support import make_repo

WAIT_S = 60.0
"""Upper bound for anything a test waits for (runs take well under a second with the replay model)."""

CALC = "def add(a, b):\n    return a + b\n"


def env_for(tmp_path: Path, script: Path | None, **settings: str) -> dict[str, str]:
    env = {
        "IDED_STATE_DIR": str(tmp_path / "state"),
        "IDED_EMBEDDING__ENABLED": "false",
        "IDED_ACP__ATTACH_DAEMON": "false",
        "IDED_PIPELINE__RESILIENCE__CACHE": "false",
        "IDED_PIPELINE__RESILIENCE__MAX_RETRIES": "0",
        "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
        "IDED_ROOTS__ALLOWED": json.dumps([str(tmp_path)]),
        "HF_HUB_OFFLINE": "1",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    if script is not None:
        env["IDED_PIPELINE__REPLAY_SCRIPT"] = str(script)
    env.update({f"IDED_{k.upper()}": v for k, v in settings.items()})
    return env


def fixture_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"calc.py": CALC, "README.md": "# calc\n"})


def text_of(update: Any) -> str:
    content = getattr(update, "content", None)
    return content.text if isinstance(content, TextContentBlock) else ""


@dataclass
class RecordingClient:
    """An ACP client that records every update and answers permission requests as told."""

    updates: list[tuple[str, Any]] = field(default_factory=lambda: list[tuple[str, Any]]())
    permission_requests: list[tuple[ToolCallUpdate, list[PermissionOption]]] = field(
        default_factory=lambda: list[tuple[ToolCallUpdate, list[PermissionOption]]]()
    )
    permission_answers: list[tuple[str, str | dict[str, Any] | None]] = field(
        default_factory=lambda: list[tuple[str, str | dict[str, Any] | None]]()
    )
    """(option id, feedback text sent in ``_meta`` or the whole ``_meta``) per request, in order; none left answers
    'cancelled'."""
    open_buffers: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    reads: list[str] = field(default_factory=lambda: list[str]())
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        async with self._changed:
            self.updates.append((session_id, update))
            self._changed.notify_all()

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        async with self._changed:
            self.permission_requests.append((tool_call, options))
            self._changed.notify_all()
        if not self.permission_answers:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        option, feedback = self.permission_answers.pop(0)
        meta = {"ided/feedback": feedback} if isinstance(feedback, str) else feedback
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option), field_meta=meta)

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        text = self.open_buffers.get(path)
        if text is None:
            text = await asyncio.to_thread(Path(path).read_text, encoding="utf-8")
        return ReadTextFileResponse(content=text)

    async def wait_for(self, predicate: Callable[[], bool], what: str, wait_s: float = WAIT_S) -> None:
        async def until() -> None:
            async with self._changed:
                await self._changed.wait_for(predicate)

        try:
            await asyncio.wait_for(until(), wait_s)
        except TimeoutError:
            raise AssertionError(f"timed out waiting for {what}; updates: {self.kinds()}") from None

    def of(self, session_id: str | None = None) -> list[Any]:
        return [u for sid, u in self.updates if session_id is None or sid == session_id]

    def kinds(self, session_id: str | None = None) -> list[str]:
        return [u.session_update for u in self.of(session_id)]

    def plans(self, session_id: str | None = None) -> list[AgentPlanUpdate]:
        return [u for u in self.of(session_id) if isinstance(u, AgentPlanUpdate)]

    def thoughts(self, session_id: str | None = None) -> str:
        return "".join(text_of(u) for u in self.of(session_id) if isinstance(u, AgentThoughtChunk))

    def messages(self, session_id: str | None = None) -> str:
        return "".join(text_of(u) for u in self.of(session_id) if isinstance(u, AgentMessageChunk))

    def tool_calls(self, session_id: str | None = None) -> list[ToolCallStart | ToolCallProgress]:
        return [u for u in self.of(session_id) if isinstance(u, ToolCallStart | ToolCallProgress)]


def plan_statuses(plan: AgentPlanUpdate) -> list[tuple[str, str]]:
    """(stage_id, ided status) per entry: pending / in_progress / completed / failed / skipped."""
    return [
        (str((e.field_meta or {})["ided/stage_id"]), str((e.field_meta or {})["ided/status"])) for e in plan.entries
    ]


@dataclass
class AgentProcess:
    conn: ClientSideConnection
    process: asyncio.subprocess.Process
    client: RecordingClient
    stderr: Path


@asynccontextmanager
async def spawn_ided_acp(
    tmp_path: Path,
    env: Mapping[str, str],
    *,
    client: RecordingClient | None = None,
    args: tuple[str, ...] = (),
    global_args: tuple[str, ...] = (),
    cwd: Path | None = None,
    shutdown_timeout: float = 20.0,
) -> AsyncGenerator[AgentProcess]:
    """``python -P -m daemon [GLOBAL_ARGS] acp [ARGS]`` behind the SDK's client connection, stderr to a file."""
    recorder = client or RecordingClient()
    stderr = tmp_path / f"acp-stderr-{id(recorder)}.log"
    with stderr.open("wb") as err:
        async with spawn_agent_process(
            cast(Client, recorder),  # implements what it advertises; the SDK answers -32601 for the rest
            sys.executable,
            "-P",
            "-m",
            "daemon",
            *global_args,
            "acp",
            *args,
            env=dict(env),
            cwd=cwd,
            transport_kwargs={"stderr": err.fileno(), "shutdown_timeout": shutdown_timeout},
        ) as (conn, process):
            yield AgentProcess(conn=conn, process=process, client=recorder, stderr=stderr)


async def initialize(conn: ClientSideConnection, *, read_files: bool = True) -> Any:
    caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=read_files, write_text_file=False))
    return await asyncio.wait_for(
        conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=caps,
            client_info=Implementation(name="ided-tests", version="0"),
        ),
        WAIT_S,
    )


def prompt_text(text: str) -> list[PromptBlock]:
    return [TextContentBlock(type="text", text=text)]


async def prompt_until_in_progress(agent: AgentProcess, sid: str, text: str, stage: str) -> asyncio.Task[Any]:
    """Send a prompt without waiting for its answer and return once the plan shows ``stage`` in progress;
    the task answers the prompt."""
    prompt = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=prompt_text(text)))
    await agent.client.wait_for(
        lambda: any(dict(plan_statuses(p)).get(stage) == "in_progress" for p in agent.client.plans(sid)),
        f"{stage} in progress",
    )
    return prompt


async def stop(process: asyncio.subprocess.Process) -> int:
    """Close the agent's stdin and wait for its exit code."""
    if process.stdin is not None:
        with contextlib.suppress(Exception):
            process.stdin.close()
    return await asyncio.wait_for(process.wait(), WAIT_S)


async def recorded_runs(tmp_path: Path) -> list[tuple[str, RunStatus]]:
    """(run id, status) of the runs recorded under ``tmp_path / "state"``, newest first."""
    store = await asyncio.to_thread(SqliteRunStore, runs_db_path(tmp_path / "state"), workspace_id="reader")
    try:
        return [(r.run_id, r.status) for r in await store.list(10, all_workspaces=True)]
    finally:
        await asyncio.to_thread(store.close)
