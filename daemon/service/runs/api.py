"""The ``runs/*`` methods' params and results: the ``RunService`` port spoken over the daemon socket.

The names are in ``daemon.service.daemon.api.Methods`` (``RUNS_*``); ``RUN_PARAMS`` gives each method's params
and ``RUN_CHANGES`` those that change something (sent once, never again). The daemon serves them from one
``LocalRunService`` (``daemon.service.runs.host``); ``daemon.service.runs.remote.DaemonRunService`` calls
them. What a launch lends a run that cannot cross the socket (an editor's file reader, a client's tool
objects) travels as a ``LoanSpec`` (``loan``): the daemon's run calls back for it over the launching
connection (``daemon.service.runs.loans``).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import Field, TypeAdapter

from daemon.config import Config
from daemon.core.frozen_model import FrozenModel
from daemon.core.review_models import AcceptSelection
from daemon.core.run_models import Attachment, ExecutionPlan, RunMode
from daemon.errors import WorkspaceUntrusted
from daemon.service.runs.loans import LoanSpec
from daemon.service.runs.port import RunStart
from daemon.service.wire.api import Methods

if TYPE_CHECKING:
    from daemon.core.run_models import RunCommands

__all__ = [
    "RUN_CHANGES",
    "RUN_PARAMS",
    "CleanupParams",
    "MissingModelsParams",
    "NoParams",
    "RunAcceptParams",
    "RunFeedbackParams",
    "RunIdParams",
    "RunLaunchParams",
    "RunListParams",
    "RunStartParams",
    "RunTrust",
    "RunWaitParams",
    "commands_adapter",
    "dumped",
    "settings_digest",
]


@functools.cache
def commands_adapter() -> TypeAdapter[RunCommands | None]:
    """``runs/untrusted_commands``' result (a dataclass, so an adapter rather than a model); built on first
    use, as the agents' module loads LangChain."""
    from daemon.core.run_models import RunCommands

    return TypeAdapter(RunCommands | None)


def settings_digest(config: Config) -> str:
    """What a run depends on in ``config`` (pipeline, agents, runs, version control, retrieval) and in this
    process's environment (the API keys those settings name, each only as a hash), as a digest: a front
    hands its runs to the daemon only when the daemon's digest is its own, so a run never goes to a daemon
    that lacks the front's key (one an editor started before the key was exported) or holds another."""
    environ = os.environ
    sections: dict[str, Any] = {name: getattr(config, name).model_dump(mode="json") for name in _RUN_SECTIONS}
    sections["workspace"] = str(config.workspace_path)
    sections["state"] = str(config.state_path)
    sections["keys"] = {name: _hashed(environ.get(name)) for name in sorted(_key_variables(config))}
    return hashlib.sha256(json.dumps(sections, sort_keys=True).encode()).hexdigest()[:16]


def _key_variables(config: Config) -> set[str]:
    names = {m.api_key_env for m in config.pipeline.models.values()} | {config.retrieval.web_api_key_env}
    return {name for name in names if name}


def _hashed(value: str | None) -> str | None:
    return None if value is None else hashlib.sha256(value.encode()).hexdigest()


_RUN_SECTIONS = ("pipeline", "agents", "runs", "vcs", "retrieval")


class RunStartParams(FrozenModel):
    """``runs/prepare`` and ``runs/start``: a ``RunStart`` (and, to start, ``dry_run`` and ``trusted``)."""

    request: str = Field(min_length=1)
    workflow: str | None = None
    mode: RunMode = "code"
    include_uncommitted: bool | None = None
    attachments: tuple[Attachment, ...] = ()
    dry_run: bool = False
    trusted: bool | None = Field(
        default=None, description="Whether the repository's commands may run; None: the trust store's."
    )
    loan: LoanSpec | None = Field(default=None, description="What the launching front lends the run.")

    @classmethod
    def of(
        cls, run: RunStart, *, dry_run: bool = False, trusted: bool | None = None, loan: LoanSpec | None = None
    ) -> RunStartParams:
        return cls(**_start_fields(run), dry_run=dry_run, trusted=trusted, loan=loan)

    def run(self) -> RunStart:
        return RunStart(**_start_fields(self))


