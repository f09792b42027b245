"""Whether this process uses the workspace daemon or works here: the one place that decides, for the
workspace (search, code intelligence, status) and for the runs alike.

Every front says what it wants in one vocabulary, ``DaemonUse``:

- ``"start"``: the daemon's, starting one when none runs (the LSP front, ``ided mcp --attach``, ACP with
  ``acp.attach_daemon``, ``ided run``);
- ``"running"``: the daemon's when one serves the workspace (one that is starting is waited for, up to
  ``daemon.start_timeout_seconds``), else this process (``ided index``, ``search``, ``status``, a run's
  workspace, the runs of an editor front already attached);
- ``"never"``: this process (``ided mcp --standalone``, ``acp.attach_daemon = false``, ``ided run
  --no-daemon``).

``daemon_or_here(config, daemon=...)`` answers a ``DaemonChoice``: use the daemon (and whether this process
may start it), or work here and why. It only decides: the transports attach or open themselves
(``daemon.service.workspace.choice.workspace_for``, ``daemon.service.runs.opening.open_run_service``). It may
wait for a starting daemon, so async callers run it in a thread. ``daemon_running(config)`` is the question
it asks.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Literal

from daemon.config import Config
from daemon.core.processes import pid_alive
from daemon.index.workspace_lock import DAEMON_HOLDER, lock_owner
from daemon.service.wire.files import remove_stale

__all__ = ["DaemonChoice", "DaemonUse", "daemon_or_here", "daemon_running", "use_daemon"]

DaemonUse = Literal["start", "running", "never"]
"""What a front wants (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class DaemonChoice:
    """The answer: the daemon's (``start``: this process may start it), or this process and ``why``;
    ``wanted``: the front asked for the daemon (``start`` or ``running``), so working here is worth saying."""

    daemon: bool
    start: bool = False
    why: str = ""
    wanted: bool = True


def use_daemon(attach: bool) -> DaemonUse:
    """A front's on/off setting for the daemon (``--attach``/``--standalone``, ``acp.attach_daemon``)."""
    return "start" if attach else "never"


def daemon_or_here(config: Config, *, daemon: DaemonUse) -> DaemonChoice:
    """Where ``config``'s workspace is served for a front that wants ``daemon`` (see the module docstring)."""
    if daemon == "never":
        return DaemonChoice(daemon=False, why="this front was told not to use the workspace daemon", wanted=False)
    if daemon == "start":
        return DaemonChoice(daemon=True, start=True)
    if daemon_running(config):
        return DaemonChoice(daemon=True)
    return DaemonChoice(daemon=False, why=f"no daemon serves {config.workspace}")


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
