"""The `ided` command's root: the app, its global options and the protocol fronts.

The fronts (`ided acp`, `ided lsp`, `ided mcp`) are registered here, apart from every other
command, so that an editor spawning one pays only for this module: ``daemon.__main__`` imports
``daemon.cli.app`` (all commands) only when the command is not a front. A plain ``ided lsp`` or
``ided acp`` does not load even this module (``daemon.cli.front_process.direct_front``).
"""

from __future__ import annotations

from typing import Annotated

import typer

from daemon import __version__
from daemon.cli.acp_command import acp
from daemon.cli.context import CliState, parse_overrides
from daemon.cli.lsp_command import lsp
from daemon.cli.mcp_command import mcp

__all__ = ["FRONT_COMMANDS", "app"]

FRONT_COMMANDS = frozenset({"acp", "lsp", "mcp"})

app = typer.Typer(
    name="ided",
    help=(
        "ided: a workspace daemon for agentic IDEs.\n\n"
        "It keeps a Tree-sitter + Qdrant index of your workspace (functions, classes, doc sections) "
        "and answers hybrid lexical + semantic searches over it.\n\n"
        'Quick start: `ided index` in your project, then `ided search "how are files skipped"`.'
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)
_FRONTS_PANEL = "Protocol fronts (for editors and agents)"
app.command("mcp", rich_help_panel=_FRONTS_PANEL)(mcp)
app.command("lsp", rich_help_panel=_FRONTS_PANEL)(lsp)
app.command("acp", rich_help_panel=_FRONTS_PANEL)(acp)


def _version(value: bool) -> None:
    if value:
        print(f"ided {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    settings: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="Override a config key for this run, e.g. `--set index.max_file_bytes=2000000` (repeatable).",
            metavar="KEY=VALUE",
        ),
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    ctx.obj = CliState(overrides=parse_overrides(settings or []))
