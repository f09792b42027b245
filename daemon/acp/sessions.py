"""ACP sessions: what a session is (workspace, mode, its runs) and where it is kept between processes.

A session is a JSON file under ``<state_dir>/acp/sessions/<session_id>.json`` of the workspace it
works on, so ``session/load`` in a later ``ided acp`` process finds it and replays its runs from
the run store. Writes go to a temporary file first, then replace the old one.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field

from daemon.core.frozen_model import FrozenModel
from daemon.core.record_files import RecordDir
from daemon.core.tasks import cancel_and_wait

if TYPE_CHECKING:
    from daemon.acp.workspaces import Workspace
    from daemon.service.pipeline.client_tools import ClientMcpServers

from daemon.errors import DaemonError, ErrorCode

__all__ = ["MODES", "ModeInfo", "SessionMode", "SessionRecord", "SessionState", "SessionStore", "new_session_id"]

logger = logging.getLogger(__name__)

_SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{1,80}$")


class SessionMode(StrEnum):
    ASK = "ask"
    CODE = "code"


@dataclass(frozen=True)
class ModeInfo:
    """How a session mode is offered to the client (ACP ``SessionMode``)."""

    mode: SessionMode
    name: str
    description: str


MODES = (
    ModeInfo(SessionMode.ASK, "Ask", "Read-only: agents answer and explain; nothing is edited."),
    ModeInfo(
        SessionMode.CODE,
        "Code",
        "Agents edit a worktree on the run's own branch; you review the whole diff at the end.",
    ),
)
"""The modes every session offers, in the order the client shows them."""


class SessionRecord(FrozenModel):
    """One ACP session, as persisted."""

    session_id: str
    cwd: str
    mode: SessionMode = SessionMode.CODE
    created_at: str
    updated_at: str
    title: str | None = None
    runs: tuple[str, ...] = Field(default=(), description="Run ids of this session's prompts, oldest first.")


def new_session_id() -> str:
    return f"s-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(4)}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class SessionStore(RecordDir[SessionRecord]):
    """The sessions of one workspace (synchronous; small files; callers use ``asyncio.to_thread``)."""

    def __init__(self, state_dir: Path) -> None:
        self.root = state_dir / "acp" / "sessions"
        super().__init__(self.root, SessionRecord, what="session file")

    def _checked(self, key: str) -> str:
        if not _SESSION_ID.match(key):
            raise DaemonError(f"'{key}' is not an ided session id", code=ErrorCode.RUN_NOT_FOUND)
        return key

    def _missing(self, key: str) -> Exception:
        return DaemonError(
            f"no session '{key}' in {self.root} (sessions belong to the workspace they were created in)",
            code=ErrorCode.RUN_NOT_FOUND,
        )

    def _unreadable(self, key: str, path: Path, exc: Exception) -> Exception:
        return DaemonError(f"session file {path} cannot be read", code=ErrorCode.RUN_NOT_FOUND, cause=exc)

    def create(self, cwd: Path, mode: SessionMode = SessionMode.CODE) -> SessionRecord:
        now = _now()
        record = SessionRecord(session_id=new_session_id(), cwd=str(cwd), mode=mode, created_at=now, updated_at=now)
        self.save(record)
        return record

    def save(self, record: SessionRecord) -> None:
        self._write(record.session_id, record)

    def get(self, session_id: str) -> SessionRecord:
        return self._read(session_id)

    def update(
        self,
        session_id: str,
        *,
        mode: SessionMode | None = None,
        add_run: str | None = None,
        title: str | None = None,
    ) -> SessionRecord:
        record = self.get(session_id)
        changes: dict[str, object] = {"updated_at": _now()}
        if mode is not None:
            changes["mode"] = mode
        if add_run is not None and add_run not in record.runs:
            changes["runs"] = (*record.runs, add_run)
        if title is not None and record.title is None:
            changes["title"] = title
        updated = record.model_copy(update=changes)
        self.save(updated)
        return updated

    def list(self) -> list[SessionRecord]:
        """Every readable session, most recently updated first."""
        return sorted(self._read_all(), key=lambda r: r.updated_at, reverse=True)


@dataclass
class SessionState:
    """A session's state in this process: its prompt turn, the tasks sending for it, its client MCP servers.

    ``close`` ends all of it (``session/close``, a later ``session/load`` of the same session): the
    prompt in flight is cancelled as by ``session/cancel`` and waited for, then the tasks and the MCP
    servers go. The session's file, its runs and their branches are not touched.
    """

    record: SessionRecord
    workspace: Workspace
    prompt_running: bool = False
    run_id: str | None = None
    feedback_for: str | None = None
    """A run whose review asked for feedback: the next prompt is that feedback."""
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    review_rounds: int = 0
    trust_rounds: int = 0
    trusted: bool | None = None
    """The client's answer to "may the repository's commands run?" in this session (None: not asked)."""
    mcp: ClientMcpServers | None = None
    """The MCP servers the client passed for this session (closed with the session or the process)."""
    reoffer: asyncio.Task[None] | None = None
    """A loaded session's open reviews, offered again (cancelled when the session closes)."""
    tasks: set[asyncio.Task[None]] = field(default_factory=lambda: set[asyncio.Task[None]]())
    """Background work sending for this session (status, commands, the MCP report): cancelled on close."""
    closing: bool = False
    """``close`` has begun: the session takes no new requests."""
    closed: bool = False
    """``close`` has ended: nothing more is sent for the session."""
    _idle: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self._idle.set()

    def begin_turn(self) -> None:
        """A prompt turn (or a loaded review's follow-up) starts: one at a time per session."""
        self.prompt_running = True
        self.cancelled = asyncio.Event()
        self._idle.clear()

    def end_turn(self) -> None:
        self.prompt_running = False
        self._idle.set()

    async def cancel_turn(self) -> None:
        """``session/cancel``: the prompt in flight ends ``cancelled``; its run starts no further stage."""
        if not self.prompt_running:
            return
        self.cancelled.set()
        if self.run_id is not None:
            await self.workspace.runs.cancel(self.run_id)

    async def close(self) -> None:
        """Cancel the prompt in flight and wait for its turn to end (it sends its last updates and
        answers ``cancelled``), then cancel the session's tasks and close its MCP servers (idempotent)."""
        self.closing = True
        while self.prompt_running:
            await self.cancel_turn()
            await self._idle.wait()
        tasks = [t for t in (self.reoffer, *self.tasks) if t is not None and not t.done()]
        self.reoffer = None
        await cancel_and_wait(tasks)
        await self.close_mcp()
        self.closed = True

    async def close_mcp(self) -> None:
        if self.mcp is not None:
            lent, self.mcp = self.mcp, None
            await lent.aclose()
