"""``ided lsp``: the language server editors run beside their own (stdio by default).

The CLI only validates the configuration (a bad ``--set`` key fails here, with the usual message)
and then replaces itself with ``python -m daemon.lsp``: fronts never import each other, and the
LSP process then owns stdin/stdout alone. That process attaches to the workspace's daemon
(starting it when none runs) once the client has sent ``initialized``. Methods: docs/lsp.md.
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

__all__ = ["lsp", "lsp_argv"]

logger = logging.getLogger(__name__)


def lsp_argv(workspace: Path | None, overrides: Mapping[str, Any], *, tcp: bool, port: int) -> list[str]:
    """The command line of the LSP process for these options."""
    # -P: a workspace's own logging.py/json.py must not shadow the standard library in the server.
    argv = [sys.executable, "-P", "-m", "daemon.lsp"]
    if workspace is not None:
        argv += ["--workspace", str(workspace)]
    for pair in to_set_pairs(overrides):
        argv += ["--set", pair]
    if tcp:
        argv += ["--tcp", "--port", str(port)]
    return argv


def lsp(
    ctx: typer.Context,
    workspace: Annotated[
        Path | None,
        typer.Option(
            "--workspace",
            "-w",
            help="Pin the workspace root. Default: the client's first workspace folder (or rootUri).",
            file_okay=False,
        ),
    ] = None,
    tcp: Annotated[
        bool, typer.Option("--tcp", help="Listen on 127.0.0.1:PORT for one client instead of stdio.")
    ] = False,
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="TCP port (with --tcp); 0 picks a free one.")
    ] = 2087,
) -> NoReturn:
    """Serve the ided LSP extension: `workspace/symbol` from the index, `$/progress` while indexing,
    and the `ided/index/*` and `ided/intel/*` methods (docs/lsp.md).

    Editors start it over stdio (see editors/neovim and editors/vscode). It shares the workspace's
    daemon, and so one hot index, with every other front (`ided mcp`, other editors).
    """
    state = ctx.obj
    assert isinstance(state, CliState)
    config = state.config(workspace)
    argv = lsp_argv(config.workspace_path if workspace else None, state.overrides, tcp=tcp, port=port)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, argv)
