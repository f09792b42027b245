"""``ided acp``: the Agent Client Protocol agent an IDE (Zed, the Iced client) runs over stdio.

A plain ``ided acp`` never reaches this command: ``daemon.__main__`` runs ``daemon.acp``'s entry
point in-process (``daemon.cli.front_process.direct_front``), which answers ``initialize`` first and
answers ``session/new`` with the error of a configuration that does not load. This command serves
the command lines typer must see (``--help``, anything ``direct_front`` declines): it validates the
configuration (a bad ``--set`` key fails here, with the usual message) and then replaces itself
with ``python -m daemon.acp``: fronts never import each other, and the ACP process then owns
stdin/stdout alone. Sessions, modes and slash commands: docs/acp.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import typer

from daemon.cli.context import CliState, workspace_option
from daemon.cli.front_process import exec_front, front_argv

__all__ = ["acp"]


def acp(
    ctx: typer.Context,
    workspace: Annotated[
        Path | None,
        workspace_option("Pin the workspace. Default: each session's cwd (as the client sends it in session/new)."),
    ] = None,
) -> NoReturn:
    """Serve the Agent Client Protocol on stdio: a prompt becomes a workflow run, streamed as a plan,
    thoughts, messages and tool calls; edits come back as one diff to accept, reject or answer.

    Configure your IDE to run `ided acp` as an agent server (docs/acp.md). Slash commands:
    /dry-run, /workflow NAME, /runs. Modes: ask (read-only) and code.
    """
    state = CliState.of(ctx)
    config = state.config(workspace)
    exec_front(front_argv("daemon.acp", config.workspace_path if workspace else None, state.overrides))
