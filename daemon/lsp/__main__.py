"""Composition root of the LSP process: ``python -m daemon.lsp`` (what ``ided lsp`` runs).

Arguments: ``--workspace DIR`` (pin the root), ``--set KEY=VALUE`` (repeatable; values are JSON
when they parse as JSON), ``--tcp --port N``. Logs go to stderr or ``logging.file``, never stdout.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path
from typing import Any

from daemon.config import load_config, parse_set_pairs
from daemon.logging_setup import log_as_configured
from daemon.lsp.server import build_server, serve_stdio, serve_tcp

__all__ = ["main", "parse_overrides"]


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """``["daemon.watch=false"]`` -> ``{"daemon": {"watch": False}}``."""
    try:
        return parse_set_pairs(pairs)
    except ValueError as exc:
        raise SystemExit(f"ided lsp: {exc}") from exc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ided lsp", description="The ided language server (docs/lsp.md).")
    parser.add_argument("--workspace", type=Path, default=None)
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--tcp", action="store_true")
    parser.add_argument("--port", type=int, default=2087)
    args = parser.parse_args(argv)
    overrides = parse_overrides(args.settings)
    workspace: Path | None = args.workspace
    if not log_as_configured("ided lsp", workspace, overrides):
        return 2
    server = build_server(functools.partial(load_config, overrides=overrides), overrides, workspace=workspace)
    return serve_tcp(server, "127.0.0.1", args.port) if args.tcp else serve_stdio(server)


if __name__ == "__main__":
    sys.exit(main())
