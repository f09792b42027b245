"""Asking the ACP client whether the repository's commands may run: an ``execute`` tool call, then a
``session/request_permission``.

Before a code-mode prompt's run starts in a workspace the user has not trusted, and whose repository
defines commands (``.ided.toml`` ``[agents.commands]``, workflow files in it), the agent shows the
commands as one pending ``execute`` tool call (``raw_input``: name, command line, file) and asks with
three options: ``trust_once`` (allow_once: this run, and its follow-ups, runs them), ``trust_always``
(allow_always: the workspace goes into the user's trusted list, ``ided trust``) and ``untrusted``
(reject_once: the run goes on with the user's own commands only). A cancelled or failed request is a
refusal. The call ends ``completed`` (allowed) or ``failed`` (refused) with the answer as its output.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from acp import start_tool_call, text_block, tool_content, update_tool_call
from acp.schema import PermissionOption, RequestPermissionResponse, ToolCallProgress, ToolCallStart

from daemon.acp.permission import chosen

__all__ = [
    "TRUST_ALWAYS",
    "TRUST_ONCE",
    "UNTRUSTED",
    "TrustAnswer",
    "trust_answer",
    "trust_call",
    "trust_finished",
    "trust_options",
]

TRUST_ONCE = "trust_once"
TRUST_ALWAYS = "trust_always"
UNTRUSTED = "untrusted"

TrustAnswer = Literal["once", "always", "refused"]


def trust_call(defined: Mapping[str, tuple[str, str]], root: Path, call_id: str) -> ToolCallStart:
    """The repository's commands (name -> (command line, file)) as one pending ``execute`` call."""
    lines = "\n".join(f"{name} = {line}    ({source})" for name, (line, source) in sorted(defined.items()))
    text = (
        f"{root} is not a trusted workspace. Its repository defines commands the agents would run:\n"
        f"{lines}\n\nAllow them? Your own commands run either way."
    )
    return start_tool_call(
        call_id,
        "Run the repository's commands?",
        kind="execute",
        status="pending",
        content=[tool_content(text_block(text))],
        raw_input={
            "workspace": str(root),
            "commands": [
                {"name": name, "command": line, "source": source} for name, (line, source) in sorted(defined.items())
            ],
        },
    )


def trust_options() -> list[PermissionOption]:
    return [
        PermissionOption(option_id=TRUST_ONCE, name="Allow for this run", kind="allow_once"),
        PermissionOption(option_id=TRUST_ALWAYS, name="Trust this workspace", kind="allow_always"),
        PermissionOption(option_id=UNTRUSTED, name="Don't run them", kind="reject_once"),
    ]


def trust_answer(response: RequestPermissionResponse) -> TrustAnswer:
    option, _ = chosen(response)
    answers: dict[str | None, TrustAnswer] = {TRUST_ONCE: "once", TRUST_ALWAYS: "always"}
    return answers.get(option, "refused")


def trust_finished(call_id: str, answer: TrustAnswer, note: str) -> ToolCallProgress:
    return update_tool_call(call_id, status="failed" if answer == "refused" else "completed", raw_output=note)
