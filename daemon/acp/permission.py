"""What the two permission requests of the ACP front (review, trust) share: the pending call they ask about,
and reading the client's answer.

``pending_call`` is the ``toolCall`` of ``session/request_permission``: the shown call, still pending.
``chosen`` is the option the client picked (None when it cancelled) and the answer's ``_meta``, the
outcome's over the response's.
"""

from __future__ import annotations

from typing import Any

from acp.schema import AllowedOutcome, RequestPermissionResponse, ToolCallStart, ToolCallUpdate

__all__ = ["chosen", "pending_call"]


def pending_call(call: ToolCallStart) -> ToolCallUpdate:
    return ToolCallUpdate(tool_call_id=call.tool_call_id, title=call.title, kind=call.kind, status="pending")


def chosen(response: RequestPermissionResponse) -> tuple[str | None, dict[str, Any]]:
    outcome = response.outcome
    if not isinstance(outcome, AllowedOutcome):
        return None, {}
    return outcome.option_id, {**(response.field_meta or {}), **(outcome.field_meta or {})}
