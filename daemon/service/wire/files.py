"""Where a workspace's daemon can be found: its socket and its ``daemon.json`` record.

The socket lives in the workspace state directory (mode 0700, socket 0600). Unix socket paths
are limited to ~107 bytes, so a long state path falls back to ``/tmp/ided-<uid>/<hash>.sock``.
A record whose pid is gone, or whose socket refuses connections, is stale and is removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from daemon.core.processes import pid_alive

__all__ = ["DaemonRecord", "read_record", "remove_stale", "socket_path", "write_record"]

_MAX_SOCKET_PATH = 100


class DaemonRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    pid: int
    socket: str
    workspace: str
    version: str
    started: str


def socket_path(state_dir: Path) -> Path:
    preferred = state_dir / "daemon.sock"
    if len(str(preferred)) <= _MAX_SOCKET_PATH:
        return preferred
    digest = hashlib.blake2b(str(state_dir.resolve()).encode(), digest_size=8).hexdigest()
    short = Path(f"/tmp/ided-{os.getuid()}")
    short.mkdir(mode=0o700, exist_ok=True)
    os.chmod(short, 0o700)
    return short / f"{digest}.sock"


def _record_path(state_dir: Path) -> Path:
    return state_dir / "daemon.json"


def write_record(state_dir: Path, *, sock: Path, workspace: Path, version: str) -> DaemonRecord:
    record = DaemonRecord(
        pid=os.getpid(),
        socket=str(sock),
        workspace=str(workspace),
        version=version,
        started=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    tmp = _record_path(state_dir).with_suffix(".json.tmp")
    tmp.write_text(record.model_dump_json(indent=2))
    os.chmod(tmp, 0o600)
    tmp.replace(_record_path(state_dir))
    return record


def read_record(state_dir: Path) -> DaemonRecord | None:
    try:
        return DaemonRecord.model_validate(json.loads(_record_path(state_dir).read_text()))
    except (OSError, ValueError, ValidationError):
        return None


def _socket_answers(path: str) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(1.0)
        try:
            s.connect(path)
        except OSError:
            return False
    return True


def remove_stale(state_dir: Path) -> DaemonRecord | None:
    """The live daemon's record, or None after removing the leftovers of a dead one."""
    record = read_record(state_dir)
    if record is not None and pid_alive(record.pid) and _socket_answers(record.socket):
        return record
    # best effort: in a state directory that cannot be written the leftovers stay, and whoever
    # takes the directory next says so with a coded error
    if record is not None:
        with contextlib.suppress(OSError):
            os.unlink(record.socket)
    with contextlib.suppress(OSError):
        _record_path(state_dir).unlink()
    with contextlib.suppress(OSError):
        sock = socket_path(state_dir)
        if sock.exists() and not _socket_answers(str(sock)):
            sock.unlink()
    return None
