"""Whether a process lives, asked of the real operating system."""

from __future__ import annotations

import os
import subprocess
import sys

from daemon.core.processes import host_name, pid_alive, process_alive


def test_a_running_process_is_alive_and_a_reaped_one_is_not() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        assert pid_alive(child.pid)
        assert process_alive(child.pid, host_name())
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait()
    assert not pid_alive(child.pid)
    assert not process_alive(child.pid)


def test_no_pid_is_not_alive_and_another_host_cannot_be_checked() -> None:
    assert not process_alive(None)
    assert not process_alive(0)
    assert process_alive(os.getpid())
    assert process_alive(2**22 + 12345, "another-host-" + host_name())
