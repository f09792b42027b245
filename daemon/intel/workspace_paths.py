"""The workspace boundary: the one path check that the scanner, the watcher and every front use.

``contained(root, path)``: the real path (every symlink resolved) when it lies inside ``root``,
else None. ``locate(root, path)``: the same for an existing file, with the reason a scan counts
when it does not qualify (``symlink_outside``, ``symlink_loop``, ``vanished``).
``secret_reason(path, real)``: why a file holds credentials, judged on the link's name, the
resolved target's name and the target's content (:mod:`daemon.core.secret_rules`).

``WorkspacePaths.resolve`` turns a path a user (or an agent) gave into a file inside the
workspace, or refuses it. Accepted: a workspace-relative path (``src/app.py``, ``./src/app.py``)
or an absolute path that lies inside the workspace. Refused with ``PathOutsideWorkspace``: ``..``
that climbs out, an absolute path elsewhere, and a symlink (anywhere on the way) whose target lies
outside, a hard link and a file on another file system than the root (their contents may live
outside: ``daemon.core.regular_files.boundary_problem``); with ``InvalidToolInput``: a FIFO, socket or
device (never opened); with ``SecretRefused``: a file that holds credentials. The check is made on
the fully resolved path, so ``src/../../etc/passwd`` and a link to ``/etc`` are both caught.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from daemon.core.models import SkipReason
from daemon.core.regular_files import boundary_problem, file_kind, read_regular
from daemon.core.secret_rules import secret_content, secret_name
from daemon.errors import InvalidToolInput, PathOutsideWorkspace, SecretRefused

__all__ = ["PATH_MAX", "SECRET_SNIFF_BYTES", "ResolvedPath", "WorkspacePaths", "contained", "locate", "secret_reason"]


PATH_MAX = 4096
"""The longest path Linux accepts (``PATH_MAX``); a longer one is refused before it touches the disk."""

SECRET_SNIFF_BYTES = 5_000_000
"""How much of a file the content check reads (the fronts' and the index's size caps are below it)."""


def contained(root: Path, path: Path) -> Path | None:
    """``path`` with every symlink resolved when it lies inside ``root`` (already resolved), else None.

    ``path`` need not exist; a symlink loop or an unresolvable path counts as outside.
    """
    try:
        real = path.resolve(strict=False)
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop on older Pythons
        return None
    return real if real.is_relative_to(root) else None


def locate(root: Path, path: Path) -> Path | SkipReason:
    """The existing file or folder ``path`` stands for, resolved, when it lies inside ``root``; else why not."""
    try:
        real = path.resolve(strict=True)
    except RuntimeError:  # symlink loop (Python < 3.13)
        return SkipReason.SYMLINK_LOOP
    except OSError as exc:
        return SkipReason.SYMLINK_LOOP if exc.errno == errno.ELOOP else SkipReason.VANISHED
    if not real.is_relative_to(root):
        return SkipReason.SYMLINK_OUTSIDE
    return real


def secret_reason(path: Path, real: Path | None = None, *, data: bytes | None = None) -> str | None:
    """Why the file at ``path`` (resolved: ``real``) holds credentials, or None.

    Judged on the name of ``path`` (the link, when it is one), the name of ``real`` and the content
    of ``real`` (``data`` when the caller has read it; otherwise the first ``SECRET_SNIFF_BYTES``
    are read here; an unreadable file has no content to judge).
    """
    target = real or path
    for name in (path.name, target.name):
        if secret_name(name):
            return f"its name {name!r} is one that holds credentials"
    if data is None:
        try:
            data = read_regular(target, SECRET_SNIFF_BYTES)
        except OSError:  # unreadable, or not a regular file (never opened): no content to judge
            return None
    rule = secret_content(data)
    return None if rule is None else f"its content holds a credential ({rule})"


_BOUNDARY_WHY = {
    SkipReason.HARD_LINK: "it is a hard link (its contents have another name, which may lie outside the workspace)",
    SkipReason.OTHER_FILESYSTEM: "it lies on another file system than the workspace (a mount inside it)",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedPath:
    """A file inside the workspace: its absolute real path and its workspace-relative POSIX path."""

    absolute: Path
    relative: str


class WorkspacePaths:
    """Path arithmetic for one workspace root (resolved once, symlinks included)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._device = os.stat(self.root).st_dev

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
        if len(text) > PATH_MAX:
            raise InvalidToolInput(f"path of {len(text):,} characters is longer than any path can be")
        real = contained(self.root, candidate)
        if real is None:
            raise PathOutsideWorkspace(
                f"path {user_path!r} resolves outside the workspace {self.root} (through '..', an absolute path "
                "or a symlink); only files inside the workspace can be read"
            )
        try:
            st: os.stat_result | None = os.stat(real)
        except OSError:
            st = None
        if must_exist:
            if st is None:
                raise InvalidToolInput(f"file {self.relative(real)!r} does not exist in the workspace")
            kind = file_kind(st.st_mode)
            if kind is not None:
                raise InvalidToolInput(f"{self.relative(real)!r} is a {kind}, not a file")
        if st is not None and file_kind(st.st_mode) is None:
            problem = boundary_problem(st, self._device)
            if problem is not None:
                raise PathOutsideWorkspace(f"{self.relative(real)!r} is not served: {_BOUNDARY_WHY[problem]}")
        reason = secret_reason(candidate, real) if st is not None and file_kind(st.st_mode) is None else None
        if reason is None and not must_exist and secret_name(real.name):
            reason = f"its name {real.name!r} is one that holds credentials"
        if reason is not None:
            raise SecretRefused(f"{self.relative(real)!r} is not served: {reason}")
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
