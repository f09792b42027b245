"""What ided skips, as globs for the language servers: so they do not analyse it either.

A language server analyses its whole workspace by default, including a 400,000-line generated file
ided's own index skips as too large; then every request on that server waits. The globs are the
scanner's built-in excluded directories (``node_modules``, ``.venv``, ``build``, ...), hidden
entries, the user's ``index.exclude`` patterns, what git ignores (``git ls-files --ignored``, in a
git work tree, when ``index.respect_gitignore``), every code file over ``index.max_file_bytes``, and
every code file whose name or content holds a credential (the index's own secret rules, unless
``index.include_secrets``), found by a walk that prunes the same directories (bounded). :mod:`daemon.intel.lsp.registry`
turns them into each server's own setting. Blocking: run it in a thread.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from daemon.core.languages import CODE_LANGUAGES, language_for_path
from daemon.core.regular_files import file_kind, read_regular
from daemon.core.secret_rules import secret_content, secret_name
from daemon.index.scanner import BUILTIN_EXCLUDED_DIRS

__all__ = ["server_exclusions"]

_MAX_WALKED = 100_000
_MAX_LARGE = 500
_GIT_TIMEOUT_SECONDS = 10.0


def server_exclusions(
    root: Path,
    *,
    max_file_bytes: int,
    extra: Sequence[str] = (),
    respect_gitignore: bool = True,
    include_secrets: bool = False,
) -> list[str]:
    """Workspace-relative globs (``**/node_modules``, ``gen/huge.py``) of what ided does not index."""
    globs = ["**/.*", *(f"**/{name}" for name in sorted(BUILTIN_EXCLUDED_DIRS) if not name.startswith("."))]
    globs.extend(pattern for pattern in extra if pattern)
    if respect_gitignore:
        globs.extend(_git_ignored(root))
    large: list[str] = []
    walked = 0
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in BUILTIN_EXCLUDED_DIRS and not d.startswith("."))
        for name in files:
            walked += 1
            if language_for_path(name) not in CODE_LANGUAGES:
                continue
            path = Path(directory, name)
            try:
                st = os.stat(path)
                if (
                    file_kind(st.st_mode) is not None  # a FIFO, socket or device: the index never opens it either
                    or st.st_nlink > 1  # a hard link: the index treats it as a link out
                    or st.st_size > max_file_bytes
                    or (not include_secrets and _holds_secret(path, max_file_bytes))
                ):
                    large.append(path.relative_to(root).as_posix())
            except OSError:
                continue
        if walked > _MAX_WALKED or len(large) >= _MAX_LARGE:
            break
    return [*globs, *sorted(large)]


def _holds_secret(path: Path, max_bytes: int) -> bool:
    """The index skips this file as secret (by name, or by content: read once, under the size cap)."""
    return secret_name(path.name) or secret_content(read_regular(path, max_bytes)) is not None


def _git_ignored(root: Path) -> list[str]:
    """What git ignores in a repository (directories once, as ``dir``); nothing outside a git work tree."""
    if not (root / ".git").exists():
        return []
    try:
        done = subprocess.run(
            ["git", "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z"],
            cwd=root,
            capture_output=True,
            timeout=_GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if done.returncode != 0:
        return []
    entries = [e.rstrip("/") for e in done.stdout.decode("utf-8", "replace").split("\0") if e]
    ignored = [
        e for e in entries if not any(part in BUILTIN_EXCLUDED_DIRS or part.startswith(".") for part in e.split("/"))
    ]
    return sorted(ignored)[:_MAX_LARGE]
