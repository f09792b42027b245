"""Routing decisions of the state machine, as pure functions of the plan and the counters.

After a stage (``route_after_stage``):

- success -> ``next_stage_on_success``;
- failure, adaptive retrieval enabled, the stage's enrichment attempts below
  ``max_enrichment_attempts`` (2 by default) and its attempts below ``max_attempts`` ->
  ``adaptive_retrieval``, which then retries the stage's retry target (``route_after_enrichment``);
- failure otherwise (enrichment limit reached, past ``max_attempts``, or adaptive retrieval off) ->
  ``next_stage_on_failure`` (``ABORT`` when the workflow gives none).

Entering a stage that already ran ``max_attempts`` times is refused: its own
``next_stage_on_failure`` applies instead (this is what bounds routing loops). Past
``pipeline.max_iterations`` stage runs the run aborts. Each decision carries the condition evaluated,
in words, for the decision log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from daemon.core.run_models import ABORT_NODE, ADAPTIVE_NODE, DONE_NODE, ExecutionPlan, RouteDecision, RouteOutcome
from daemon.core.workflow_schema import ABORT, DONE, FailureAggregation

__all__ = [
    "aggregate_failures",
    "failure_targets",
    "node_for",
    "possible_targets",
    "route_after_enrichment",
    "route_after_stage",
    "route_entry",
    "route_values",
    "success_targets",
]


def node_for(target: str) -> str:
    """Graph node of a routing target."""
    if target == DONE:
        return DONE_NODE
    if target == ABORT:
        return ABORT_NODE
    return target


def aggregate_failures(rule: FailureAggregation, failures: Sequence[bool]) -> bool:
    """One failed/succeeded boolean for a stage's parallel agents."""
    if not failures:
        return True
    failed = sum(failures)
    if rule is FailureAggregation.ANY_FAILS:
        return failed > 0
    if rule is FailureAggregation.ALL_FAIL:
        return failed == len(failures)
    return failed * 2 > len(failures)


def _guard(
    plan: ExecutionPlan, node: str, attempts: Mapping[str, int], iterations: int, max_iterations: int
) -> tuple[str, list[str]]:
    """Apply the max_attempts and iteration limits to entering ``node``; returns the node and notes."""
    notes: list[str] = []
    seen: set[str] = set()
    while node in plan.routing:
        if iterations >= max_iterations:
            notes.append(f"iterations={iterations} reached pipeline.max_iterations={max_iterations}")
            return ABORT_NODE, notes
        limit = plan.stage(node).max_attempts
        done = attempts.get(node, 0)
        if limit is None or done < limit:
            return node, notes
        if node in seen:
            notes.append(f"redirects lead back to the exhausted stage {node}")
            return ABORT_NODE, notes
        seen.add(node)
        nxt = node_for(plan.routing[node].on_failure)
        notes.append(f"attempts[{node}]={done} reached max_attempts={limit}: its next_stage_on_failure -> {nxt}")
        node = nxt
    return node, notes


def _with_notes(condition: str, notes: list[str]) -> str:
    return condition if not notes else condition + "; " + "; ".join(notes)


def route_values(routes: Sequence[RouteDecision], decision: RouteDecision) -> dict[str, object]:
    """The state a routing decision leaves (after ``routes``, the decisions so far): the next node, the route
    recorded, the abort reason if it aborts."""
    return {
        "next_node": decision.target,
        "routes": [*routes, decision],
        "abort_reason": decision.condition if decision.target == ABORT_NODE else None,
    }


def route_entry(plan: ExecutionPlan) -> RouteDecision:
    target = node_for(plan.entry)
    return RouteDecision(source="__start__", target=target, outcome=RouteOutcome.ENTRY, condition="entry stage")


