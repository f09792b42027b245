"""``ided mcp``: run the code-intel MCP server for a workspace, over stdio or streamable HTTP.

The CLI only resolves the workspace and validates the configuration (so a bad key fails here,
with the usual message, for HTTP; over stdio the server starts anyway and answers every tool with
the ``config_invalid`` error, so an agent sees why), then replaces itself with
``python -m mcp_servers.code_intel``: fronts never import each other, and the MCP process then
owns stdin/stdout alone. The token for HTTP goes through the environment (``IDED_MCP_TOKEN``),
never the command line (visible in ``ps``).
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
from daemon.errors import DaemonError

__all__ = ["mcp", "server_argv"]

logger = logging.getLogger(__name__)

TOKEN_ENV = "IDED_MCP_TOKEN"


def server_argv(
    workspace: Path, overrides: Mapping[str, Any], *, http: bool, port: int, attach: bool = False
) -> list[str]:
    """The command line of the MCP server process for these options."""
    # -P: do not put the current directory on sys.path, or a workspace's own logging.py/json.py
    # would shadow the standard library in the server process.
    argv = [sys.executable, "-P", "-m", "mcp_servers.code_intel", "--workspace", str(workspace)]
    for pair in to_set_pairs(overrides):
        argv += ["--set", pair]
    if http:
        argv += ["--http", "--port", str(port)]
    if attach:
        argv.append("--attach")
    return argv


def mcp(
    ctx: typer.Context,
    workspace: Annotated[
        Path | None,
        typer.Option(
            "--workspace",
            "-w",
            help="Workspace root. Default: the nearest parent holding .ided.toml or .git, else the current directory.",
            file_okay=False,
        ),
    ] = None,
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
    state = ctx.obj
    assert isinstance(state, CliState)
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
    argv = server_argv(root, state.overrides, http=http, port=port, attach=attach)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, argv, env)
