"""The files an agent may read and write: one root (the run's worktree, or the workspace in ask mode).

Every path an agent names is workspace-relative and must stay inside the root after resolving
symlinks (the shared boundary check, :func:`daemon.intel.workspace_paths.contained`); ``.git`` is
never readable or writable, and a file that holds credentials (by name or content, judged on the
resolved target: :func:`daemon.intel.workspace_paths.secret_reason`) is never read. Only regular
files are read or written (a FIFO, socket or device is refused, never opened), and a hard link is
refused like a link out (its contents have another name, maybe outside). Writes are
refused in read-only runs. Reads of a file the run has not written go first to the host's
``FileReader`` (ACP's ``fs/read_text_file``, so agents see unsaved editor text), then to disk.
Blocking file I/O runs in worker threads.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
from pathlib import Path
from typing import Protocol

from daemon.core.models import SkipReason
from daemon.core.regular_files import NotRegularFile, boundary_problem, file_kind, read_regular, read_regular_text
from daemon.errors import InvalidToolInput, PathOutsideWorkspace, SecretRefused
from daemon.intel.workspace_paths import contained, secret_reason

__all__ = ["MAX_LIST_ENTRIES", "MAX_READ_CHARS", "FileReader", "RunFiles", "WriteRefused"]


MAX_READ_CHARS = 200_000
"""A read returns at most this many characters (the rest is cut with a note)."""

MAX_LIST_ENTRIES = 500
"""A listing returns at most this many entries."""

_SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache", ".ruff_cache"})


class FileReader(Protocol):
    """Reads a file of the user's workspace as the editor has it; ``None`` when it has nothing to say."""

    async def read_text(self, path: Path) -> str | None: ...


class WriteRefused(InvalidToolInput):
    """A write in a read-only run (ask mode, or a stage that does not edit)."""


