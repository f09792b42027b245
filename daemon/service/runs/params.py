"""The params of the run operations, and what the trust and detail operations answer.

Each params class is a frozen pydantic dataclass: its constructor is the typed client's method signature
(``runs.accept(run_id, selection=...)``; fields after ``KW_ONLY`` are keyword-only), its JSON is the
``runs/<name>`` params on the daemon's socket, and unknown fields are refused there. ``RunStart`` is a
run to start, in the user's words. A lending launch carries a ``RunLoan`` (``daemon.service.runs.loans``:
an editor's file reader, a client's tools) as ``loan`` in this process; the daemon transport sends what
it is (``lent``, a ``LoanSpec``) instead.
"""

from __future__ import annotations

from dataclasses import KW_ONLY

from pydantic import ConfigDict, Field, InstanceOf
from pydantic.dataclasses import dataclass

from daemon.core.frozen_model import FrozenModel
from daemon.core.review_models import AcceptSelection
from daemon.core.run_models import Attachment, DecisionEntry, ExecutionPlan, ExecutionProgress, RunMode, RunRecord
from daemon.errors import WorkspaceUntrusted
from daemon.service.runs.loans import LoanSpec, RunLoan

__all__ = [
    "AcceptParams",
    "CleanupParams",
    "FeedbackParams",
    "LaunchParams",
    "Lending",
    "ListParams",
    "NoParams",
    "PlanParams",
    "PrepareParams",
    "RunDetail",
    "RunIdParams",
    "RunStart",
    "RunTrust",
    "ShowParams",
    "StartParams",
    "WaitParams",
]

_STRICT = ConfigDict(extra="forbid")


@dataclass(frozen=True, kw_only=True, config=_STRICT)
class RunStart:
    """A run to start: the request in the user's words and how to run it."""

    request: str = Field(min_length=1)
    workflow: str | None = None
    """A workflow name; None lets the orchestrator choose."""
    mode: RunMode = "code"
    """``code`` edits on a run branch when the plan edits; ``ask`` is read-only."""
    include_uncommitted: bool | None = None
    """The run's branch starts from HEAD plus the user's uncommitted changes (None: the configuration's)."""
    attachments: tuple[Attachment, ...] = ()


@dataclass(frozen=True, config=_STRICT)
class NoParams:
    """An operation that takes none."""


@dataclass(frozen=True, config=_STRICT)
class RunIdParams:
    run_id: str = Field(min_length=1)


@dataclass(frozen=True, config=_STRICT)
class PrepareParams:
    """Select a workflow and plan; nothing executes."""

    run: RunStart


@dataclass(frozen=True, config=_STRICT)
class StartParams:
    """Prepare and launch ``run`` (``dry_run``: select and plan only)."""

    run: RunStart
    _: KW_ONLY
    dry_run: bool = False
    trusted: bool | None = None
    """Whether the repository's commands may run; None: as the user's trust store says."""
    loan: InstanceOf[RunLoan] | None = Field(default=None, exclude=True)
    lent: LoanSpec | None = None
    """What ``loan`` is, as the daemon transport sends it (a front passes ``loan``)."""


@dataclass(frozen=True, config=_STRICT)
class LaunchParams:
    """Launch a planned run, or continue an interrupted one from its last checkpoint."""

    run_id: str = Field(min_length=1)
    _: KW_ONLY
    trusted: bool | None = None


@dataclass(frozen=True, config=_STRICT)
class FeedbackParams:
    """Answer a run's review feedback: a new attempt of its last editing stage on the same branch."""

    run_id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    _: KW_ONLY
    trusted: bool | None = None
    loan: InstanceOf[RunLoan] | None = Field(default=None, exclude=True)
    lent: LoanSpec | None = None


@dataclass(frozen=True, config=_STRICT)
class WaitParams:
    run_id: str = Field(min_length=1)
    _: KW_ONLY
    wait_seconds: float | None = Field(default=None, ge=0)
    """``TimeoutError`` when the run has not ended by then (None: no bound)."""


@dataclass(frozen=True, config=_STRICT)
class ListParams:
    limit: int = Field(default=50, ge=1, le=10_000)
    _: KW_ONLY
    all_workspaces: bool = False


@dataclass(frozen=True, config=_STRICT)
class PlanParams:
    plan: ExecutionPlan


@dataclass(frozen=True, config=_STRICT)
class AcceptParams:
    """The whole run, or (``selection``) exactly what a reviewer kept of it."""

    run_id: str = Field(min_length=1)
    _: KW_ONLY
    selection: AcceptSelection | None = None


@dataclass(frozen=True, config=_STRICT)
class CleanupParams:
    _: KW_ONLY
    older_than_days: int | None = Field(default=None, ge=0)


@dataclass(frozen=True, config=_STRICT)
class ShowParams:
    run_id: str = Field(min_length=1)
    _: KW_ONLY
    events: bool = False
    """Also the run's progress events."""


class RunTrust(FrozenModel):
    """The workspace's trust facts: whether an editing run is refused now and how to trust the workspace."""

    refusal: str | None = Field(default=None, description="Why an editing run is refused now (None: it is not).")
    needs_trust: bool = Field(description="The repository defines commands that run only in a trusted workspace.")
    repository_commands: dict[str, tuple[str, str]] = Field(
        description="The commands the repository defines: name -> (command line, source file)."
    )
    how_to_trust: str = Field(description="The command that trusts the workspace.")

    def refused(self) -> WorkspaceUntrusted | None:
        return None if self.refusal is None else WorkspaceUntrusted(self.refusal, how_to_trust=self.how_to_trust)


class RunDetail(FrozenModel):
    """A run as ``ided runs show`` shows it, in one answer: its record, decision log and (when asked) events."""

    record: RunRecord
    decisions: tuple[DecisionEntry, ...]
    events: tuple[ExecutionProgress, ...] = ()


Lending = StartParams | FeedbackParams
"""The params of the launches that lend their run a ``RunLoan``."""
