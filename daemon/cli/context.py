"""What every CLI command needs: the workspace root, the loaded configuration, a stderr console.

Loading the configuration of an untrusted workspace whose repository had settings left out, or ships
programs ided does not run, prints the trust notice (``daemon.core.trust_notice``) once, as the command's
first line on stderr; ``ided status`` shows it in its own output instead."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from daemon.config import Config, load_config, parse_set_pairs
from daemon.errors import DaemonError
from daemon.logging_setup import configure_logging
from daemon.workspace_roots import find_workspace_root

__all__ = [
    "CliState",
    "JsonOpt",
    "WorkspaceOpt",
    "find_workspace_root",
    "parse_overrides",
    "readable_text",
    "text_argument",
    "workspace_option",
]

_WORKSPACE_HELP = "Workspace root. Default: the nearest parent holding .ided.toml or .git, else the current directory."


def workspace_option(help: str = _WORKSPACE_HELP) -> Any:
    """The ``--workspace``/``-w`` option (a folder), with this help text."""
    return typer.Option("--workspace", "-w", help=help, file_okay=False)


WorkspaceOpt = Annotated[Path | None, workspace_option()]


def readable_text(value: str) -> str:
    """``value`` with every byte that was not UTF-8 as U+FFFD.

    Python hands a command line's undecodable bytes over as lone surrogates (PEP 383), which no
    encoder, JSON or pydantic accepts; free text from a terminal may carry them (a pasted binary, a
    file in another encoding), and it is read as text with those bytes marked, never a traceback."""
    try:
        raw = value.encode("utf-8", "surrogateescape")  # the command line's own bytes back
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte
        raw = value.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "replace")


def text_argument(help: str) -> Any:
    """A free-text argument (a query, a request, feedback): read with :func:`readable_text`."""
    return typer.Argument(help=help, callback=readable_text)


JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """The CLI's ``--set`` pairs as a nested override dict (a bad pair is a usage error)."""
    try:
        return parse_set_pairs(pairs)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--set") from exc


@dataclass
class CliState:
    workspace: Path | None = None
    overrides: dict[str, Any] = field(default_factory=dict[str, Any])
    err: Console = field(default_factory=lambda: Console(stderr=True, soft_wrap=True))
    out: Console = field(default_factory=lambda: Console(soft_wrap=True))
    notice_shown: bool = False
    """Whether this command already said what the untrusted workspace had left out."""

    @staticmethod
    def of(ctx: typer.Context) -> CliState:
        """The state the app's callback put on ``ctx``."""
        state = ctx.obj
        assert isinstance(state, CliState)
        return state

    def root(self, workspace: Path | None = None) -> Path:
        """The workspace a command works on: ``workspace``, ``--workspace`` or the one around the cwd."""
        return workspace or self.workspace or find_workspace_root(Path.cwd())

    def config(self, workspace: Path | None = None, *, notice: bool = True) -> Config:
        """The loaded configuration (a coded error ends the command); ``notice``: say, once, on stderr, what
        an untrusted workspace had left out (``ided status`` shows it itself)."""
        config = self.config_or_error(workspace)
        if isinstance(config, DaemonError):
            self.fail(str(config))
        if notice:
            self.say_trust_notice(config)
        return config

    def say_trust_notice(self, config: Config) -> None:
        """The trust notice of ``config``'s workspace on stderr, the first time this command has one."""
        if self.notice_shown or config.project.trusted is not False:
            return
        from daemon.service.intel.trust_notice import trust_notice

        found = trust_notice(config)
        if found is not None:
            self.notice_shown = True
            self.err.print(Text(found.message, style="yellow"), highlight=False)

    def config_or_error(self, workspace: Path | None = None) -> Config | DaemonError:
        """The loaded configuration (logging configured from it), or the coded error saying why it did not load."""
        try:
            config = load_config(self.root(workspace), overrides=self.overrides)
        except DaemonError as exc:
            return exc
        configure_logging(config.logging)
        return config

    def fail(self, message: str, code: int = 1) -> NoReturn:
        self.err.print(Text("error: ", style="bold red") + Text(message), highlight=False)
        raise typer.Exit(code)
