"""``ided acp``: the Agent Client Protocol agent an IDE (Zed, the Iced client) runs over stdio.

The CLI only validates the configuration (a bad ``--set`` key fails here, with the usual message)
and then replaces itself with ``python -m daemon.acp``: fronts never import each other, and the
ACP process then owns stdin/stdout alone. Sessions, modes and slash commands: docs/acp.md.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from daemon.cli.context import CliState
from daemon.config import to_set_pairs

__all__ = ["acp", "acp_argv"]

logger = logging.getLogger(__name__)


def acp_argv(workspace: Path | None, overrides: Mapping[str, Any]) -> list[str]:
    """The command line of the ACP process for these options."""
    # -P: a workspace's own logging.py/json.py must not shadow the standard library in the agent.
    argv = [sys.executable, "-P", "-m", "daemon.acp"]
    if workspace is not None:
        argv += ["--workspace", str(workspace)]
    for pair in to_set_pairs(overrides):
        argv += ["--set", pair]
    return argv


def acp(
    ctx: typer.Context,
    workspace: Annotated[
        Path | None,
        typer.Option(
            "--workspace",
            "-w",
            help="Pin the workspace. Default: each session's cwd (as the client sends it in session/new).",
            file_okay=False,
        ),
    ] = None,
) -> NoReturn:
    """Serve the Agent Client Protocol on stdio: a prompt becomes a workflow run, streamed as a plan,
    thoughts, messages and tool calls; edits come back as one diff to accept, reject or answer.

    Configure your IDE to run `ided acp` as an agent server (docs/acp.md). Slash commands:
    /dry-run, /workflow NAME, /runs. Modes: ask (read-only) and code.
    """
    state = ctx.obj
    assert isinstance(state, CliState)
    config = state.config(workspace)
    argv = acp_argv(config.workspace_path if workspace else None, state.overrides)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, argv)
