"""One way to call the real git binary (through gitpython): a timeout on every call, git's own answer in errors.

Commands are argument lists (never shell strings). A failing command becomes ``VcsError`` naming the
command and what git printed; callers that expect a non-zero exit (``diff --quiet``) use ``ok``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from git import Git
from git.exc import GitCommandError, GitCommandNotFound

from daemon.errors import VcsError

__all__ = ["DEFAULT_TIMEOUT_S", "IDED_IDENTITY", "GitRunner", "temp_index_env"]


DEFAULT_TIMEOUT_S = 120.0
"""Upper bound of one git call (a worktree checkout of a large repository is the slowest)."""

IDED_IDENTITY: Mapping[str, str] = {
    "GIT_AUTHOR_NAME": "ided",
    "GIT_AUTHOR_EMAIL": "ided@localhost",
    "GIT_COMMITTER_NAME": "ided",
    "GIT_COMMITTER_EMAIL": "ided@localhost",
}
"""Who authors a run's commits (the agents are named in the message)."""

_QUIET_ENV: Mapping[str, str] = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}


class GitRunner:
    """git in one working directory; every call bounded by ``timeout_s``."""

    def __init__(self, cwd: Path, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.cwd = cwd
        self.timeout_s = timeout_s
        self._git = Git(str(cwd))

    def run(
        self,
        *args: str,
        env: Mapping[str, str] | None = None,
        stdin: bytes | None = None,
        strip: bool = True,
    ) -> str:
        """``git <args>``'s stdout; ``VcsError`` when git fails or runs past the timeout."""
        command = ["git", *args]
        full_env = {**_QUIET_ENV, **(env or {})}
        try:
            if stdin is None:
                out = self._git.execute(
                    command,
                    env=full_env,
                    kill_after_timeout=self.timeout_s,
                    strip_newline_in_stdout=strip,
                )
            else:
                with tempfile.TemporaryFile() as fh:
                    fh.write(stdin)
                    fh.seek(0)
                    out = self._git.execute(
                        command,
                        istream=fh,
                        env=full_env,
                        kill_after_timeout=self.timeout_s,
                        strip_newline_in_stdout=strip,
                    )
        except GitCommandNotFound as exc:
            raise VcsError("the git executable was not found on PATH; editing runs need git", cause=exc) from exc
        except GitCommandError as exc:
            detail = _stderr(exc)
            raise VcsError(f"`{_show(args)}` failed in {self.cwd}: {detail}") from exc
        if isinstance(out, bytes):
            return out.decode("utf-8", errors="replace")
        return out or ""

    def ok(self, *args: str, env: Mapping[str, str] | None = None) -> bool:
        """Whether ``git <args>`` exits 0 (for ``diff --quiet``, ``rev-parse --verify``, ...)."""
        try:
            self._git.execute(["git", *args], env={**_QUIET_ENV, **(env or {})}, kill_after_timeout=self.timeout_s)
        except GitCommandError:
            return False
        except GitCommandNotFound as exc:
            raise VcsError("the git executable was not found on PATH; editing runs need git", cause=exc) from exc
        return True

    def lines(self, *args: str, env: Mapping[str, str] | None = None) -> list[str]:
        return [line for line in self.run(*args, env=env).splitlines() if line]

    def zsplit(self, *args: str, env: Mapping[str, str] | None = None) -> list[str]:
        """Output of a ``-z`` command split on NUL (empty fields dropped)."""
        return [part for part in self.run(*args, env=env, strip=False).split("\0") if part]


def temp_index_env(index_file: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment that points git at a private index file (the user's index is never touched)."""
    return {**(base or {}), "GIT_INDEX_FILE": os.fspath(index_file)}


def _stderr(exc: GitCommandError) -> str:
    text = str(exc.stderr).strip().removeprefix("stderr:").strip().strip("'").strip()
    return text or f"exit status {exc.status}"


def _show(args: Sequence[str]) -> str:
    shown = " ".join(args if len(args) <= 8 else [*args[:8], "..."])
    return f"git {shown}"
