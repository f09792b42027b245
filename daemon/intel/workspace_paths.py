"""Resolve a path a user (or an agent) gave into a file inside the workspace, or refuse it.

Accepted: a workspace-relative path (``src/app.py``, ``./src/app.py``) or an absolute path that
lies inside the workspace. Refused with ``PathOutsideWorkspace``: ``..`` that climbs out, an
absolute path elsewhere, and a symlink (anywhere on the way) whose target lies outside. The
check is made on the fully resolved path, so ``src/../../etc/passwd`` and a link to ``/etc``
are both caught.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from daemon.errors import InvalidToolInput, PathOutsideWorkspace

__all__ = ["ResolvedPath", "WorkspacePaths"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedPath:
    """A file inside the workspace: its absolute real path and its workspace-relative POSIX path."""

    absolute: Path
    relative: str


class WorkspacePaths:
    """Path arithmetic for one workspace root (resolved once, symlinks included)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def resolve(self, user_path: str, *, must_exist: bool = True) -> ResolvedPath:
        """``user_path`` as a file inside the workspace; raises ``PathOutsideWorkspace`` / ``InvalidToolInput``."""
        text = user_path.strip()
        if not text:
            raise InvalidToolInput("empty path: give a workspace-relative file path such as 'src/app.py'")
        if "\x00" in text:
            raise InvalidToolInput(f"path {user_path!r} contains a NUL byte")
        candidate = Path(os.path.expanduser(text)) if text.startswith("~") else Path(text)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        try:
            real = candidate.resolve(strict=False)
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on older Pythons
            raise InvalidToolInput(f"path {user_path!r} cannot be resolved", cause=exc) from exc
        if not real.is_relative_to(self.root):
            raise PathOutsideWorkspace(
                f"path {user_path!r} resolves to {real}, outside the workspace {self.root}; "
                "only files inside the workspace can be read"
            )
        if must_exist:
            if not real.exists():
                raise InvalidToolInput(f"file {self.relative(real)!r} does not exist in the workspace")
            if not real.is_file():
                raise InvalidToolInput(f"{self.relative(real)!r} is a directory, not a file")
        return ResolvedPath(absolute=real, relative=self.relative(real))

    def relative(self, absolute: Path) -> str:
        """Workspace-relative POSIX path of an absolute path inside the workspace (``.`` for the root)."""
        rel = absolute.relative_to(self.root)
        return PurePosixPath(*rel.parts).as_posix() if rel.parts else "."

    def display(self, absolute: Path) -> tuple[str, bool]:
        """(path to show, inside the workspace?): relative inside, absolute outside (stdlib, node_modules types)."""
        try:
            real = absolute.resolve(strict=False)
        except OSError:
            real = absolute
        if real.is_relative_to(self.root):
            return self.relative(real), True
        return absolute.as_posix(), False
