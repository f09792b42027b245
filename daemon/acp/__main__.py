"""Composition root of the ACP process: ``python -m daemon.acp`` (what ``ided acp`` runs, in its own process).

Arguments: ``--workspace DIR`` (serve that folder whatever a session's ``cwd`` says), ``--set
KEY=VALUE`` (repeatable). The client's ``initialize`` is answered first (``daemon.acp.handshake``,
standard library only), then its first ``session/new`` (``daemon.acp.early_session``: the
configuration and the session file); only then are the ACP SDK and the agent loaded
(``daemon.acp.stdio``), so neither waits for them. Logs go to
stderr or ``logging.file``. SIGTERM/SIGINT and end of input end it the same way: runs in flight
are cancelled (see ``acp.cancel_grace_seconds``), then everything closes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from daemon.acp.handshake import answer_initialize

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ided acp", description="The ided ACP agent on stdio (docs/acp.md).")
    parser.add_argument("--workspace", type=Path, default=None)
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE")
    # answer initialize only once the SDK is loaded (the contract test compares both answers)
    parser.add_argument("--late-handshake", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    bad = [pair for pair in args.settings if "=" not in pair or not pair.partition("=")[0]]
    if bad:
        print(f"ided acp: --set expects KEY=VALUE, got {bad[0]!r}", file=sys.stderr)
        return 2
    handshake = None if args.late_handshake else answer_initialize()
    session = None
    if handshake is not None and handshake.early is not None:
        from daemon.acp.early_session import answer_new_session

        handshake, session = answer_new_session(handshake, workspace=args.workspace, settings=args.settings)
    from daemon.acp.stdio import run

    return run(args.workspace, args.settings, handshake, session)


if __name__ == "__main__":
    sys.exit(main())
