"""The workspace index opened in this process: what ``ided index``, ``search`` and ``status`` use when no
daemon serves the workspace.

``WorkspaceIndex`` (and the fastembed/Qdrant stack behind it) is imported with this module, so a command
imports it only where it opens the index.
"""

from __future__ import annotations

from daemon.config import Config
from daemon.index.workspace_index import WorkspaceIndex

__all__ = ["WorkspaceIndex", "open_local_index"]


def open_local_index(config: Config, *, command: str) -> WorkspaceIndex:
    """The index of ``config``'s workspace, locked by this process as ``ided COMMAND``.

    A moment's wait for the lock: another command's look at it (``daemon_running``) holds it for an
    instant. ``DaemonError`` (``workspace_busy``, ``state_unwritable``, ...) when it cannot open.
    """
    return WorkspaceIndex.open(config, holder=f"ided {command}", lock_wait_s=1.0)
