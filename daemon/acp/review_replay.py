"""A past run's review in a ``session/load`` replay: the review call as the live flow sent it, then its state now.

For a run that ended with changes, the replay sends the same ``edit`` tool call as the live review
(``daemon.acp.review.review_call``: a ``diff`` per file, ``rawInput.run_id``, branch, commits, files),
built from the run branch's change set as it is now (read through the run service's ``peek``, so a
replay logs no ``review`` decision), followed by one ``tool_call_update`` with the branch's review
state (``_meta["ided/review"]``):

- open → ``pending``; the agent then offers the permission request again (``RunDriver.reoffer``);
- accepted → ``completed`` with the accept text (commits on the user's branch, ``/rollback``);
- rejected → ``failed`` with the reject text;
- rolled_back → ``completed``, "… rolled back by <revert commits>".

A run whose branch was removed by cleanup (or cannot be read) gets a message instead of a diff.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from acp import update_agent_message_text
from acp.schema import ToolCallStart

from daemon.acp.review import ReviewStatus, accepted_text, rejected_text, review_call, review_finished
from daemon.acp.run_updates import SessionUpdate
from daemon.core.review_models import RunBranch
from daemon.core.run_models import RunRecord
from daemon.errors import DaemonError
from daemon.service.runs.service import RunService

__all__ = ["ReplayedReview", "final_state", "replay_review"]

logger = logging.getLogger(__name__)

OPEN_TEXT = "Review open: answer the permission request (accept, reject or feedback)."


@dataclass(frozen=True, kw_only=True)
class ReplayedReview:
    updates: list[SessionUpdate] = field(default_factory=lambda: list[SessionUpdate]())
    open_call: ToolCallStart | None = None
    """The review call when the review is still open: the client may still answer it."""


def _shas(commits: tuple[str, ...]) -> str:
    return ", ".join(c[:10] for c in commits) or "no commits"


def _rolled_back_text(branch: RunBranch) -> str:
    reverts = branch.revert_commits
    return (
        f"Accepted onto {branch.accepted_onto or 'your branch'} ({_shas(branch.accepted_commits)}), "
        f"then rolled back by {len(reverts)} revert commit(s) ({_shas(reverts)})."
    )


def final_state(branch: RunBranch) -> tuple[ReviewStatus, str]:
    """The review call's status and text for the branch's review state now."""
    if branch.review == "accepted":
        return "completed", accepted_text(branch.run_id, branch.accepted_onto or "your branch", branch.accepted_commits)
    if branch.review == "rejected":
        return "failed", rejected_text(branch.branch)
    if branch.review == "rolled_back":
        return "completed", _rolled_back_text(branch)
    return "pending", OPEN_TEXT


def _message(text: str) -> ReplayedReview:
    return ReplayedReview(updates=[update_agent_message_text(text if text.endswith("\n") else text + "\n")])


def _gone_text(branch: RunBranch, record: RunRecord, why: str) -> str:
    files = [f.path for f in record.changes.files] if record.changes is not None else []
    listed = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
    state = {
        "open": "its review was never decided",
        "accepted": f"it was accepted ({_shas(branch.accepted_commits)}; /rollback {branch.run_id} still undoes it)",
        "rejected": "it was rejected",
        "rolled_back": f"it was accepted, then rolled back ({_shas(branch.revert_commits)})",
    }[branch.review]
    return f"Run {branch.run_id} changed {len(files)} file(s) ({listed}); {state}. Its diff cannot be shown: {why}."


async def replay_review(review: RunService, record: RunRecord, root: Path, call_id: str) -> ReplayedReview:
    """The review of ``record`` (a finished run with changes) as a loaded session shows it; never raises
    for a missing branch or record (a message says what is missing)."""
    run_id = record.run_id
    try:
        branch = await review.branch(run_id)
    except DaemonError as exc:
        logger.warning("replaying run %s: no branch record: %s", run_id, exc)
        return _message(f"The review of run {run_id} cannot be shown: {exc.message}")
    if branch.cleaned_at is not None:
        why = f"its branch {branch.branch} was removed by cleanup on {branch.cleaned_at:%Y-%m-%d}"
        return _message(_gone_text(branch, record, why))
    try:
        changes = await review.peek(run_id)
    except DaemonError as exc:  # the branch deleted by hand, the folder no longer a repository
        logger.warning("replaying run %s: no change set: %s", run_id, exc)
        return _message(_gone_text(branch, record, exc.message))
    call = review_call(changes, root, call_id)
    status, text = final_state(branch)
    return ReplayedReview(
        updates=[call, review_finished(call_id, status, text, branch.review)],
        open_call=call if branch.review == "open" else None,
    )
