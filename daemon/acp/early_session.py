"""The early ``session/new`` answer: once ``initialize`` was answered early (``daemon.acp.handshake``),
``ided acp`` answers the client's first ``session/new`` before it loads the ACP SDK.

The SDK's schema alone is half a second of CPU, and a client sends ``session/new`` right after
``initialize``; the answer needs only the folder's configuration and a new session file. So
:func:`answer_new_session` reads the next line and, when it is a ``session/new`` this module can
vouch for, loads the folder's configuration as the agent would (:class:`FolderConfigs`: the
folder admitted, the ``--set`` overrides applied), creates the session (``SessionStore.create``)
and writes the answer ``IdedAgent.new_session`` gives for it: the session id and the modes.

The agent then gets the request once loaded, adopts the session created here instead of creating
another (:class:`EarlySession`), and the guarded transport drops the SDK's answer and holds back
the client's next message until the agent has the session, so a ``session/prompt`` sent at once
finds it.

It vouches for: a JSON-RPC 2.0 ``session/new`` request with ``cwd`` a string, ``mcpServers`` an
empty list (lending the client's MCP servers loads the MCP SDK: that stays the agent's), and
``additionalDirectories`` and ``_meta`` absent or null. Anything
else, a configuration that does not load or a folder that is not admitted is left alone: every byte
read is handed back, and the agent answers as it always does (a refused folder or a bad
configuration as the coded error).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from daemon.acp.handshake import Handshake, answer, read_line
from daemon.acp.sessions import MODES, SessionRecord, SessionStore
from daemon.config import Config, load_config, parse_set_pairs
from daemon.core.early_handshake import EarlyAnswer, request_for
from daemon.errors import DaemonError
from daemon.workspace_roots import admit_workspace, check_folder

__all__ = ["EarlySession", "FolderConfigs", "answer_new_session", "new_session_result"]


@dataclass(frozen=True, kw_only=True)
class EarlySession:
    """The ``session/new`` answered early, and the session it created (the agent adopts it)."""

    answered: EarlyAnswer
    record: SessionRecord


@dataclass(frozen=True)
class FolderConfigs:
    """How ``ided acp`` configures a session's folder: its ``--set`` settings (``overrides``), and the
    folder it was started in (which the allowed roots may name)."""

    overrides: dict[str, Any]
    launch_dir: Path

    def load(self, folder: Path) -> Config:
        """The folder's configuration, once the folder is admitted (``daemon.workspace_roots``)."""
        config = load_config(check_folder(folder), overrides=self.overrides)
        admit_workspace(config, launch_dir=self.launch_dir)
        return config


def new_session_result(record: SessionRecord) -> dict[str, Any]:
    """The ``NewSessionResponse`` (as JSON) ``IdedAgent.new_session`` gives for the session ``record``."""
    return {
        "sessionId": record.session_id,
        "modes": {
            "currentModeId": record.mode.value,
            "availableModes": [{"id": m.mode.value, "name": m.name, "description": m.description} for m in MODES],
        },
    }


def answer_new_session(
    handshake: Handshake,
    *,
    workspace: Path | None,
    settings: list[str],
    read_fd: int = 0,
    write_fd: int = 1,
) -> tuple[Handshake, EarlySession | None]:
    """After an early ``initialize``: read the next line and answer it when it is a ``session/new`` this
    module vouches for. Returns the handshake with the bytes still to serve, and the session answered."""
    data = read_line(read_fd, handshake.pending)
    end = data.find(b"\n")
    message = _vouched(data[:end]) if end >= 0 else None
    record = _create(message, workspace, settings) if message is not None else None
    if message is None or record is None:
        return Handshake(early=handshake.early, pending=data), None
    result = new_session_result(record)
    answer(write_fd, message, result)
    early = EarlySession(answered=EarlyAnswer(message=message, result=result), record=record)
    return Handshake(early=handshake.early, pending=data[end + 1 :]), early


def _create(message: dict[str, Any], workspace: Path | None, settings: list[str]) -> SessionRecord | None:
    """The session the agent would create for ``message`` (None where the agent must answer itself)."""
    folder = workspace.resolve() if workspace is not None else Path(cast(str, message["params"]["cwd"]))
    if not folder.is_absolute() or not folder.is_dir():
        return None
    try:
        config = FolderConfigs(parse_set_pairs(settings), Path.cwd()).load(folder)
        return SessionStore(config.state_path).create(config.workspace_path)
    except (DaemonError, ValueError, OSError):
        return None


def _vouched(line: bytes) -> dict[str, Any] | None:
    message = request_for(line, "session/new")
    return message if message is not None and _params_fit(cast(dict[str, Any], message["params"])) else None


def _params_fit(params: dict[str, Any]) -> bool:
    if set(params) - {"cwd", "mcpServers", "additionalDirectories", "_meta"}:
        return False
    return (
        isinstance(params.get("cwd"), str)
        and params.get("mcpServers") == []
        and params.get("additionalDirectories") is None
        and params.get("_meta") is None
    )
