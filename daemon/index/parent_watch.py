"""A helper process dies with the process it works for, whatever kills that one.

``exit_with(pid)`` is called first thing in a worker (the pool's initializer). It:

* asks the kernel (Linux ``prctl(PR_SET_PDEATHSIG, SIGKILL)``) to kill this process when its
  direct parent dies. For a forkserver worker the parent is the forkserver, not the daemon, so
  this alone is not enough;
* starts a daemon thread that waits for ``pid`` (the daemon) to exit and then ends this process
  with ``os._exit``: it blocks on a pidfd (readable once the process is gone; Linux 5.3+), or
  where pidfds are missing polls once a second whether ``pid`` still lives.

Once the workers are gone, the rest of multiprocessing's helpers follow by themselves: the
forkserver stops when the last holder of its "alive" pipe (the daemon and every worker) is gone,
and the resource tracker when the last holder of its pipe (the same processes plus the
forkserver) is. So a SIGKILLed daemon leaves no process behind (``tests/adversarial/test_processes.py``).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import os
import select
import signal
import sys
import threading
import time

from daemon.core.processes import pid_alive

__all__ = ["exit_with"]

logger = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1
_POLL_INTERVAL_S = 1.0
"""Only where pidfds are missing (pre-5.3 kernels, other systems): how often the watch checks the pid."""


def exit_with(pid: int) -> None:
    """End this process when ``pid`` exits (at once if it is already gone); see the module doc."""
    _kill_me_with_my_parent()
    try:
        fd: int | None = os.pidfd_open(pid)
    except ProcessLookupError:
        os._exit(1)
    except (AttributeError, OSError):
        fd = None
    threading.Thread(target=_wait_then_exit, args=(pid, fd), name="ided-parent-watch", daemon=True).start()


def _kill_me_with_my_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            logger.debug("prctl(PR_SET_PDEATHSIG) failed: errno %d", ctypes.get_errno())
    if os.getppid() == 1:  # the parent died before the prctl took effect
        os._exit(1)


def _wait_then_exit(pid: int, fd: int | None) -> None:
    if fd is not None:
        select.select([fd], [], [])
    else:
        while pid_alive(pid):
            time.sleep(_POLL_INTERVAL_S)
    os._exit(1)
