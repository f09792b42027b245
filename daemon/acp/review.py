"""A run's change set as ACP: one ``edit`` tool call with a ``diff`` per file, then a permission request.

The options are ``accept`` (allow_once: the run's commits go onto the user's branch; with
``_meta["ided/keep"]``, only the files and hunks the reviewer kept, as one reviewed commit), ``reject``
(reject_once: nothing changes; the branch is kept until cleanup) and ``feedback`` (reject_once: the
next prompt of the session, or ``_meta["ided/feedback"]`` on the permission answer, goes to the
run's last editing stage as a follow-up attempt on the same branch). A client that cancels the
request leaves the review open (``ided runs accept ID`` later). The review call's last update carries
the branch's review state in ``_meta["ided/review"]`` (open, accepted, rejected, rolled_back), live
and in a ``session/load`` replay (``daemon.acp.review_replay``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from acp import start_tool_call, tool_diff_content, update_tool_call
from acp.schema import (
    FileEditToolCallContent,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
)
from pydantic import ValidationError

from daemon.acp.permission import chosen
from daemon.core.review_models import AcceptSelection, ChangeSet, ConflictReport, ReviewState
from daemon.errors import ConflictError
from daemon.service.runs.service import RunService

__all__ = [
    "ACCEPT",
    "FEEDBACK",
    "FEEDBACK_META",
    "KEEP_META",
    "REJECT",
    "REVIEW_META",
    "ReviewAnswer",
    "ReviewStatus",
    "ReviewVerdict",
    "accepted_text",
    "apply_answer",
    "permission_options",
    "rejected_text",
    "review_call",
    "review_call_id",
    "review_finished",
    "review_outcome",
]


ACCEPT = "accept"
REJECT = "reject"
FEEDBACK = "feedback"
FEEDBACK_META = "ided/feedback"
REVIEW_META = "ided/review"
KEEP_META = "ided/keep"


@dataclass(frozen=True, kw_only=True)
class ReviewAnswer:
    choice: Literal["accept", "reject", "feedback", "open"]
    feedback: str | None = None
    """The feedback text when the client sent it with the answer (``_meta["ided/feedback"]``)."""
    keep: AcceptSelection | None = None
    """What the reviewer kept (``_meta["ided/keep"]`` on accept); None: the whole run."""
    problem: str | None = None
    """Why the answer's ``_meta`` could not be read (nothing is applied)."""


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


def review_outcome(response: RequestPermissionResponse, root: Path) -> ReviewAnswer:
    """The client's answer; ``root``: where the review's absolute paths start (``_meta["ided/keep"]`` paths)."""
    option, meta = chosen(response)
    if option is None:
        return ReviewAnswer(choice="open")
    feedback = meta.get(FEEDBACK_META)
    text = feedback.strip() if isinstance(feedback, str) and feedback.strip() else None
    if option == ACCEPT:
        if meta.get(KEEP_META) is None:
            return ReviewAnswer(choice="accept")
        try:
            return ReviewAnswer(choice="accept", keep=_kept(meta[KEEP_META], root))
        except (ValidationError, ValueError) as exc:
            return ReviewAnswer(choice="accept", problem=f"_meta[{KEEP_META!r}] is not a list of kept files: {exc}")
    if option == FEEDBACK:
        return ReviewAnswer(choice="feedback", feedback=text)
    return ReviewAnswer(choice="reject")


def _kept(raw: Any, root: Path) -> AcceptSelection:
    """``[{"path", "hunks"?, "text"?}]`` with paths absolute (under ``root``, as the review's diffs) or relative."""
    selection = AcceptSelection.model_validate({"files": raw})
    files = [
        f.model_copy(update={"path": Path(f.path).relative_to(root).as_posix()}) if Path(f.path).is_absolute() else f
        for f in selection.files
    ]
    return AcceptSelection(files=tuple(files))


ReviewStatus = Literal["pending", "completed", "failed"]


@dataclass(frozen=True, kw_only=True)
class ReviewVerdict:
    """How a review ended: the review call's final status, the text shown, the branch's review state."""

    status: ReviewStatus
    text: str
    state: ReviewState


def accepted_text(run_id: str, branch: str, commits: tuple[str, ...]) -> str:
    shas = ", ".join(c[:10] for c in commits)
    return f"Accepted: {len(commits)} commit(s) on {branch} ({shas}); /rollback {run_id} undoes it."


def rejected_text(branch: str) -> str:
    return f"Rejected: your files are untouched; {branch} is kept until cleanup."


async def apply_answer(review: RunService, run_id: str, answer: ReviewAnswer) -> ReviewVerdict:
    """Accept or reject through the review service: the review call's final status and what happened.

    ``completed``: applied; ``failed``: not applied (rejected, a conflict, feedback asked for);
    ``pending``: left open.
    """
    if answer.choice == "accept":
        if answer.problem is not None:
            return ReviewVerdict(status="failed", text=f"Not applied: {answer.problem}", state="open")
        try:
            result = await review.accept(run_id, selection=answer.keep)
        except ConflictError as exc:
            report = exc.report
            why = report.describe() if isinstance(report, ConflictReport) else exc.message
            text = f"Not applied: {why}\nBoth sides are intact; the run's branch is kept."
            return ReviewVerdict(status="failed", text=text, state="open")
        text = accepted_text(run_id, result.branch, result.commits)
        if result.reviewed_commit is not None:
            partial, dropped = ", ".join(result.partial) or "none", ", ".join(result.dropped) or "none"
            text += f" Kept in part: {partial}; dropped: {dropped}."
        return ReviewVerdict(status="completed", text=text, state="accepted")
    if answer.choice == "reject":
        branch = await review.reject(run_id)
        return ReviewVerdict(status="failed", text=rejected_text(branch.branch), state="rejected")
    if answer.choice == "feedback":
        text = "Feedback requested: the run's last editing stage tries again with it."
        return ReviewVerdict(status="failed", text=text, state="open")
    text = f"Review left open: ided runs accept {run_id} (or reject) decides it later."
    return ReviewVerdict(status="pending", text=text, state="open")


def review_finished(
    call_id: str, status: ReviewStatus, text: str, state: ReviewState | None = "open"
) -> ToolCallProgress:
    """The review call's final state; its diffs stay as they were. ``_meta["ided/review"]``: the branch's
    review state (left out when it is not known)."""
    update = update_tool_call(call_id, status=status, raw_output=text)
    return update if state is None else update.model_copy(update={"field_meta": {REVIEW_META: state}})
