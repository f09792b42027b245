"""Slash commands of the ACP front: what a prompt's leading ``/word`` asks for, and the advertised list.

``/dry-run REQUEST``: selection and plan only. ``/workflow NAME REQUEST``: run with that workflow.
``/runs``: the workspace's recent runs. ``/rollback ID``: revert an accepted run (only when the
workspace's run branches are available). Anything else is a request for a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

__all__ = ["CommandError", "CommandKind", "ParsedPrompt", "available_commands", "parse_command"]


class CommandKind(StrEnum):
    RUN = "run"
    DRY_RUN = "dry-run"
    WORKFLOW = "workflow"
    RUNS = "runs"
    ROLLBACK = "rollback"


@dataclass(frozen=True, kw_only=True)
class ParsedPrompt:
    kind: CommandKind
    request: str
    argument: str | None = None
    """The workflow name (``/workflow``) or run id (``/rollback``)."""


_DESCRIPTIONS: dict[CommandKind, tuple[str, str | None]] = {
    CommandKind.DRY_RUN: ("Show the selected workflow and its plan; execute nothing.", "request"),
    CommandKind.WORKFLOW: ("Run the request with this workflow instead of letting ided choose.", "NAME request"),
    CommandKind.RUNS: ("List this workspace's recent runs.", None),
    CommandKind.ROLLBACK: ("Revert an accepted run with new commits (history is never rewritten).", "RUN_ID"),
}


def available_commands(*, rollback: bool) -> list[AvailableCommand]:
    """The commands to advertise (``/rollback`` only where runs can be rolled back)."""
    commands: list[AvailableCommand] = []
    for kind, (description, hint) in _DESCRIPTIONS.items():
        if kind is CommandKind.ROLLBACK and not rollback:
            continue
        command_input = AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None
        commands.append(AvailableCommand(name=kind.value, description=description, input=command_input))
    return commands


class CommandError(ValueError):
    """A slash command without what it needs; the message says what to type."""


def parse_command(text: str) -> ParsedPrompt:
    """What the prompt text asks for. ``CommandError`` for a known command used wrongly."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return ParsedPrompt(kind=CommandKind.RUN, request=stripped)
    head, _, rest = stripped[1:].partition(" ")
    rest = rest.strip()
    try:
        kind = CommandKind(head)
    except ValueError:
        return ParsedPrompt(kind=CommandKind.RUN, request=stripped)  # not ours: a request that starts with "/"
    if kind is CommandKind.RUNS:
        return ParsedPrompt(kind=kind, request="")
    if kind is CommandKind.DRY_RUN:
        if not rest:
            raise CommandError("/dry-run needs a request: /dry-run add a --json flag to ided status")
        return ParsedPrompt(kind=kind, request=rest)
    if kind is CommandKind.WORKFLOW:
        name, _, request = rest.partition(" ")
        if not name or not request.strip():
            raise CommandError("/workflow needs a workflow name and a request: /workflow bug_fix fix the crash")
        return ParsedPrompt(kind=kind, request=request.strip(), argument=name)
    if not rest or " " in rest:
        raise CommandError("/rollback needs one run id: /rollback 20250101-120000-000000 (/runs lists them)")
    return ParsedPrompt(kind=kind, request="", argument=rest)
