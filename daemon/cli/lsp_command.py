"""``ided lsp``: the language server editors run beside their own (stdio by default).

A plain ``ided lsp`` never reaches this command: ``daemon.__main__`` runs ``daemon.lsp``'s entry
point in-process (``daemon.cli.front_process.direct_front``), which answers ``initialize`` first and
reports a configuration that does not load over the protocol. This command serves the command
lines typer must see (``--help``, anything ``direct_front`` declines): it validates the
configuration (a bad ``--set`` key fails here, with the usual message) and then replaces itself
with ``python -m daemon.lsp``: fronts never import each other, and the LSP process then owns
stdin/stdout alone. That process attaches to the workspace's daemon
(starting it when none runs) once the client has sent ``initialized``. Methods: docs/lsp.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import typer

from daemon.cli.context import CliState, workspace_option
from daemon.cli.front_process import exec_front, front_argv

__all__ = ["lsp"]


def lsp(
    ctx: typer.Context,
    workspace: Annotated[
        Path | None,
        workspace_option("Pin the workspace root. Default: the client's first workspace folder (or rootUri)."),
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
    state = CliState.of(ctx)
    config = state.config(workspace)
    options = ["--tcp", "--port", str(port)] if tcp else []
    exec_front(front_argv("daemon.lsp", config.workspace_path if workspace else None, state.overrides, *options))
