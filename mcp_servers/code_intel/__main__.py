"""Composition root of the code-intel MCP server: ``python -m mcp_servers.code_intel`` (what ``ided mcp`` runs).

    python -m mcp_servers.code_intel [--workspace DIR] [--set KEY=VALUE ...]          # stdio
    python -m mcp_servers.code_intel --http [--port N] [--workspace DIR]               # HTTP, 127.0.0.1

HTTP needs a bearer token: ``IDED_MCP_TOKEN`` from the environment, else the one stored in
``<state_dir>/mcp-token`` (created, mode 0600, on first use). Logs go to stderr (or
``logging.file``), never stdout; a last stderr line ``ided mcp: stopped`` marks a clean exit.

A configuration that does not load (invalid TOML, bad UTF-8, unknown keys) does not kill the stdio
server before ``initialize``: it starts, and every tool answers the ``config_invalid`` error (exit
status 2 once the client leaves). Over HTTP it exits at once with the message.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any

from daemon.config import Config, load_config, parse_set_pairs
from daemon.errors import DaemonError
from daemon.logging_setup import configure_logging
from daemon.workspace_roots import admit_workspace, check_folder
from mcp_servers.code_intel.server import bind_loopback, serve_failed_stdio, serve_http, serve_stdio

__all__ = ["main", "resolve_token"]

TOKEN_ENV = "IDED_MCP_TOKEN"


def _overrides(pairs: list[str]) -> dict[str, Any]:
    try:
        return parse_set_pairs(pairs)
    except ValueError as exc:
        raise SystemExit(f"ided mcp: {exc}") from exc


def resolve_token(config: Config, env: dict[str, str]) -> tuple[str, str]:
    """(token, where it came from): the environment, else ``<state_dir>/mcp-token`` (generated once)."""
    if env.get(TOKEN_ENV):
        return env[TOKEN_ENV], f"${TOKEN_ENV}"
    path = config.state_path / "mcp-token"
    if path.is_file():
        token = path.read_text().strip()
        if len(token) >= 16:
            return token, str(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(token + "\n")
    return token, str(path)


def _stop_on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    """SIGTERM stops like Ctrl-C: the lifespan closes the language servers and the index.

    (Under HTTP, uvicorn handles SIGTERM itself, shuts down gracefully, then re-raises it here.)
    """
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ided mcp", description="ided's code-intel MCP server")
    parser.add_argument(
        "--workspace",
        "-w",
        type=Path,
        default=Path.cwd(),
        help="workspace root (no system folder; under roots.allowed when you set it; docs/mcp.md)",
    )
    parser.add_argument("--http", action="store_true", help="streamable HTTP on 127.0.0.1 instead of stdio")
    parser.add_argument("--port", type=int, default=8765, help="HTTP port (0 = any free port)")
    parser.add_argument(
        "--attach", action="store_true", help="use the workspace daemon (started if none runs) instead of own servers"
    )
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    env = dict(os.environ)
    try:
        # IDED_* variables are configuration keys to the loader; the token is not one.
        config_env = {key: value for key, value in env.items() if key != TOKEN_ENV}
        launch_dir = Path.cwd()
        config = load_config(
            check_folder(args.workspace.absolute()), env=config_env, overrides=_overrides(args.settings)
        )
        # the folder on the command line is the user's choice, as for `ided run -w DIR` (roots.allowed limits it)
        admit_workspace(config, launch_dir=launch_dir, named=True)
    except DaemonError as exc:
        sys.stderr.write(f"ided mcp: {exc}\n")
        if not args.http:
            with contextlib.suppress(KeyboardInterrupt):
                asyncio.run(serve_failed_stdio(exc))
            sys.stderr.write("ided mcp: stopped\n")
        return 2
    configure_logging(config.logging)
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        if args.http:
            token, source = resolve_token(config, env)
            sock = bind_loopback(args.port)

            def ready(url: str) -> None:
                sys.stderr.write(f"ided mcp: listening on {url} (bearer token from {source})\n")
                sys.stderr.flush()

            asyncio.run(serve_http(config, token=token, sock=sock, on_ready=ready, attach=args.attach))
        else:
            asyncio.run(serve_stdio(config, attach=args.attach))
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        sys.stderr.write(f"ided mcp: {exc}\n")
        return 1
    sys.stderr.write("ided mcp: stopped\n")
    sys.stderr.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
