"""Composition root of the LSP process: ``python -m daemon.lsp`` (what ``ided lsp`` runs, in its own process).

Arguments: ``--workspace DIR`` (pin the root), ``--set KEY=VALUE`` (repeatable; values are JSON
when they parse as JSON), ``--tcp --port N``. Logs go to stderr or ``logging.file``, never stdout.

Over stdio the client's ``initialize`` is answered first (``daemon.lsp.handshake``, standard library
only), and only then are the configuration, pygls and the handlers loaded; the server replays that
request. A configuration that does not load then reaches the client over the protocol (the attach
fails with its coded message, ``window/showMessage``, and requests are refused with it) instead of
ending the process after it answered. Without the early answer (TCP, ``--late-handshake``, a first
message the handshake does not vouch for) a bad configuration ends the process first, with code 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from daemon.core.early_handshake import Handshake

__all__ = ["main", "parse_overrides"]


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """``["daemon.watch=false"]`` -> ``{"daemon": {"watch": False}}``."""
    from daemon.config import parse_set_pairs

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
    # answer initialize only once the server is loaded (the contract test compares both answers)
    parser.add_argument("--late-handshake", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    bad = [pair for pair in args.settings if not pair.partition("=")[0] or "=" not in pair]
    if bad:
        raise SystemExit(f"ided lsp: --set expects KEY=VALUE, got {bad[0]!r}")
    handshake = None
    if not args.tcp and not args.late_handshake:
        from daemon.lsp.handshake import answer_initialize

        handshake = answer_initialize()
    return _serve(args, handshake)


def _serve(args: argparse.Namespace, handshake: Handshake | None) -> int:
    """Everything past the handshake: logging as configured, the server, the transport."""
    import functools

    from daemon.config import load_config
    from daemon.logging_setup import log_as_configured
    from daemon.lsp.server import build_server, serve_stdio, serve_tcp

    overrides = parse_overrides(args.settings)
    workspace: Path | None = args.workspace
    if not log_as_configured("ided lsp", workspace, overrides) and (handshake is None or handshake.early is None):
        return 2
    server = build_server(functools.partial(load_config, overrides=overrides), overrides, workspace=workspace)
    return serve_tcp(server, "127.0.0.1", args.port) if args.tcp else serve_stdio(server, handshake)


if __name__ == "__main__":
    sys.exit(main())
