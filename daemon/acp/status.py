"""``_ided/status``: the workspace daemon's state as one ACP extension notification for a status bar.

Sent (agent → client, method ``_ided/status``: the SDK prefixes extension names with ``_``) after
``session/new`` and ``session/load`` and again when a run ends. The params are ``IdedStatus``: a
one-line ``message`` plus the figures it was made from, taken from the attached daemon's
``daemon/status`` (bounded by ``STATUS_TIMEOUT_S``). Without a daemon (``acp.attach_daemon`` off,
attaching failed, the daemon went away) the message says so and the figures are null. Never raises:
a status that cannot be read becomes a message saying why, and the failure is logged.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from daemon.errors import DaemonError
from daemon.service.wire.api import DaemonStatus, Methods
from daemon.service.wire.rpc import RpcError

if TYPE_CHECKING:
    from daemon.service.wire.client import DaemonClient

__all__ = [
    "STATUS_METHOD",
    "STATUS_TIMEOUT_S",
    "IdedStatus",
    "LanguageServerLine",
    "from_daemon",
    "read_status",
    "without_figures",
]

logger = logging.getLogger(__name__)

STATUS_METHOD = "ided/status"
"""The name given to ``ext_notification``; on the wire it is ``_ided/status``."""

STATUS_TIMEOUT_S = 5.0
"""Upper bound for the ``daemon/status`` round trip behind one notification."""


class LanguageServerLine(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    languages: list[str]
    state: str
    reason: str | None = None


class IdedStatus(BaseModel):
    """The params of ``_ided/status``."""

    model_config = ConfigDict(frozen=True)

    message: str = Field(description="One line for a status bar.")
    session_id: str | None = Field(default=None, description="The session this was sent for.")
    workspace: str
    daemon: Literal["running", "none"]
    daemon_pid: int | None = None
    index_files: int | None = None
    chunks: int | None = None
    embedded_fraction: float | None = Field(default=None, description="Share of chunks with a dense vector, 0..1.")
    indexing: bool | None = Field(default=None, description="Whether the index is working now (see busy).")
    busy: str | None = Field(default=None, description="What the index is doing (initial pass, embedding).")
    index_ready: bool | None = None
    index_reason: str | None = Field(default=None, description="Why the index is not ready, or what is degraded.")
    language_servers: list[LanguageServerLine] = Field(default_factory=list[LanguageServerLine])
    reason: str | None = Field(default=None, description="Why there are no figures (no daemon, no answer).")


def _servers_text(servers: list[LanguageServerLine]) -> str:
    if not servers:
        return "no language servers"
    return ", ".join(f"{s.name} {s.state}" for s in servers)


def from_daemon(status: DaemonStatus, *, workspace: str, session_id: str | None) -> IdedStatus:
    index = status.index
    servers = [
        LanguageServerLine(name=s.name, languages=list(s.languages), state=s.state.value, reason=s.reason)
        for s in status.servers
    ]
    doing = f"indexing ({status.busy})" if status.busy else "index idle" if index.ready else "index not ready"
    message = (
        f"ided daemon {status.pid}: {index.files_indexed} files, {index.chunks} chunks, "
        f"{index.embedded_fraction:.0%} embedded; {doing}; {_servers_text(servers)}"
    )
    return IdedStatus(
        message=message,
        session_id=session_id,
        workspace=workspace,
        daemon="running",
        daemon_pid=status.pid,
        index_files=index.files_indexed,
        chunks=index.chunks,
        embedded_fraction=index.embedded_fraction,
        indexing=status.busy is not None,
        busy=status.busy,
        index_ready=index.ready,
        index_reason=index.reason,
        language_servers=servers,
    )


def without_figures(reason: str, *, workspace: str, session_id: str | None, pid: int | None = None) -> IdedStatus:
    running = pid is not None
    message = f"ided daemon {pid}: no status ({reason})" if running else f"ided: no daemon ({reason})"
    return IdedStatus(
        message=message,
        session_id=session_id,
        workspace=workspace,
        daemon="running" if running else "none",
        daemon_pid=pid,
        reason=reason,
    )


async def read_status(
    daemon: DaemonClient | None, note: str | None, *, workspace: str, session_id: str | None = None
) -> IdedStatus:
    """The status of ``workspace`` from its attached daemon, or a status saying why there is none."""
    if daemon is None:
        return without_figures(note or "not attached", workspace=workspace, session_id=session_id)
    if daemon.closed:
        return without_figures("the daemon connection closed", workspace=workspace, session_id=session_id)
    try:
        status = await daemon.call_model(Methods.DAEMON_STATUS, None, DaemonStatus, wait_s=STATUS_TIMEOUT_S)
    except TimeoutError:
        logger.warning("the daemon of %s did not answer daemon/status in %.0fs", workspace, STATUS_TIMEOUT_S)
        reason = f"no answer within {STATUS_TIMEOUT_S:.0f}s"
        return without_figures(reason, workspace=workspace, session_id=session_id, pid=daemon.daemon_pid)
    except ConnectionError as exc:
        logger.warning("the daemon of %s went away: %s", workspace, exc)
        return without_figures("the daemon connection closed", workspace=workspace, session_id=session_id)
    except (DaemonError, RpcError, ValidationError, OSError) as exc:
        logger.warning("daemon/status of %s failed: %s", workspace, exc)
        reason = f"daemon/status failed: {exc}"
        return without_figures(reason, workspace=workspace, session_id=session_id, pid=daemon.daemon_pid)
    return from_daemon(status, workspace=workspace, session_id=session_id)