def route_after_stage(
    plan: ExecutionPlan,
    *,
    stage_id: str,
    failed: bool,
    attempts: Mapping[str, int],
    enrichments: Mapping[str, int],
    iterations: int,
    max_iterations: int,
) -> RouteDecision:
    """Where to go after ``stage_id`` ran (``attempts`` already counts this run)."""
    route = plan.routing[stage_id]
    if not failed:
        node, notes = _guard(plan, node_for(route.on_success), attempts, iterations, max_iterations)
        return RouteDecision(
            source=stage_id,
            target=node,
            outcome=RouteOutcome.SUCCESS,
            condition=_with_notes("failed=false -> next_stage_on_success", notes),
            iteration=iterations,
        )
    adaptive = plan.retrieval_strategy.adaptive_retrieval
    used = enrichments.get(stage_id, 0)
    ran = attempts.get(stage_id, 0)
    limit = plan.stage(stage_id).max_attempts
    below_attempts = limit is None or ran < limit
    attempts_term = "(no max_attempts)" if limit is None else f"{'<' if below_attempts else '>='} max_attempts={limit}"
    relation = "<" if used < adaptive.max_enrichment_attempts else ">="
    terms = [
        "failed=true",
        f"adaptive_retrieval.enabled={str(adaptive.enabled).lower()}",
        f"enrichment_attempts[{stage_id}]={used} {relation} {adaptive.max_enrichment_attempts}",
        f"attempts[{stage_id}]={ran} {attempts_term}",
    ]
    if adaptive.enabled and used < adaptive.max_enrichment_attempts and below_attempts:
        return RouteDecision(
            source=stage_id,
            target=ADAPTIVE_NODE,
            outcome=RouteOutcome.ENRICH,
            condition=" and ".join(terms) + f" -> adaptive_retrieval, then retry {route.retry}",
            retry_stage=route.retry,
            iteration=iterations,
        )
    node, notes = _guard(plan, node_for(route.on_failure), attempts, iterations, max_iterations)
    return RouteDecision(
        source=stage_id,
        target=node,
        outcome=RouteOutcome.FAILURE,
        condition=_with_notes(" and ".join(terms) + " -> next_stage_on_failure", notes),
        iteration=iterations,
    )


def route_after_enrichment(
    plan: ExecutionPlan,
    *,
    failed_stage: str,
    attempts: Mapping[str, int],
    iterations: int,
    max_iterations: int,
) -> RouteDecision:
    """Where ``adaptive_retrieval`` goes: the failed stage's retry target, within the limits."""
    retry = plan.routing[failed_stage].retry
    node, notes = _guard(plan, retry, attempts, iterations, max_iterations)
    return RouteDecision(
        source=ADAPTIVE_NODE,
        target=node,
        outcome=RouteOutcome.RETRY,
        condition=_with_notes(f"context enriched for {failed_stage} -> retry {retry}", notes),
        retry_stage=retry,
        iteration=iterations,
    )


def _closure(plan: ExecutionPlan, start: str) -> set[str]:
    out = {start, ABORT_NODE}
    pending = [start]
    while pending:
        node = pending.pop()
        if node in plan.routing and plan.stage(node).max_attempts is not None:
            nxt = node_for(plan.routing[node].on_failure)
            if nxt not in out:
                out.add(nxt)
                pending.append(nxt)
    return out


def _ordered(plan: ExecutionPlan, targets: set[str]) -> list[str]:
    order = {sid: i for i, sid in enumerate(plan.stage_ids)}
    return sorted(targets, key=lambda n: (order.get(n, len(order)), n))


def success_targets(plan: ExecutionPlan, stage_id: str) -> list[str]:
    """The nodes a success of ``stage_id`` may lead to (its next stage, or where a limit redirects)."""
    return _ordered(plan, _closure(plan, node_for(plan.routing[stage_id].on_success)))


def failure_targets(plan: ExecutionPlan, stage_id: str) -> list[str]:
    """The nodes a failure of ``stage_id`` may lead to (adaptive retrieval, its failure route, redirects)."""
    targets = _closure(plan, node_for(plan.routing[stage_id].on_failure))
    adaptive = plan.retrieval_strategy.adaptive_retrieval
    if adaptive.enabled and adaptive.max_enrichment_attempts > 0:
        targets.add(ADAPTIVE_NODE)
    return _ordered(plan, targets)


def possible_targets(plan: ExecutionPlan, source: str) -> list[str]:
    """Every node the router after ``source`` may choose (for the graph's conditional edges)."""
    targets: set[str] = set()
    if source == ADAPTIVE_NODE:
        for route in plan.routing.values():
            targets |= _closure(plan, route.retry)
    elif source == "__start__":
        targets |= _closure(plan, node_for(plan.entry))
    else:
        targets |= {*success_targets(plan, source), *failure_targets(plan, source)}
    return _ordered(plan, targets)
