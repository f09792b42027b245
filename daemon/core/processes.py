"""Whether a process lives, asked of the operating system (a signal 0, which delivers nothing).

:func:`pid_alive` answers for this machine: a process that exists but belongs to another user
counts as alive. :func:`process_alive` adds the rule for records that name a host: a process on
another host cannot be checked from here and counts as alive.
"""

from __future__ import annotations

import os
import socket

__all__ = ["host_name", "pid_alive", "process_alive"]


def host_name() -> str:
    """This machine's name, as records' ``host`` carries it."""
    return socket.gethostname()


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` names a live process on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_alive(pid: int | None, host: str | None = None) -> bool:
    """Whether ``pid`` names a live process; a process on another ``host`` cannot be checked from here
    and counts as alive (a shared run store holds runs that other machines execute)."""
    if pid is None or pid <= 0:
        return False
    if host is not None and host != host_name():
        return True
    return pid_alive(pid)
