"""Which folders ACP and MCP may open as a workspace: the user's allowed roots, never system folders.

``check_folder(path)`` is the cheap part, made before anything heavy loads: the path is absolute,
not longer than the system allows, exists and is a folder, and is no system folder (``/``,
``/etc``, ``/proc``...). ``admit_workspace(config, launch_dir=...)`` then checks the loaded
configuration's ``roots.allowed`` (default: under the user's home folder, under the folder ided was
started in, or the project folder that holds it; a folder named on the command line, ``ided mcp -w
DIR``, needs only the first check unless ``roots.allowed`` is set, as for ``ided run -w DIR``). Both
raise ``WorkspaceRefused`` (code ``workspace_refused``) with the fix in the message. ``roots`` comes
from the user's layers only: :func:`daemon.config.load_config` refuses it in a workspace's
``.ided.toml``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from daemon.errors import WorkspaceRefused

if TYPE_CHECKING:
    from daemon.config import Config

__all__ = ["NEVER_BELOW", "NEVER_EXACTLY", "admit_workspace", "allowed_roots", "check_folder", "find_workspace_root"]


def find_workspace_root(start: Path) -> Path:
    """The nearest ancestor of ``start`` holding ``.ided.toml`` or ``.git``; else ``start`` itself."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".ided.toml").is_file() or (candidate / ".git").exists():
            return candidate
    return start


PATH_MAX = 4096
NAME_MAX = 255

NEVER_BELOW: tuple[str, ...] = ("/etc", "/proc", "/sys", "/dev", "/boot", "/run")
"""Never a workspace, nor anything under them."""

NEVER_EXACTLY: tuple[str, ...] = (
    "/", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/usr", "/usr/bin", "/usr/lib", "/usr/local", "/var",
    "/var/lib", "/opt", "/srv", "/home", "/mnt", "/media", "/tmp", "/var/tmp", "/snap", "/root", "/Users",
    "/System", "/Library", "/private", "/private/etc", "/private/var",
)  # fmt: skip
"""Never a workspace themselves (a folder under them may be, when the user allows it)."""

_FIX = "add the folder (or one above it) to roots.allowed in your own config (~/.config/ided/config.toml)"


def check_folder(path: str | Path) -> Path:
    """``path`` resolved, when it can be a workspace at all; ``WorkspaceRefused`` at once otherwise."""
    text = str(path)
    if len(text) > PATH_MAX or any(len(part) > NAME_MAX for part in text.split("/")):
        raise WorkspaceRefused(
            f"workspace path of {len(text):,} characters is longer than the system allows "
            f"({PATH_MAX} in all, {NAME_MAX} per name)"
        )
    if "\x00" in text:
        raise WorkspaceRefused("workspace path contains a NUL byte")
    folder = Path(text)
    if not folder.is_absolute():
        raise WorkspaceRefused(f"workspace must be an absolute path, got {text!r}")
    try:
        real = folder.resolve(strict=True)
        is_dir = real.is_dir()
    except (OSError, RuntimeError) as exc:
        raise WorkspaceRefused(f"workspace {text} does not exist", cause=exc) from None
    if not is_dir:
        raise WorkspaceRefused(f"workspace {text} is not a folder")
    for system in NEVER_BELOW:
        if real.is_relative_to(system):
            raise WorkspaceRefused(f"workspace {real} is a system folder ({system}); ided never opens one")
    if str(real) in NEVER_EXACTLY:
        raise WorkspaceRefused(f"workspace {real} is a system folder; open a project folder under it instead")
    return real


def allowed_roots(config: Config, *, launch_dir: Path) -> list[Path]:
    """``roots.allowed`` resolved (``~`` expanded); by default the home folder and ``launch_dir``."""
    if config.roots.allowed:
        return [Path(os.path.expanduser(entry)).resolve() for entry in config.roots.allowed]
    return [Path.home().resolve(), launch_dir.resolve()]


def admit_workspace(config: Config, *, launch_dir: Path, named: bool = False) -> None:
    """``WorkspaceRefused`` unless ``config``'s workspace lies under one of the allowed roots.

    ``named``: the user named the folder on the command line (``ided mcp -w DIR``), as they do for
    ``ided run -w DIR``; then, with no ``roots.allowed`` of the user's, any folder ``check_folder`` accepts is
    admitted (the default roots guard the folders a client names at run time: ACP's ``session/new``)."""
    workspace = check_folder(config.workspace_path)
    if named and not config.roots.allowed:
        return
    roots = allowed_roots(config, launch_dir=launch_dir)
    # by default also the project that holds the launch folder (``ided mcp`` started in its src/)
    holds_launch = not config.roots.allowed and launch_dir.resolve().is_relative_to(workspace)
    if not holds_launch and not any(workspace.is_relative_to(root) for root in roots):
        shown = ", ".join(str(r) for r in roots)
        raise WorkspaceRefused(f"workspace {workspace} is outside the allowed roots ({shown}); {_FIX}")