def _start_fields(source: RunStart | RunStartParams) -> dict[str, Any]:
    """The fields of a ``RunStart`` (every one of which ``RunStartParams`` has too), read from ``source``."""
    return {f.name: getattr(source, f.name) for f in dataclasses.fields(RunStart)}


class NoParams(FrozenModel):
    """``runs/trust`` and ``runs/is_repository`` take none."""


class RunIdParams(FrozenModel):
    run_id: str = Field(min_length=1)


class RunAcceptParams(RunIdParams):
    """``runs/accept``: the whole run, or (``selection``) what a reviewer kept of it."""

    selection: AcceptSelection | None = None


class RunLaunchParams(RunIdParams):
    """``runs/execute`` and ``runs/resume``."""

    trusted: bool | None = None


class RunFeedbackParams(RunLaunchParams):
    text: str = Field(min_length=1)
    loan: LoanSpec | None = None


class RunWaitParams(RunIdParams):
    wait_seconds: float | None = Field(default=None, ge=0)


class RunListParams(FrozenModel):
    limit: int = Field(default=50, ge=1, le=10_000)
    all_workspaces: bool = False


class CleanupParams(FrozenModel):
    older_than_days: int | None = Field(default=None, ge=0)


class MissingModelsParams(FrozenModel):
    plan: ExecutionPlan


class RunTrust(FrozenModel):
    """``runs/trust``: the workspace's trust facts the port's trust queries answer from."""

    refusal: str | None = Field(default=None, description="Why an editing run is refused now (None: it is not).")
    needs_trust: bool
    repository_commands: dict[str, tuple[str, str]]
    how_to_trust: str

    def refused(self) -> WorkspaceUntrusted | None:
        return None if self.refusal is None else WorkspaceUntrusted(self.refusal, how_to_trust=self.how_to_trust)


RUN_PARAMS: Mapping[str, type[FrozenModel]] = {
    Methods.RUNS_PREPARE: RunStartParams,
    Methods.RUNS_START: RunStartParams,
    Methods.RUNS_EXECUTE: RunLaunchParams,
    Methods.RUNS_RESUME: RunLaunchParams,
    Methods.RUNS_FEEDBACK: RunFeedbackParams,
    Methods.RUNS_CANCEL: RunIdParams,
    Methods.RUNS_GET: RunIdParams,
    Methods.RUNS_WAIT: RunWaitParams,
    Methods.RUNS_LIST: RunListParams,
    Methods.RUNS_DECISIONS: RunIdParams,
    Methods.RUNS_EVENTS: RunIdParams,
    Methods.RUNS_MISSING_MODELS: MissingModelsParams,
    Methods.RUNS_UNTRUSTED_COMMANDS: RunIdParams,
    Methods.RUNS_TRUST: NoParams,
    Methods.RUNS_DIFF: RunIdParams,
    Methods.RUNS_ACCEPT: RunAcceptParams,
    Methods.RUNS_REJECT: RunIdParams,
    Methods.RUNS_ROLLBACK: RunIdParams,
    Methods.RUNS_CLEANUP: CleanupParams,
    Methods.RUNS_BRANCH: RunIdParams,
    Methods.RUNS_PEEK: RunIdParams,
    Methods.RUNS_IS_REPOSITORY: NoParams,
}
"""Each ``runs/*`` method (but ``runs/subscribe``) and its params: the daemon validates with it."""

RUN_CHANGES = frozenset(
    {
        Methods.RUNS_PREPARE,
        Methods.RUNS_START,
        Methods.RUNS_EXECUTE,
        Methods.RUNS_RESUME,
        Methods.RUNS_FEEDBACK,
        Methods.RUNS_CANCEL,
        Methods.RUNS_ACCEPT,
        Methods.RUNS_REJECT,
        Methods.RUNS_ROLLBACK,
        Methods.RUNS_CLEANUP,
    }
)
"""The ``runs/*`` methods that change something: a client never sends one twice (the others it may send
again over a fresh connection)."""


def dumped(value: Any) -> Any:
    """``runs/untrusted_commands``' answer on the wire."""
    return commands_adapter().dump_python(value, mode="json")
