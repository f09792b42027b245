"""Composition root: ``python -m daemon`` / ``ided``.

A protocol front (``ided acp|lsp|mcp``) loads only the root app, not every command's imports, so
editors that spawn ided get their server about as fast as Python starts.
"""

from __future__ import annotations

import faulthandler
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _command(args: Sequence[str]) -> str | None:
    """The sub-command named in ``args`` (skipping the global options), or None."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--set":
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def main() -> None:
    # a fatal signal (SIGBUS from a memory-mapped store file on a full disk, SIGSEGV) leaves a message
    # and a traceback on stderr instead of a bare exit status
    faulthandler.enable()
    from daemon.cli.root import FRONT_COMMANDS

    if _command(sys.argv[1:]) in FRONT_COMMANDS:
        from daemon.cli.root import app
    else:
        from daemon.cli.app import app
    app()


if __name__ == "__main__":
    main()
