"""How the CLI starts a front (``ided lsp``, ``ided acp``, ``ided mcp``).

The usual way in: ``ided lsp``, ``ided acp`` and ``ided mcp`` (stdio) with only the options their
own entry points take (``--set`` before the command; ``--workspace``/``-w``;
``--attach``/``--standalone`` for mcp) never load typer: ``daemon.__main__`` asks
:func:`direct_front` for the front's argv and calls that front's ``main`` in this process (lsp and
acp answer the client's ``initialize`` before loading anything heavy). Whatever it does not
recognise exactly (``--help``, a typo, ``-w`` naming a file, a ``--set`` that is not KEY=VALUE,
``ided lsp --tcp``, ``ided mcp --http`` or ``--token``, or ``IDED_MCP_TOKEN`` set) goes through the typer
app, which explains it as before, or else replaces itself with ``python -P -m MODULE --workspace
DIR --set KEY=VALUE... OPTIONS`` (:func:`front_argv`, :func:`exec_front`).

Fronts never import each other, and the front's process then owns stdin/stdout alone. ``-P`` (or,
in-process, :func:`drop_cwd_from_path`) keeps the current directory off ``sys.path``: a
workspace's own ``logging.py``/``json.py`` must not shadow the standard library in a front.

Standard library only at import (``daemon.config`` is loaded by :func:`front_argv` alone).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from daemon.workspace_roots import find_workspace_root

__all__ = ["DIRECT_FRONTS", "direct_front", "drop_cwd_from_path", "exec_front", "front_argv"]

DIRECT_FRONTS = frozenset({"acp", "lsp", "mcp"})
"""The fronts ``daemon.__main__`` runs in-process when :func:`direct_front` recognises the command line."""

_VALUED = {"acp": {"--workspace", "-w"}, "lsp": {"--workspace", "-w"}, "mcp": {"--workspace", "-w"}}
_FLAGS = {"acp": set[str](), "lsp": set[str](), "mcp": {"--attach", "--standalone"}}
_MCP_TOKEN_ENV = "IDED_MCP_TOKEN"
"""``ided mcp --token``'s variable: when it is set, typer checks it (and ``ided mcp`` passes it on)."""


def direct_front(args: Sequence[str]) -> tuple[str, list[str]] | None:
    """``[--set KEY=VALUE]... lsp|acp [OPTIONS]`` as (front, that front's ``main`` argv): the same settings the typer
    command would pass to ``python -m daemon.<front>``. None when anything is not exactly what the typer command would
    accept without a word (help, an unknown option, a bad value): typer then handles the command line."""
    settings: list[str] = []
    rest = list(args)
    while rest and rest[0].startswith("-"):
        option, has_value, value = rest.pop(0).partition("=")
        if option != "--set":
            return None
        if not has_value:
            if not rest:
                return None
            value = rest.pop(0)
        settings.append(value)
    if not rest or rest[0] not in DIRECT_FRONTS or (rest[0] == "mcp" and _MCP_TOKEN_ENV in os.environ):
        return None
    front, options = rest[0], _front_options(rest[0], rest[1:])
    if options is None or any("=" not in pair or not pair.partition("=")[0] for pair in settings):
        return None
    argv: list[str] = []
    if "--workspace" in options:
        workspace = Path(options["--workspace"])
        if workspace.is_file():
            return None
        argv += ["--workspace", str(workspace.resolve())]
    elif front == "mcp":  # the MCP server is always told its root: the one around the current directory
        argv += ["--workspace", str(find_workspace_root(Path.cwd()))]
    for pair in settings:
        argv += ["--set", pair]
    if front == "mcp" and options.get("attach", "--attach") == "--attach":
        argv.append("--attach")
    return front, argv


def _front_options(front: str, args: list[str]) -> dict[str, str] | None:
    options: dict[str, str] = {}
    while args:
        arg = args.pop(0)
        name, has_value, value = arg.partition("=") if arg.startswith("--") else (arg, False, "")
        if name in _FLAGS[front] and not has_value:
            options["attach" if name in ("--attach", "--standalone") else name] = name
            continue
        if name not in _VALUED[front]:
            return None
        if not has_value:
            if not args or args[0].startswith("-"):
                return None
            value = args.pop(0)
        options["--workspace" if name == "-w" else name] = value
    if not options.get("--workspace", "x"):
        return None
    return options


def drop_cwd_from_path() -> None:
    """What ``python -P`` does, for a front run in this process: the current directory (``python -m``'s first
    ``sys.path`` entry) goes."""
    if not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]


def front_argv(module: str, workspace: Path | None, overrides: Mapping[str, Any], *options: str) -> list[str]:
    """The command line of the front's process: ``module`` run with these settings, then ``options``."""
    from daemon.config import to_set_pairs

    argv = [sys.executable, "-P", "-m", module]
    if workspace is not None:
        argv += ["--workspace", str(workspace)]
    for pair in to_set_pairs(overrides):
        argv += ["--set", pair]
    return [*argv, *options]


def exec_front(argv: list[str], env: Mapping[str, str] | None = None) -> NoReturn:
    """Replace this process with ``argv`` (the environment is ``env``, else this one's)."""
    sys.stdout.flush()
    sys.stderr.flush()
    if env is None:
        os.execv(sys.executable, argv)
    os.execve(sys.executable, argv, dict(env))
