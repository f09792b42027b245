"""Whether this process uses the workspace daemon or works here: the one place that asks.

``daemon_running(config)``: whether a daemon serves the workspace now (one that is starting is waited for).
"""

from __future__ import annotations

import os
import time

from daemon.config import Config
from daemon.core.processes import pid_alive
from daemon.index.workspace_lock import DAEMON_HOLDER, lock_owner
from daemon.service.wire.files import remove_stale

__all__ = ["daemon_running"]


def daemon_running(config: Config) -> bool:
    """Whether a daemon serves the workspace; one that is starting (it holds the index, its socket is not
    up yet) is waited for, up to ``daemon.start_timeout_seconds``, so a command goes through it."""
    if remove_stale(config.state_path) is not None:
        return True
    owner = lock_owner(config.state_path)
    if owner is None or owner[1] != DAEMON_HOLDER or owner[0] is None or owner[0] == os.getpid():
        return False
    pid = owner[0]
    deadline = time.monotonic() + config.daemon.start_timeout_seconds
    while pid_alive(pid) and time.monotonic() < deadline:
        if remove_stale(config.state_path) is not None:
            return True
        time.sleep(_STARTING_POLL_S)
    return remove_stale(config.state_path) is not None


_STARTING_POLL_S = 0.05
