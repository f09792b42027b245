"""Routing decisions and failure aggregation, as pure functions, plus the compiled graph's edges."""

from __future__ import annotations

import pytest

from daemon.core.run_models import ABORT_NODE, ADAPTIVE_NODE, DONE_NODE, ExecutionPlan, RouteOutcome
from daemon.core.selection_models import DecisionSource, StageDecision
from daemon.core.workflow_schema import EvaluationConfig, FailureAggregation, ReflectionConfig
from daemon.orchestration.graph_builder import edge_labels, graph_mermaid
from daemon.orchestration.plan import assemble_plan
from daemon.orchestration.routing import aggregate_failures, possible_targets, route_after_enrichment, route_after_stage
from tests.pipeline_support import builtin_catalog

CATALOG = builtin_catalog()


def feature_plan(*, adaptive: bool = True) -> ExecutionPlan:
    wf = CATALOG.get("feature_with_iterative_testing")
    if not adaptive:
        strategy = wf.retrieval_strategy_config
        off = strategy.adaptive_retrieval.model_copy(update={"enabled": False})
        wf = wf.model_copy(
            update={"retrieval_strategy_config": strategy.model_copy(update={"adaptive_retrieval": off})}
        )
    decisions = [
        StageDecision(stage_id=s.stage_id, include=True, reason="all", source=DecisionSource.RULE) for s in wf.stages
    ]
    return assemble_plan(wf, decisions, "Add a flag")


@pytest.mark.parametrize(
    ("rule", "failures", "failed"),
    [
        (FailureAggregation.ANY_FAILS, [False, False, False], False),
        (FailureAggregation.ANY_FAILS, [False, True, False], True),
        (FailureAggregation.ALL_FAIL, [True, True, False], False),
        (FailureAggregation.ALL_FAIL, [True, True, True], True),
        (FailureAggregation.MAJORITY_FAIL, [True, False, False], False),
        (FailureAggregation.MAJORITY_FAIL, [True, True, False], True),
        (FailureAggregation.MAJORITY_FAIL, [True, False], False),
        (FailureAggregation.MAJORITY_FAIL, [True, True], True),
        (FailureAggregation.ALL_FAIL, [], True),
    ],
)
def test_failure_aggregation_rules(rule: FailureAggregation, failures: list[bool], failed: bool) -> None:
    assert aggregate_failures(rule, failures) is failed


def test_success_goes_to_next_stage_on_success() -> None:
    decision = route_after_stage(
        feature_plan(),
        stage_id="implementation",
        failed=False,
        attempts={"implementation": 1},
        enrichments={},
        iterations=1,
        max_iterations=50,
    )
    assert (decision.target, decision.outcome) == ("test_writing", RouteOutcome.SUCCESS)
    assert decision.condition == "failed=false -> next_stage_on_success"


def test_failure_below_the_enrichment_limit_goes_to_adaptive_retrieval_with_the_retry_target() -> None:
    decision = route_after_stage(
        feature_plan(),
        stage_id="test_execution",
        failed=True,
        attempts={"test_execution": 2},
        enrichments={"test_execution": 1},
        iterations=5,
        max_iterations=50,
    )
    assert decision.target == ADAPTIVE_NODE and decision.retry_stage == "implementation"
    assert "enrichment_attempts[test_execution]=1 < 2" in decision.condition
    after = route_after_enrichment(
        feature_plan(), failed_stage="test_execution", attempts={"implementation": 2}, iterations=5, max_iterations=50
    )
    assert (after.target, after.outcome) == ("implementation", RouteOutcome.RETRY)


def test_failure_at_the_enrichment_limit_goes_to_next_stage_on_failure() -> None:
    decision = route_after_stage(
        feature_plan(),
        stage_id="test_execution",
        failed=True,
        attempts={"test_execution": 3},
        enrichments={"test_execution": 2},
        iterations=9,
        max_iterations=50,
    )
    assert (decision.target, decision.outcome) == ("code_review", RouteOutcome.FAILURE)
    assert "enrichment_attempts[test_execution]=2 >= 2" in decision.condition


def test_failure_past_max_attempts_skips_enrichment() -> None:
    decision = route_after_stage(
        feature_plan(),
        stage_id="code_review",
        failed=True,
        attempts={"code_review": 2},
        enrichments={"code_review": 1},
        iterations=9,
        max_iterations=50,
    )
    assert decision.target == ABORT_NODE
    assert "attempts[code_review]=2 >= max_attempts=2" in decision.condition


def test_with_adaptive_retrieval_off_a_failure_routes_straight_to_next_stage_on_failure() -> None:
    decision = route_after_stage(
        feature_plan(adaptive=False),
        stage_id="implementation",
        failed=True,
        attempts={"implementation": 1},
        enrichments={},
        iterations=1,
        max_iterations=50,
    )
    assert decision.target == ABORT_NODE and "adaptive_retrieval.enabled=false" in decision.condition


