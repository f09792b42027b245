"""The workflows a workspace offers, for fronts that list, show and validate them (``ided workflows``).

Names the catalog and the loader's checks (``WorkflowCatalog``, ``load_workflow_file``, ``workflow_dirs``,
``WorkflowProblem``, ``WorkflowValidationError``, the schema) for the fronts, and adds ``workflow_plan``
(the plan a workflow gives a request under the deterministic rules, every stage when no request is
given) and ``plan_mermaid`` (a plan's compiled graph; it loads LangGraph only when called); names the plan
graph the editors draw (``plan_routes``, ``extra_nodes``, ``NODE_NAMES``: the routes of the description the
compiled graph is built from, without LangGraph).
"""

from __future__ import annotations

from daemon.core.run_models import ExecutionPlan
from daemon.core.selection_models import DecisionSource, StageDecision
from daemon.core.workflow_schema import Workflow, workflow_json_schema
from daemon.orchestration.deterministic_selector import decide_stages
from daemon.orchestration.graph_routes import NODE_NAMES, PlanRoute, extra_nodes, plan_routes
from daemon.orchestration.plan import assemble_plan
from daemon.orchestration.workflow_loader import (
    WorkflowCatalog,
    WorkflowProblem,
    WorkflowValidationError,
    load_workflow_file,
    workflow_dirs,
)

__all__ = [
    "NODE_NAMES",
    "PlanRoute",
    "Workflow",
    "WorkflowCatalog",
    "WorkflowProblem",
    "WorkflowValidationError",
    "extra_nodes",
    "load_workflow_file",
    "plan_mermaid",
    "plan_routes",
    "workflow_dirs",
    "workflow_json_schema",
    "workflow_plan",
]


def workflow_plan(workflow: Workflow, request: str | None) -> ExecutionPlan:
    """The plan of ``workflow``: its optional stages decided for ``request`` by the deterministic rules,
    or every stage included ("shown in full") when there is no request."""
    if request is not None:
        decisions = decide_stages(workflow, request, None)
    else:
        decisions = tuple(
            StageDecision(stage_id=s.stage_id, include=True, reason="shown in full", source=DecisionSource.RULE)
            for s in workflow.stages
        )
    return assemble_plan(workflow, decisions, request or "(no request)")


def plan_mermaid(plan: ExecutionPlan) -> str:
    """The plan's compiled LangGraph graph as Mermaid."""
    from daemon.orchestration.graph_builder import graph_mermaid  # LangGraph only where a graph is drawn

    return graph_mermaid(plan)