class RunFiles:
    """Root-confined file access for one run's agents."""

    def __init__(
        self,
        root: Path,
        *,
        editable: bool,
        workspace: Path | None = None,
        reader: FileReader | None = None,
        written: set[str] | None = None,
    ) -> None:
        self.root = root.resolve()
        self.editable = editable
        self.workspace = (workspace or root).resolve()
        self._reader = reader
        self.written: set[str] = written if written is not None else set()

    def relative(self, path: str) -> str:
        """``path`` as a normalised root-relative POSIX path; ``PathOutsideWorkspace`` when it leaves the root."""
        raw = path.strip()
        if not raw:
            raise InvalidToolInput("a path is required (workspace-relative, e.g. src/app.py)")
        candidate = Path(raw)
        if candidate.is_absolute():
            for base in (self.root, self.workspace):
                if candidate.is_relative_to(base):
                    candidate = candidate.relative_to(base)
                    break
            else:
                raise PathOutsideWorkspace(f"{raw} is outside the workspace; give a workspace-relative path")
        resolved = contained(self.root, self.root / candidate)
        if resolved is None:
            raise PathOutsideWorkspace(f"{raw} leaves the workspace (through '..' or a symlink)")
        rel = resolved.relative_to(self.root).as_posix()
        if rel == ".git" or rel.startswith(".git/"):
            raise PathOutsideWorkspace(f"{raw}: the .git directory is not open to agents")
        return rel or "."

    def absolute(self, rel: str) -> Path:
        return self.root / rel

    # -- reading ----------------------------------------------------------------------------------

    async def read(self, path: str, *, start_line: int | None = None, end_line: int | None = None) -> str:
        rel = self.relative(path)
        if rel not in self.written:
            await asyncio.to_thread(self._refuse_secret, rel)
        text: str | None = None
        if self._reader is not None and rel not in self.written:
            text = await self._reader.read_text(self.workspace / rel)
        if text is None:
            text = await asyncio.to_thread(self._read_disk, rel)
        if start_line is not None or end_line is not None:
            lines = text.splitlines(keepends=True)
            first = max(1, start_line or 1)
            last = min(len(lines), end_line or len(lines))
            text = "".join(lines[first - 1 : last])
        if len(text) > MAX_READ_CHARS:
            text = text[:MAX_READ_CHARS] + f"\n[... cut at {MAX_READ_CHARS} characters; read a line range]"
        return text

    def _refuse_special(self, rel: str, target: Path) -> None:
        """``InvalidToolInput`` for a FIFO, socket or device; ``PathOutsideWorkspace`` for a hard link."""
        try:
            st = os.stat(target)
        except OSError:
            return
        kind = file_kind(st.st_mode)
        if kind is not None and kind != "directory":
            raise InvalidToolInput(f"{rel} is a {kind}, not a file; it is never opened")
        if kind is None and boundary_problem(st, None) is SkipReason.HARD_LINK:
            raise PathOutsideWorkspace(
                f"{rel} is a hard link (its contents have another name, which may lie outside the workspace); "
                "it is not open to agents"
            )

    def _refuse_secret(self, rel: str) -> None:
        target = self.absolute(rel)
        self._refuse_special(rel, target)
        reason = secret_reason(target) if target.is_file() else None
        if reason is not None:
            raise SecretRefused(f"{rel} is not open to agents: {reason}")

    def _read_disk(self, rel: str) -> str:
        target = self.absolute(rel)
        if target.is_dir():
            raise InvalidToolInput(f"{rel} is a directory; use list_files")
        try:
            data = read_regular(target)
        except NotRegularFile as exc:
            raise InvalidToolInput(f"{rel} is a {exc.kind}, not a file; it is never opened") from None
        except FileNotFoundError:
            raise InvalidToolInput(f"{rel} does not exist") from None
        except OSError as exc:
            raise InvalidToolInput(f"{rel} cannot be read", cause=exc) from exc
        if b"\0" in data[:8192]:
            raise InvalidToolInput(f"{rel} is a binary file")
        return data.decode("utf-8", errors="replace")

    async def list(self, path: str = ".", *, pattern: str | None = None, recursive: bool = False) -> list[str]:
        rel = self.relative(path)
        return await asyncio.to_thread(self._list, rel, pattern, recursive)

    def _list(self, rel: str, pattern: str | None, recursive: bool) -> list[str]:
        base = self.absolute(rel) if rel != "." else self.root
        if not base.is_dir():
            raise InvalidToolInput(f"{rel} is not a directory")
        out: list[str] = []
        for current, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
            here = Path(current)
            names = [f"{d}/" for d in dirs] + sorted(files)
            for name in names:
                entry = (here / name.rstrip("/")).relative_to(self.root).as_posix() + (
                    "/" if name.endswith("/") else ""
                )
                if pattern is None or fnmatch.fnmatch(entry.rstrip("/"), pattern) or fnmatch.fnmatch(name, pattern):
                    out.append(entry)
                if len(out) >= MAX_LIST_ENTRIES:
                    out.append(f"[... more than {MAX_LIST_ENTRIES} entries; narrow the path or pattern]")
                    return out
            if not recursive:
                break
        return out

    # -- writing ----------------------------------------------------------------------------------

    def _check_editable(self, rel: str) -> None:
        if not self.editable:
            raise WriteRefused(f"cannot write {rel}: this run is read-only (ask mode or a stage that does not edit)")

    async def write(self, path: str, content: str) -> str:
        rel = self.relative(path)
        self._check_editable(rel)
        existed = await asyncio.to_thread(self._write, rel, content)
        self.written.add(rel)
        lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        return f"{'overwrote' if existed else 'created'} {rel} ({lines} lines)"

    def _write(self, rel: str, content: str) -> bool:
        target = self.absolute(rel)
        if target.is_dir():
            raise InvalidToolInput(f"{rel} is a directory")
        self._refuse_special(rel, target)
        existed = target.exists()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return existed

    async def replace(self, path: str, old: str, new: str, *, replace_all: bool = False) -> str:
        rel = self.relative(path)
        self._check_editable(rel)
        if not old:
            raise InvalidToolInput("old_text is empty: give the exact text to replace")
        text = await self.read(rel) if rel not in self.written else await asyncio.to_thread(self._read_disk, rel)
        count = text.count(old)
        if count == 0:
            raise InvalidToolInput(f"{rel}: old_text was not found (it must match exactly, whitespace included)")
        if count > 1 and not replace_all:
            raise InvalidToolInput(f"{rel}: old_text occurs {count} times; give more context or set replace_all")
        updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        await asyncio.to_thread(self._write, rel, updated)
        self.written.add(rel)
        return f"replaced {count if replace_all else 1} occurrence(s) in {rel}"

    def first_line_of(self, rel: str, snippet: str) -> int | None:
        """The 1-based line where ``snippet`` starts in the file on disk (for tool-call locations)."""
        try:
            text = read_regular_text(self.absolute(rel))
        except OSError:
            return None
        at = text.find(snippet)
        return None if at < 0 else text.count("\n", 0, at) + 1
