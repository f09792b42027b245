"""Named commands agents may run (``[agents.commands]``): tests, linters, type checkers.

Only the configured command lines run, split like a shell would (``shlex``) but never through a
shell; an agent may append arguments. The working directory is the run's worktree (the only one),
stdin is closed, stdout and stderr are merged, the output kept is capped (the head and the tail, the
middle is cut with a note) and the process group is killed at the timeout or when the agent is
cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from daemon.errors import InvalidToolInput

__all__ = ["CommandResult", "CommandRunner"]


_KILL_WAIT_S = 5.0
_READ_SIZE = 65536


@dataclass(frozen=True, kw_only=True)
class CommandResult:
    """One command run."""

    name: str
    argv: tuple[str, ...]
    exit_code: int | None
    output: str
    truncated: bool
    timed_out: bool
    seconds: float

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def report(self) -> str:
        """What the agent (and the tool-call update) sees."""
        if self.timed_out:
            head = f"command '{self.name}' timed out after {self.seconds:.1f}s and was killed"
        else:
            head = f"command '{self.name}' exited with code {self.exit_code} in {self.seconds:.1f}s"
        return f"$ {shlex.join(self.argv)}\n{head}\n{self.output}".rstrip() + "\n"

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.output.rstrip().splitlines()[-lines:])


class _CappedOutput:
    """Keeps the first quarter and the last three quarters of ``cap`` bytes."""

    def __init__(self, cap: int) -> None:
        self._head_cap = cap // 4
        self._tail_cap = cap - self._head_cap
        self._head = bytearray()
        self._tail = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        self._tail += data
        if len(self._tail) > self._tail_cap:
            cut = len(self._tail) - self._tail_cap
            self.dropped += cut
            del self._tail[:cut]

    def text(self) -> str:
        middle = f"\n[... {self.dropped} bytes of output cut ...]\n".encode() if self.dropped else b""
        return bytes(self._head + middle + self._tail).decode("utf-8", errors="replace")


class CommandRunner:
    """Runs the configured commands in one directory."""

    def __init__(
        self, commands: Mapping[str, str], *, cwd: Path, timeout_seconds: float, output_cap_bytes: int
    ) -> None:
        self.commands = dict(commands)
        self.cwd = cwd
        self.timeout_seconds = timeout_seconds
        self.output_cap_bytes = output_cap_bytes

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self.commands))

    def argv(self, name: str, args: Sequence[str] = ()) -> list[str]:
        line = self.commands.get(name)
        if line is None:
            known = ", ".join(self.names) or "none (configure [agents.commands])"
            raise InvalidToolInput(f"no command named '{name}'; configured: {known}")
        argv = shlex.split(line)
        if not argv:
            raise InvalidToolInput(f"agents.commands.{name} is empty")
        return [*argv, *args]

    async def run(self, name: str, args: Sequence[str] = ()) -> CommandResult:
        argv = self.argv(name, args)
        started = time.perf_counter()
        output = _CappedOutput(self.output_cap_bytes)
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                cwd=self.cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            return CommandResult(
                name=name,
                argv=tuple(argv),
                exit_code=None,
                output=f"cannot start {argv[0]}: {exc.strerror or exc}",
                truncated=False,
                timed_out=False,
                seconds=time.perf_counter() - started,
            )
        timed_out = False
        try:
            async with asyncio.timeout(self.timeout_seconds):
                assert process.stdout is not None
                while chunk := await process.stdout.read(_READ_SIZE):
                    output.add(chunk)
                await process.wait()
        except TimeoutError:
            timed_out = True
            await _kill(process)
        except asyncio.CancelledError:
            await _kill(process)
            raise
        return CommandResult(
            name=name,
            argv=tuple(argv),
            exit_code=process.returncode,
            output=output.text(),
            truncated=output.dropped > 0,
            timed_out=timed_out,
            seconds=time.perf_counter() - started,
        )


async def _kill(process: asyncio.subprocess.Process) -> None:
    """SIGKILL the command's process group and reap it (bounded)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError, ProcessLookupError):
        await asyncio.wait_for(process.wait(), _KILL_WAIT_S)
