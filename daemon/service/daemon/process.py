"""The daemon as a process, for the command line: run it (foreground or detached), stop it, and the
daemon-aware paths of ``ided index``, ``search`` and ``status`` (through it when it runs)."""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import logging
import os
import signal
import sys

from daemon.config import Config
from daemon.core.models import IndexReport, IndexStatus
from daemon.errors import DaemonError
from daemon.index.state_files import check_free_space, ensure_state_dir, state_writes
from daemon.logging_setup import configure_logging
from daemon.service.wire.api import Methods, ReindexParams
from daemon.service.wire.client import DaemonClient, DaemonUnavailable
from daemon.service.wire.daemon_or_here import daemon_running

__all__ = [
    "remote_reindex",
    "run_daemon",
    "run_daemon_detached",
    "stop_daemon",
]


def run_daemon(config: Config) -> None:
    """Serve in the foreground until SIGTERM/SIGINT, ``ided stop`` or the idle timeout."""
    from daemon.service.daemon.server import DaemonServer  # the server's imports only where it runs

    asyncio.run(DaemonServer(config).serve())


def run_daemon_detached(config: Config) -> tuple[int, str]:
    """Fork a daemon into its own session and return once it listens: (exit code, message).

    The child reports readiness (or its start-up error) through a pipe, so the caller never
    guesses; its stdout/stderr go to ``daemon.log`` in the state directory, which also gets every
    start-up error and, should the process die of a fatal signal (SIGBUS on a full disk), Python's
    fault report. A state directory that cannot be written fails here, before the fork, with a
    coded error (``state_unwritable``, ``disk_full``).
    """
    ensure_state_dir(config.state_path)
    check_free_space(config.state_path, config.index.min_free_disk_mb * 2**20)
    log_path = config.state_path / "daemon.log"
    with state_writes("open the daemon log", log_path):
        log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the daemon
        os.close(read_fd)
        os.setsid()
        null_fd = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null_fd, 0)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        faulthandler.enable(file=sys.stderr)
        configure_logging(config.logging)

        def ready() -> None:
            os.write(write_fd, f"ok {os.getpid()}".encode())
            os.close(write_fd)

        code = 0
        try:
            from daemon.service.daemon.server import DaemonServer

            asyncio.run(DaemonServer(config, on_ready=ready).serve())
        except DaemonError as exc:
            logging.getLogger(__name__).error("the daemon could not start [%s]: %s", exc.code.value, exc)
            with contextlib.suppress(OSError):
                os.write(write_fd, f"error: {exc}".encode())
            code = 1
        except BaseException:
            logging.getLogger(__name__).exception("daemon crashed")
            code = 2
        os._exit(code)
    os.close(write_fd)
    os.close(log_fd)
    chunks: list[bytes] = []
    while data := os.read(read_fd, 4096):
        chunks.append(data)
    os.close(read_fd)
    message = b"".join(chunks).decode(errors="replace")
    if message.startswith("ok "):
        return 0, f"daemon pid {message[3:]} serves {config.workspace}"
    if message:
        os.waitpid(pid, os.WNOHANG)
        return 1, message.removeprefix("error: ")
    _, status = os.waitpid(pid, 0)  # the pipe closed without a word: the child is gone
    if os.WIFSIGNALED(status):
        sig = signal.Signals(os.WTERMSIG(status))
        why = " (the disk holding the state directory may be full)" if sig is signal.SIGBUS else ""
        return 1, f"the daemon was killed by {sig.name} while starting{why}; see {log_path}"
    return 1, f"the daemon exited with status {os.waitstatus_to_exitcode(status)} while starting; see {log_path}"


def remote_reindex(config: Config) -> tuple[IndexReport, IndexStatus]:
    async def go() -> tuple[IndexReport, IndexStatus]:
        client = await DaemonClient.attach(config, client="cli", start=False)
        async with client:
            report = IndexReport.model_validate(
                await client.call(Methods.INDEX_REINDEX, ReindexParams(paths=None), wait_s=3600)
            )
            status = IndexStatus.model_validate(await client.call(Methods.INDEX_STATUS, None))
            return report, status

    return asyncio.run(go())


def stop_daemon(config: Config) -> int | None:
    """Ask the workspace's daemon to stop; returns its pid, or None when none was running."""

    async def go() -> int:
        client = await DaemonClient.attach(config, client="cli", start=False)
        async with client:
            await client.call(Methods.SHUTDOWN, None, wait_s=10)
            return client.daemon_pid

    if not daemon_running(config):  # one that is starting is waited for
        return None
    try:
        return asyncio.run(go())
    except DaemonUnavailable:
        return None
    except (ConnectionError, DaemonError):
        return None
