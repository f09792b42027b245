"""Composition root: ``python -m daemon`` / ``ided``.

``ided lsp``, ``ided acp`` and ``ided mcp`` (stdio) with plain options run their front's entry
point right here, before typer or the configuration loads (``daemon.cli.front_process.direct_front``):
no second interpreter, no CLI. lsp and acp answer the client's ``initialize`` about as fast as
Python starts and load the rest after that. A front command line typer must see (``--help``, an
error to explain, ``ided mcp --http``) loads only the root app, not every command's imports; any
other command loads the full app.
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
    from daemon.cli.front_process import direct_front, drop_cwd_from_path

    direct = direct_front(sys.argv[1:])
    if direct is not None:
        front, argv = direct
        drop_cwd_from_path()
        if front == "lsp":
            from daemon.lsp.__main__ import main as front_main
        elif front == "acp":
            from daemon.acp.__main__ import main as front_main
        else:
            # run by name, as `python -m` would (the daemon package does not import the MCP front)
            import runpy

            sys.argv[1:] = argv
            runpy.run_module("mcp_servers.code_intel", run_name="__main__", alter_sys=True)
            return
        sys.exit(front_main(argv))
    from daemon.cli.root import FRONT_COMMANDS

    if _command(sys.argv[1:]) in FRONT_COMMANDS:
        from daemon.cli.root import app
    else:
        from daemon.cli.app import app
    app()


if __name__ == "__main__":
    main()
