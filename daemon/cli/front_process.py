"""How the CLI starts a front (``ided lsp``, ``ided acp``, ``ided mcp``): it replaces itself with
``python -P -m MODULE --workspace DIR --set KEY=VALUE... OPTIONS``.

Fronts never import each other, and the front's process then owns stdin/stdout alone. ``-P``
keeps the current directory off ``sys.path``: a workspace's own ``logging.py``/``json.py`` must not
shadow the standard library in the front's process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

from daemon.config import to_set_pairs

__all__ = ["exec_front", "front_argv"]


def front_argv(module: str, workspace: Path | None, overrides: Mapping[str, Any], *options: str) -> list[str]:
    """The command line of the front's process: ``module`` run with these settings, then ``options``."""
    argv = [sys.executable, "-P", "-m", module]
    if workspace is not None:
        argv += ["--workspace", str(workspace)]
    for pair in to_set_pairs(overrides):
        argv += ["--set", pair]
    return [*argv, *options]


def exec_front(argv: list[str], env: Mapping[str, str] | None = None) -> NoReturn:
    """Replace this process with ``argv`` (the environment is ``env``, else this one's)."""
    sys.stdout.flush()
    sys.stderr.flush()
    if env is None:
        os.execv(sys.executable, argv)
    os.execve(sys.executable, argv, dict(env))
