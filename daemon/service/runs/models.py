"""The vocabulary of runs that fronts speak: records, progress events, plans, change sets, conflicts.

The run service (``daemon.service.runs.port``) answers in these models; a front (CLI, ACP, LSP) imports
them from here, never from ``daemon.orchestration`` or ``daemon.vcs``, so the fronts reach the
pipeline only through the service. They are defined where the pipeline and version control build
them; this module only names them for the fronts. It stays light (no LangGraph, LangChain or git):
the command line imports it for every command.
"""

from __future__ import annotations

from daemon.orchestration.plan import ExecutionPlan
from daemon.orchestration.progress import ExecutionProgress, PlanEntry, ProgressKind
from daemon.orchestration.routing import ADAPTIVE_NODE
from daemon.orchestration.run_store import DecisionEntry, RunMode, RunRecord, RunStatus
from daemon.orchestration.selection_models import Selection
from daemon.orchestration.state import Attachment
from daemon.orchestration.workflow_schema import Workflow
from daemon.vcs.models import (
    AcceptResult,
    AcceptSelection,
    ChangeSet,
    CleanupReport,
    ConflictReport,
    KeptFile,
    ReviewState,
    RollbackResult,
    RunBranch,
)

__all__ = [
    "ADAPTIVE_NODE",
    "AcceptResult",
    "AcceptSelection",
    "Attachment",
    "ChangeSet",
    "CleanupReport",
    "ConflictReport",
    "DecisionEntry",
    "ExecutionPlan",
    "ExecutionProgress",
    "KeptFile",
    "PlanEntry",
    "ProgressKind",
    "ReviewState",
    "RollbackResult",
    "RunBranch",
    "RunMode",
    "RunRecord",
    "RunStatus",
    "Selection",
    "Workflow",
]
