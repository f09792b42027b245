"""Plan assembly: pure, deterministic, routes around skipped stages; property-tested on generated workflows."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.core.run_models import ExecutionPlan
from daemon.core.selection_models import DecisionSource, StageDecision
from daemon.core.workflow_schema import (
    ABORT,
    DONE,
    AgentSpec,
    RetrievalHint,
    RetrievalStrategyConfig,
    Stage,
    StageRouting,
    StageType,
    Workflow,
    WorkflowMetadata,
    WorkflowType,
)
from daemon.orchestration.plan import assemble_plan
from tests.pipeline_support import builtin_catalog

CATALOG = builtin_catalog()


def _decisions(workflow: Workflow, include: set[str]) -> list[StageDecision]:
    return [
        StageDecision(
            stage_id=s.stage_id,
            include=s.required or s.stage_id in include,
            reason="required" if s.required else f"chose {s.stage_id in include}",
            source=DecisionSource.REQUIRED if s.required else DecisionSource.MODEL,
        )
        for s in workflow.stages
    ]


def _assert_routes_only_to_planned(plan: ExecutionPlan) -> None:
    planned = set(plan.stage_ids)
    terminals = {DONE, ABORT}
    assert plan.entry in planned | terminals
    assert set(plan.routing) == planned
    for route in plan.routing.values():
        assert route.on_success in planned | terminals
        assert route.on_failure in planned | terminals
        assert route.retry in planned
    assert not planned & {s.stage_id for s in plan.skipped}


def test_skipped_review_and_docs_are_routed_around_to_done() -> None:
    wf = CATALOG.get("feature_with_iterative_testing")
    plan = assemble_plan(wf, _decisions(wf, set()), "Add a flag")
    assert plan.stage_ids == ("implementation", "test_writing", "test_execution")
    assert plan.entry == "implementation"  # requirements_analysis skipped
    assert plan.routing["test_execution"].on_success == DONE  # code_review -> documentation -> DONE, both skipped
    assert plan.routing["test_execution"].on_failure == DONE
    assert plan.routing["test_execution"].retry == "implementation"
    assert [s.reason for s in plan.skipped] == ["chose False"] * 3


def test_a_skipped_retry_target_becomes_the_failing_stage_itself() -> None:
    wf = Workflow(
        metadata=WorkflowMetadata(name="w", description="d", workflow_type=WorkflowType.CODE),
        stages=(
            Stage(
                stage_id="draft",
                name="Draft",
                type=StageType.DOCUMENTATION,
                required=False,
                parallel_agents=(AgentSpec(agent_id="writer"),),
                routing=StageRouting(next_stage_on_success="check"),
            ),
            Stage(
                stage_id="check",
                name="Check",
                type=StageType.REVIEW,
                parallel_agents=(AgentSpec(agent_id="checker"),),
                routing=StageRouting(next_stage_on_success=DONE, retry_stage="draft"),
                max_attempts=2,
            ),
        ),
    )
    plan = assemble_plan(wf, _decisions(wf, set()), "r")
    assert plan.routing["check"].retry == "check"
    assert assemble_plan(wf, _decisions(wf, {"draft"}), "r").routing["check"].retry == "draft"


def test_required_stages_are_planned_even_when_a_decision_says_skip() -> None:
    wf = CATALOG.get("bug_fix")
    decisions = [StageDecision(stage_id="fix", include=False, reason="no", source=DecisionSource.MODEL)]
    plan = assemble_plan(wf, decisions, "Fix it")
    assert "fix" in plan.stage_ids
    assert [s.stage_id for s in plan.skipped] == ["code_review"]
    assert plan.skipped[0].reason == "no decision was made for this optional stage"


def test_plan_carries_budgets_task_context_and_the_retrieval_strategy_unchanged() -> None:
    wf = CATALOG.get("architecture_discussion")
    plan = assemble_plan(wf, _decisions(wf, {"prior_art_research"}), "Should we shard the index?")
    assert plan.retrieval_strategy == wf.retrieval_strategy_config
    assert plan.stage("context_gathering").token_budget == 6000
    context = plan.stage("options_analysis").task_context
    assert "Request: Should we shard the index?" in context
    assert "Why this stage runs: required" in context
    assert "The stage fails when: fewer than two viable options" in context
    assert plan.stage("trade_off_review").failure_aggregation.value == "majority_fail"
    assert plan.agent_roles[:2] == ("docs_researcher", "decision_log_reader")


def test_stages_without_a_hint_get_the_default_budget() -> None:
    wf = CATALOG.get("bug_fix")
    strategy = wf.retrieval_strategy_config.model_copy(update={"retrieval_hints": {}, "default_token_budget": 1234})
    plan = assemble_plan(wf.model_copy(update={"retrieval_strategy_config": strategy}), _decisions(wf, set()), "r")
    assert {s.token_budget for s in plan.stages} == {1234}
    assert plan.stages[0].retrieval_hint == RetrievalHint(token_budget=1234)


# -- property ---------------------------------------------------------------------------------------

_IDS = [f"s{i}" for i in range(8)]


@st.composite
def workflows(draw: st.DrawFn) -> Workflow:
    n = draw(st.integers(min_value=1, max_value=8))
    ids = _IDS[:n]
    targets = st.sampled_from([*ids, DONE, ABORT])
    stages: list[Stage] = []
    for sid in ids:
        retry = draw(st.none() | st.sampled_from(ids))
        stages.append(
            Stage(
                stage_id=sid,
                name=sid.upper(),
                type=draw(st.sampled_from(list(StageType))),
                required=draw(st.booleans()),
                parallel_agents=(AgentSpec(agent_id=f"agent_{sid}"),),
                routing=StageRouting(
                    next_stage_on_success=draw(targets), next_stage_on_failure=draw(targets), retry_stage=retry
                ),
                max_attempts=draw(st.none() | st.integers(min_value=1, max_value=4)),
            )
        )
    hints = {sid: RetrievalHint(token_budget=draw(st.integers(0, 9000))) for sid in ids if draw(st.booleans())}
    return Workflow(
        metadata=WorkflowMetadata(name="generated", description="generated", workflow_type=WorkflowType.CODE),
        retrieval_strategy_config=RetrievalStrategyConfig(retrieval_hints=hints),
        stages=tuple(stages),
    )


@settings(max_examples=300, deadline=None)
@given(workflow=workflows(), data=st.data())
def test_plan_assembly_is_deterministic_and_never_routes_to_a_skipped_stage(
    workflow: Workflow, data: st.DataObject
) -> None:
    include = data.draw(st.sets(st.sampled_from([s.stage_id for s in workflow.stages])))
    decisions = _decisions(workflow, include)
    plan = assemble_plan(workflow, decisions, "request")
    assert plan == assemble_plan(workflow, list(decisions), "request")
    _assert_routes_only_to_planned(plan)
    assert {s.stage_id for s in workflow.stages if s.required} <= set(plan.stage_ids)
    assert set(plan.stage_ids) | {s.stage_id for s in plan.skipped} == {s.stage_id for s in workflow.stages}


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_shipped_workflows_plan_only_to_planned_stages_under_any_decisions(data: st.DataObject) -> None:
    workflow = CATALOG.get(data.draw(st.sampled_from(CATALOG.names())))
    include = data.draw(st.sets(st.sampled_from([s.stage_id for s in workflow.optional_stages] or ["none"])))
    _assert_routes_only_to_planned(assemble_plan(workflow, _decisions(workflow, include), "request"))
