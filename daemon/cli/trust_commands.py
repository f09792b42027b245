"""``ided trust [PATH]``, ``ided trust --list``, ``ided trust --remove PATH``; the trust question of ``ided run``.

The trusted folders live in the user's own config directory (``daemon.trust``); a repository's
commands (its ``.ided.toml`` ``[agents.commands]``, workflow files in it) run only in a trusted one.
``ided run`` asks when stdin is a terminal and the run would withhold such commands; ``--trust``
trusts the workspace for that one run without remembering it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from daemon.cli.context import CliState, find_workspace_root
from daemon.errors import DaemonError
from daemon.trust import TrustStore

if TYPE_CHECKING:
    from daemon.core.run_models import RunCommands

__all__ = ["ask_trust", "register_trust_command"]


def _state(ctx: typer.Context) -> CliState:
    state = ctx.obj
    assert isinstance(state, CliState)
    return state


def trust(
    ctx: typer.Context,
    path: Annotated[
        Path | None,
        typer.Argument(help="The folder to trust (default: the workspace of the current directory).", file_okay=False),
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the trusted folders.")] = False,
    remove: Annotated[bool, typer.Option("--remove", help="Stop trusting PATH.")] = False,
) -> None:
    """Trust a workspace: let the commands its repository defines run (its .ided.toml, its workflow files).

    Trust is kept in your own config directory (~/.config/ided/trusted-workspaces.json), never in the
    repository, and covers the folders under PATH. Commands from your own config run everywhere.
    """
    state = _state(ctx)
    store = TrustStore.default()
    if list_:
        if path is not None or remove:
            state.fail("--list takes no PATH and no --remove")
        try:
            entries = store.entries()
        except DaemonError as exc:
            state.fail(str(exc))
        if not entries:
            state.err.print(f"no trusted workspace ({store.path})")
        for entry in entries:
            state.out.print(f"{entry.path}\t{entry.trusted_at}", markup=False, highlight=False)
        return
    folder = (path or state.workspace or find_workspace_root(Path.cwd())).resolve()
    try:
        if remove:
            done = store.remove(folder)
            state.err.print(f"{folder}: {'no longer trusted' if done else 'was not in the trusted list'}")
            return
        done = store.add(folder)
    except DaemonError as exc:
        state.fail(str(exc))
    state.err.print(f"{folder}: {'trusted' if done else 'already trusted'} ({store.path})")


def ask_trust(state: CliState, root: Path, commands: RunCommands) -> bool:
    """Ask on the terminal whether the repository's commands may run; False when stdin is no terminal."""
    state.err.print(f"This workspace is not trusted: {root}", style="yellow", markup=False, highlight=False)
    for w in commands.withheld:
        state.err.print(f"  {w.name} = {w.line}    ({w.source})", markup=False, highlight=False)
    if not sys.stdin.isatty():
        state.err.print(commands.explain(), style="yellow", markup=False, highlight=False)
        return False
    answer = typer.prompt(
        "Let the repository's commands run? [y] yes, and trust this workspace / [o] once / [N] no",
        default="n",
        show_default=False,
        err=True,
    )
    choice = answer.strip().lower()
    if choice in ("y", "yes"):
        try:
            TrustStore.default().add(root)
        except DaemonError as exc:
            state.err.print(f"not remembered: {exc}", style="yellow", markup=False, highlight=False)
        return True
    if choice in ("o", "once"):
        return True
    state.err.print("The run goes on with your own commands only.", markup=False, highlight=False)
    return False


def register_trust_command(app: typer.Typer) -> None:
    app.command("trust")(trust)
