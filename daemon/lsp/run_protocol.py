"""Wire types of the ``ided/run/*`` LSP methods: start and cancel runs, follow them, review their changes.

Same conventions as ``daemon.lsp.protocol``: attrs classes, snake_case attributes that travel as
camelCase, every field always sent. Importing this module adds the methods to the protocol's table.
"""

from __future__ import annotations

from typing import Any

import attrs

from daemon.lsp.protocol import LspMethods, extend_messages, notification_type, request_types, wire

__all__ = [
    "RunAcceptParams",
    "RunAcceptResult",
    "RunCommitItem",
    "RunDiffResult",
    "RunFeedbackParams",
    "RunFileItem",
    "RunGraph",
    "RunGraphEdge",
    "RunGraphNode",
    "RunGraphStage",
    "RunIdParams",
    "RunKeptFile",
    "RunProgressParams",
    "RunRejectResult",
    "RunRollbackResult",
    "RunStartParams",
    "RunStartResult",
    "RunStatusResult",
]


@wire
@attrs.frozen(kw_only=True)
class RunIdParams:
    run_id: str


@wire
@attrs.frozen(kw_only=True)
class RunKeptFile:
    """One file of the run's diff to keep: whole, some hunks (0-based, among its diff's ``@@`` headers), or a text."""

    path: str
    hunks: list[int] | None = None
    text: str | None = None


@wire
@attrs.frozen(kw_only=True)
class RunAcceptParams:
    """Accept a run: all of it, or (``keep``) only the files listed (whole, some hunks, or a text)."""

    run_id: str
    keep: list[RunKeptFile] | None = None


@wire
@attrs.frozen(kw_only=True)
class RunFeedbackParams:
    """Answer a run's review with ``text``: its last editing stage runs again on the same branch."""

    run_id: str
    text: str


@wire
@attrs.frozen(kw_only=True)
class RunStartParams:
    """Start a run of ``request`` (the orchestrator picks the workflow unless ``workflow`` names one).

    ``mode``: ``code`` (edits on a run branch, reviewed at the end) or ``ask`` (read-only).
    ``include_uncommitted``: the run branch starts from HEAD plus the user's uncommitted changes (unset:
    ``vcs.include_uncommitted``)."""

    request: str
    workflow: str | None = None
    mode: str = "code"
    dry_run: bool = False
    include_uncommitted: bool | None = None


@wire
@attrs.frozen(kw_only=True)
class RunGraphStage:
    """A stage of the plan: planned (``reason`` null) or skipped (``reason``: why)."""

    stage_id: str
    name: str
    reason: str | None = None


@wire
@attrs.frozen(kw_only=True)
class RunGraphNode:
    """A node the workflow adds to its stages: ``reflector`` (``reflection:``) or ``evaluator`` (``evaluation:``)."""

    node_id: str
    name: str


@wire
@attrs.frozen(kw_only=True)
class RunGraphEdge:
    """A route of the plan: after ``source`` ends with ``outcome`` (``success``, ``failure``, or ``retry``:
    the stage a retry after more retrieval runs again), the run goes to ``target`` (a planned stage, a node,
    ``DONE`` or ``ABORT``). A reflected stage's ``success`` goes to the ``reflector``, which leads on with
    ``accept <stage>``, ``send back`` or ``limit``; with an ``evaluator``, every route into ``DONE`` goes to it
    and it leads on to ``DONE`` with ``scored``."""

    source: str
    target: str
    outcome: str


@wire
@attrs.frozen(kw_only=True)
class RunGraph:
    """The plan as a graph: its first stage, its stages in order, the skipped ones, its routes, and the nodes the
    workflow adds (reflector, evaluator; empty unless it enables them)."""

    entry: str
    stages: list[RunGraphStage]
    skipped: list[RunGraphStage]
    edges: list[RunGraphEdge]
    nodes: list[RunGraphNode] = attrs.field(factory=list["RunGraphNode"])


@wire
@attrs.frozen(kw_only=True)
class RunStartResult:
    run_id: str
    status: str
    workflow: str | None
    stages: list[str]
    skipped: list[str]
    notes: list[str]
    graph: RunGraph | None = None


@wire
@attrs.frozen(kw_only=True)
class RunStatusResult:
    run_id: str
    status: str
    cancel_requested: bool


@wire
@attrs.frozen(kw_only=True)
class RunCommitItem:
    sha: str
    message: str
    stage_id: str | None
    attempt: int | None
    agents: list[str]


@wire
@attrs.frozen(kw_only=True)
class RunFileItem:
    """One changed file: ``uri`` is the file in the user's workspace the change would land on."""

    uri: str
    path: str
    status: str
    old_path: str | None
    old_text: str | None
    new_text: str | None
    diff: str
    added: int
    removed: int
    binary: bool


@wire
@attrs.frozen(kw_only=True)
class RunDiffResult:
    run_id: str
    branch: str
    review: str
    base_commit: str
    start_commit: str
    head_commit: str
    commits: list[RunCommitItem]
    files: list[RunFileItem]


@wire
@attrs.frozen(kw_only=True)
class RunAcceptResult:
    run_id: str
    branch: str
    commits: list[str]
    source_commits: list[str]
    files: list[str]
    head: str
    reviewed_commit: str | None = None
    partial: list[str] = attrs.field(factory=list[str])
    dropped: list[str] = attrs.field(factory=list[str])


@wire
@attrs.frozen(kw_only=True)
class RunRejectResult:
    run_id: str
    branch: str
    review: str


@wire
@attrs.frozen(kw_only=True)
class RunRollbackResult:
    run_id: str
    branch: str
    commits: list[str]
    reverted: list[str]
    files: list[str]
    head: str


@wire
@attrs.frozen(kw_only=True)
class RunProgressParams:
    """``ided/run/progress``: one progress event of a run started by this client (``event`` as the
    pipeline's ``langgraph_execution_progress`` message, snake_case keys as stored)."""

    run_id: str
    seq: int
    kind: str
    event: dict[str, Any]


def _request(name: str, method: str, params: type, result: type) -> tuple[type, type]:
    return request_types(name, method, params, result)


extend_messages(
    {
        LspMethods.RUN_START: _request("RunStart", LspMethods.RUN_START, RunStartParams, RunStartResult),
        LspMethods.RUN_CANCEL: _request("RunCancel", LspMethods.RUN_CANCEL, RunIdParams, RunStatusResult),
        LspMethods.RUN_DIFF: _request("RunDiff", LspMethods.RUN_DIFF, RunIdParams, RunDiffResult),
        LspMethods.RUN_ACCEPT: _request("RunAccept", LspMethods.RUN_ACCEPT, RunAcceptParams, RunAcceptResult),
        LspMethods.RUN_REJECT: _request("RunReject", LspMethods.RUN_REJECT, RunIdParams, RunRejectResult),
        LspMethods.RUN_ROLLBACK: _request("RunRollback", LspMethods.RUN_ROLLBACK, RunIdParams, RunRollbackResult),
        LspMethods.RUN_FEEDBACK: _request("RunFeedback", LspMethods.RUN_FEEDBACK, RunFeedbackParams, RunStartResult),
        LspMethods.RUN_PROGRESS: (
            notification_type("RunProgressNotification", LspMethods.RUN_PROGRESS, RunProgressParams),
            None,
        ),
    }
)
