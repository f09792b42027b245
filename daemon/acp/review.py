"""A run's change set as ACP: one ``edit`` tool call with a ``diff`` per file, then a permission request.

The options are ``accept`` (allow_once: the run's commits go onto the user's branch), ``reject``
(reject_once: nothing changes; the branch is kept until cleanup) and ``feedback`` (reject_once: the
next prompt of the session, or ``_meta["ided/feedback"]`` on the permission answer, goes to the
run's last editing stage as a follow-up attempt on the same branch). A client that cancels the
request leaves the review open (``ided runs accept ID`` later).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from acp import start_tool_call, tool_diff_content, update_tool_call
from acp.schema import (
    AllowedOutcome,
    FileEditToolCallContent,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from daemon.errors import ConflictError
from daemon.service.run_review import RunReview
from daemon.vcs import ChangeSet, ConflictReport

__all__ = [
    "ACCEPT",
    "FEEDBACK",
    "FEEDBACK_META",
    "REJECT",
    "ReviewAnswer",
    "ReviewStatus",
    "apply_answer",
    "permission_call",
    "permission_options",
    "review_call",
    "review_call_id",
    "review_finished",
    "review_outcome",
]

logger = logging.getLogger(__name__)

ACCEPT = "accept"
REJECT = "reject"
FEEDBACK = "feedback"
FEEDBACK_META = "ided/feedback"


@dataclass(frozen=True, kw_only=True)
class ReviewAnswer:
    choice: Literal["accept", "reject", "feedback", "open"]
    feedback: str | None = None
    """The feedback text when the client sent it with the answer (``_meta["ided/feedback"]``)."""


def review_call_id(run_id: str, round_: int) -> str:
    return f"{run_id}/review-{round_}"


def _diffs(changes: ChangeSet, root: Path) -> list[FileEditToolCallContent]:
    diffs: list[FileEditToolCallContent] = []
    for f in changes.files:
        if f.binary:
            continue
        path = str(root / f.path)
        diffs.append(tool_diff_content(path, f.new_text or "", None if f.status == "added" else f.old_text))
    return diffs


def review_call(changes: ChangeSet, root: Path, call_id: str) -> ToolCallStart:
    """The whole change set as one pending ``edit`` tool call."""
    added = sum(f.added for f in changes.files)
    removed = sum(f.removed for f in changes.files)
    title = f"Review run {changes.run_id}: {len(changes.files)} file(s), +{added} -{removed}"
    return start_tool_call(
        call_id,
        title,
        kind="edit",
        status="pending",
        content=_diffs(changes, root),
        locations=[ToolCallLocation(path=str(root / f.path)) for f in changes.files],
        raw_input={
            "run_id": changes.run_id,
            "branch": changes.branch,
            "commits": [c.sha for c in changes.commits],
            "files": [
                {"path": f.path, "status": f.status, "added": f.added, "removed": f.removed} for f in changes.files
            ],
        },
    )


def permission_options() -> list[PermissionOption]:
    return [
        PermissionOption(option_id=ACCEPT, name="Accept all", kind="allow_once"),
        PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"),
        PermissionOption(option_id=FEEDBACK, name="Send feedback", kind="reject_once"),
    ]


def permission_call(call: ToolCallStart) -> ToolCallUpdate:
    return ToolCallUpdate(tool_call_id=call.tool_call_id, title=call.title, kind="edit", status="pending")


def review_outcome(response: RequestPermissionResponse) -> ReviewAnswer:
    outcome = response.outcome
    if not isinstance(outcome, AllowedOutcome):
        return ReviewAnswer(choice="open")
    meta = {**(response.field_meta or {}), **(outcome.field_meta or {})}
    feedback = meta.get(FEEDBACK_META)
    text = feedback.strip() if isinstance(feedback, str) and feedback.strip() else None
    if outcome.option_id == ACCEPT:
        return ReviewAnswer(choice="accept")
    if outcome.option_id == FEEDBACK:
        return ReviewAnswer(choice="feedback", feedback=text)
    return ReviewAnswer(choice="reject")


ReviewStatus = Literal["pending", "completed", "failed"]


async def apply_answer(review: RunReview, run_id: str, answer: ReviewAnswer) -> tuple[ReviewStatus, str]:
    """Accept or reject through the review service: the review call's final status and what happened.

    ``completed``: applied; ``failed``: not applied (rejected, a conflict, feedback asked for);
    ``pending``: left open.
    """
    if answer.choice == "accept":
        try:
            result = await review.accept(run_id)
        except ConflictError as exc:
            report = exc.report
            why = report.describe() if isinstance(report, ConflictReport) else exc.message
            return "failed", f"Not applied: {why}\nBoth sides are intact; the run's branch is kept."
        commits = ", ".join(c[:10] for c in result.commits)
        return "completed", (
            f"Accepted: {len(result.commits)} commit(s) on {result.branch} ({commits}); /rollback {run_id} undoes it."
        )
    if answer.choice == "reject":
        branch = await review.reject(run_id)
        return "failed", f"Rejected: your files are untouched; {branch.branch} is kept until cleanup."
    if answer.choice == "feedback":
        return "failed", "Feedback requested: the run's last editing stage tries again with it."
    return "pending", f"Review left open: ided runs accept {run_id} (or reject) decides it later."


def review_finished(call_id: str, status: ReviewStatus, text: str) -> ToolCallProgress:
    """The review call's final state; its diffs stay as they were."""
    return update_tool_call(call_id, status=status, raw_output=text)