def test_entering_a_stage_that_used_up_max_attempts_takes_its_failure_route() -> None:
    after = route_after_enrichment(
        feature_plan(), failed_stage="code_review", attempts={"implementation": 4}, iterations=12, max_iterations=50
    )
    assert after.target == ABORT_NODE
    assert "attempts[implementation]=4 reached max_attempts=4" in after.condition


def test_the_iteration_limit_aborts_the_run() -> None:
    decision = route_after_stage(
        feature_plan(),
        stage_id="implementation",
        failed=False,
        attempts={"implementation": 1},
        enrichments={},
        iterations=50,
        max_iterations=50,
    )
    assert decision.target == ABORT_NODE and "pipeline.max_iterations=50" in decision.condition


def test_conditional_edges_list_every_possible_target() -> None:
    plan = feature_plan()
    assert possible_targets(plan, "test_execution") == ["code_review", ABORT_NODE, ADAPTIVE_NODE]
    assert possible_targets(plan, "documentation") == [ABORT_NODE, ADAPTIVE_NODE, DONE_NODE]
    assert "implementation" in possible_targets(plan, ADAPTIVE_NODE)


def test_mermaid_shows_stage_nodes_adaptive_retrieval_and_terminals() -> None:
    text = graph_mermaid(feature_plan())
    for node in ("requirements_analysis", "implementation", "test_execution", "adaptive_retrieval", "done", "abort"):
        assert f"\t{node}({node})" in text
    assert "test_execution -. &nbsp;retry&nbsp; .-> adaptive_retrieval;" in text
    assert "adaptive_retrieval -. &nbsp;retry: implementation&nbsp; .-> implementation;" in text
    assert "done --> __end__;" in text


def test_mermaid_edges_say_whether_success_failure_retry_or_a_limit_leads_along_them() -> None:
    plan = feature_plan()
    assert edge_labels(plan, "implementation") == {
        "test_writing": "success",
        ABORT_NODE: "failure",
        ADAPTIVE_NODE: "retry",
    }
    assert edge_labels(plan, "test_execution") == {
        "code_review": "success / failure",
        ABORT_NODE: "limit",
        ADAPTIVE_NODE: "retry",
    }
    text = graph_mermaid(plan)
    assert "implementation -. &nbsp;success&nbsp; .-> test_writing;" in text
    assert "implementation -. &nbsp;failure&nbsp; .-> abort;" in text
    assert "test_execution -. &nbsp;success / failure&nbsp; .-> code_review;" in text
    assert "adaptive_retrieval -. &nbsp;limit&nbsp; .-> abort;" in text
    assert "-.->" not in text  # no router edge is left unlabelled


def test_a_reflector_and_an_evaluator_are_drawn_with_labelled_edges_when_the_workflow_switches_them_on() -> None:
    wf = CATALOG.get("feature_with_iterative_testing")
    assert "reflector" not in graph_mermaid(feature_plan())  # off unless the workflow says so
    assert "evaluator" not in graph_mermaid(feature_plan())
    switched = wf.model_copy(
        update={
            "reflection": ReflectionConfig(enabled=True, stages=("implementation",)),
            "evaluation": EvaluationConfig(enabled=True),
        }
    )
    plan = assemble_plan(switched, [], "add a flag")
    assert plan.reflected_stages == ("implementation",)
    assert edge_labels(plan, "implementation") == {
        "reflector": "success",
        ABORT_NODE: "failure",
        ADAPTIVE_NODE: "retry",
    }
    assert edge_labels(plan, "reflector") == {
        "test_writing": "accept implementation",
        ABORT_NODE: "limit",
        "implementation": "send back",
    }
    text = graph_mermaid(plan)
    assert "\treflector(reflector)" in text and "\tevaluator(evaluator)" in text
    assert "implementation -. &nbsp;success&nbsp; .-> reflector;" in text
    assert "reflector -. &nbsp;send back&nbsp; .-> implementation;" in text
    assert "reflector -. &nbsp;accept implementation&nbsp; .-> test_writing;" in text
    assert "evaluator -. &nbsp;scored&nbsp; .-> done;" in text
    assert "test_execution -. &nbsp;success / failure&nbsp; .-> evaluator;" in text  # done is reached through it
    assert "-.->" not in text
    # empty reflection.stages: the planned implementation, test writing and documentation stages
    default = assemble_plan(wf.model_copy(update={"reflection": ReflectionConfig(enabled=True)}), [], "add a flag")
    assert default.reflected_stages == ("implementation", "test_writing")
