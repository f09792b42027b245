"""``ided mcp``: run the code-intel MCP server for a workspace, over stdio or streamable HTTP.

The CLI only resolves the workspace and validates the configuration (so a bad key fails here,
with the usual message, for HTTP; over stdio the server starts anyway and answers every tool with
the ``config_invalid`` error, so an agent sees why), then replaces itself with
``python -m mcp_servers.code_intel`` (``daemon.cli.front_process``): fronts never import each
other, and the MCP process then owns stdin/stdout alone. The token for HTTP goes through the
environment (``IDED_MCP_TOKEN``), never the command line (visible in ``ps``).
"""

from __future__ import annotations

import os
from typing import Annotated, NoReturn

import typer

from daemon.cli.context import CliState, WorkspaceOpt
from daemon.cli.front_process import exec_front, front_argv
from daemon.errors import DaemonError

__all__ = ["mcp"]

TOKEN_ENV = "IDED_MCP_TOKEN"


def mcp(
    ctx: typer.Context,
    workspace: WorkspaceOpt = None,
    http: Annotated[
        bool, typer.Option("--http", help="Serve streamable HTTP on 127.0.0.1 instead of stdio (token required).")
    ] = False,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="HTTP port; 0 picks a free one.")] = 8765,
    attach: Annotated[
        bool,
        typer.Option(
            "--attach/--standalone",
            help="--attach (default): use the workspace daemon's index and language servers (started if none "
            "runs), shared with `ided lsp` and other agents. --standalone: this process's own.",
        ),
    ] = True,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar=TOKEN_ENV,
            help="Bearer token HTTP clients must send. Default: generated once into <state_dir>/mcp-token.",
            show_default=False,
        ),
    ] = None,
) -> NoReturn:
    """Serve the code-intel tools over MCP: definitions, references, signatures, AST nodes, symbols,
    call hierarchy and diagnostics from real language servers and Tree-sitter, plus index search.

    stdio by default (configure your agent to run `ided mcp -w /path/to/project`); `--http` listens
    on http://127.0.0.1:PORT/mcp and refuses requests without `Authorization: Bearer <token>`.
    Tools and configuration: docs/mcp.md and docs/code-intel.md.
    """
    state = CliState.of(ctx)
    # IDED_* variables are configuration keys to the loader; the token is not one.
    os.environ.pop(TOKEN_ENV, None)
    config = state.config_or_error(workspace)
    if isinstance(config, DaemonError):
        if http:
            state.fail(str(config))
        # stdio: the server starts anyway and answers every tool with this error (its loader finds it again)
        root = state.root(workspace).resolve()
    else:
        root = config.workspace_path
    if token is not None and len(token) < 16:
        state.fail("--token must be at least 16 characters")
    env = dict(os.environ)
    if token:
        env[TOKEN_ENV] = token
    options = [*(["--http", "--port", str(port)] if http else []), *(["--attach"] if attach else [])]
    exec_front(front_argv("mcp_servers.code_intel", root, state.overrides, *options), env)
