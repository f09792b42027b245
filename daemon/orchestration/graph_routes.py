"""The pipeline graph's routes as data, without LangGraph: the one description both drawings come from.

``route_outcomes`` says, for a node the router leaves (a stage, ``adaptive_retrieval``, the ``reflector``),
each node it may choose and what leads there (``success``, ``failure``, ``retry``, ``limit``; from the
reflector ``accept <stage>`` and ``send back``); ``graph_node`` puts the ``evaluator`` in front of ``done``
when the workflow enables it (its one edge, ``scored``, goes on to ``done``). The compiled graph
(``graph_builder``: its conditional edges' labels and path maps, so ``ided workflows show --mermaid`` and a
dry run's picture) is built from them, and so is the plan graph the editors draw (``plan_routes``,
``extra_nodes``: ``ided/run/start``'s ``graph`` over LSP).
"""

from __future__ import annotations

from dataclasses import dataclass

from daemon.core.run_models import ABORT_NODE, ADAPTIVE_NODE, DONE_NODE, ExecutionPlan
from daemon.core.workflow_schema import ABORT, DONE, EVALUATOR_NODE, REFLECTOR_NODE
from daemon.orchestration.routing import failure_targets, node_for, possible_targets, success_targets

__all__ = [
    "NODE_NAMES",
    "SCORED",
    "PlanRoute",
    "edge_labels",
    "extra_nodes",
    "graph_node",
    "plan_routes",
    "route_outcomes",
]

NODE_NAMES = {
    ADAPTIVE_NODE: "Adaptive retrieval",
    REFLECTOR_NODE: "Reflector",
    EVALUATOR_NODE: "Evaluator",
    DONE_NODE: "Done",
    ABORT_NODE: "Abort",
}
"""What the graph's nodes other than the stages are called where a person reads them."""

SCORED = "scored"
"""The evaluator's one edge, to ``done``."""


def _stage_outcomes(plan: ExecutionPlan, source: str) -> dict[str, list[str]]:
    """What leads from stage ``source`` to each node (a reflected stage's success goes to the reflector)."""
    route = plan.routing[source]
    reflected = source in plan.reflected_stages
    outcomes: dict[str, list[str]] = {}
    sides = [("failure", node_for(route.on_failure), failure_targets(plan, source))]
    if not reflected:
        sides.insert(0, ("success", node_for(route.on_success), success_targets(plan, source)))
    for word, direct, targets in sides:
        for target in targets:
            said = outcomes.setdefault(target, [])
            if target == ADAPTIVE_NODE:
                if "retry" not in said:
                    said.append("retry")
            elif target == direct:
                said.append(word)
    if reflected:
        outcomes[REFLECTOR_NODE] = ["success"]
    return {target: words or ["limit"] for target, words in outcomes.items()}


def _reflector_outcomes(plan: ExecutionPlan) -> dict[str, list[str]]:
    """What leads from the reflector to each node: accept (the stage's success route, or a limit's redirect), or
    send back (the stage again)."""
    outcomes: dict[str, list[str]] = {}
    for stage_id in plan.reflected_stages:
        direct = node_for(plan.routing[stage_id].on_success)
        for target in success_targets(plan, stage_id):
            outcomes.setdefault(target, []).append(f"accept {stage_id}" if target == direct else "limit")
        outcomes.setdefault(stage_id, []).append("send back")
    return {target: list(dict.fromkeys(words)) for target, words in outcomes.items()}


def route_outcomes(plan: ExecutionPlan, source: str) -> dict[str, list[str]]:
    """Each node the router after ``source`` may choose, with what leads there: ``success``, ``failure``,
    ``retry`` (a failure through adaptive retrieval, and from it to the retry target), ``limit`` (a redirect
    when the target used up its ``max_attempts``, or ``pipeline.max_iterations``), and with a reflector
    ``success`` into it, ``accept <stage>`` and ``send back`` out of it. The nodes are the router's choices:
    ``done`` stays ``done`` (``graph_node`` says where its edge is drawn to)."""
    if source == ADAPTIVE_NODE:
        retries = {route.retry for route in plan.routing.values()}
        return {target: ["retry"] if target in retries else ["limit"] for target in possible_targets(plan, source)}
    if source == REFLECTOR_NODE:
        return _reflector_outcomes(plan)
    return _stage_outcomes(plan, source)


def edge_labels(plan: ExecutionPlan, source: str) -> dict[str, str]:
    """``route_outcomes`` as one label per node (outcomes that lead to the same node joined: ``success /
    failure``; a label two nodes share names its node: ``retry: fix``). They label the graph's edges."""
    labels = {target: " / ".join(words) for target, words in route_outcomes(plan, source).items()}
    shared = {label for label in labels.values() if list(labels.values()).count(label) > 1}
    return {target: f"{label}: {target}" if label in shared else label for target, label in labels.items()}


def graph_node(plan: ExecutionPlan, node: str) -> str:
    """The node an edge the router chose ``node`` along is drawn to: with an evaluator, the edges into ``done``
    go through it."""
    return EVALUATOR_NODE if plan.evaluation.enabled and node == DONE_NODE else node


def extra_nodes(plan: ExecutionPlan) -> list[str]:
    """The nodes the workflow adds to its stages: the reflector when a planned stage is reflected, the
    evaluator when it is on."""
    nodes = [REFLECTOR_NODE] if plan.reflected_stages else []
    return [*nodes, EVALUATOR_NODE] if plan.evaluation.enabled else nodes


@dataclass(frozen=True, slots=True)
class PlanRoute:
    """An edge of the plan graph: after ``source`` ends with ``outcome``, the run goes to ``target``."""

    source: str
    target: str
    outcome: str


def _spelled(node: str) -> str:
    """A node in the workflow's spelling (``DONE``, ``ABORT``)."""
    return {DONE_NODE: DONE, ABORT_NODE: ABORT}.get(node, node)


def plan_routes(plan: ExecutionPlan) -> list[PlanRoute]:
    """The plan's routes as the editors draw them: each stage's ``success`` and ``failure`` route, and
    ``retry`` to the stage a failure retries after more retrieval when that is another stage (adaptive
    retrieval and the limits' redirects are not drawn); with a reflector and an evaluator, their edges as the
    pipeline's graph has them (``route_outcomes``, ``graph_node``): a reflected stage's ``success`` into the
    reflector, ``accept <stage>``, ``send back`` and ``limit`` out of it, every edge into ``DONE`` through the
    evaluator and ``scored`` from it to ``DONE``. Targets are stages, ``reflector``, ``evaluator``, ``DONE``
    or ``ABORT``."""
    routes: list[PlanRoute] = []

    def add(source: str, target: str, outcome: str) -> None:
        routes.append(PlanRoute(source=source, target=_spelled(graph_node(plan, node_for(target))), outcome=outcome))

    for stage in plan.stages:
        route = plan.routing[stage.stage_id]
        if stage.stage_id in plan.reflected_stages:
            for word in route_outcomes(plan, stage.stage_id)[REFLECTOR_NODE]:
                add(stage.stage_id, REFLECTOR_NODE, word)
        else:
            add(stage.stage_id, route.on_success, "success")
        add(stage.stage_id, route.on_failure, "failure")
        if route.retry != stage.stage_id:
            add(stage.stage_id, route.retry, "retry")
    if plan.reflected_stages:
        for target, words in route_outcomes(plan, REFLECTOR_NODE).items():
            for word in words:
                add(REFLECTOR_NODE, target, word)
    if plan.evaluation.enabled:
        routes.append(PlanRoute(source=EVALUATOR_NODE, target=DONE, outcome=SCORED))
    return routes
