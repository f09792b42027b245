"""The specification's workflow files load unchanged: its spelling is normalised into ided's one model."""

from __future__ import annotations

import contextlib
import textwrap
from pathlib import Path
from typing import cast

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from daemon.cli.app import app
from daemon.core.selection_models import DecisionSource, StageDecision
from daemon.core.workflow_schema import StageType, WorkflowType
from daemon.errors import ErrorCode
from daemon.orchestration.plan import assemble_plan
from daemon.orchestration.workflow_loader import WorkflowValidationError, load_workflow_file, parse_workflow

SPEC = Path(__file__).parents[2] / "fixtures" / "spec_workflows"
FEATURE = SPEC / "feature_with_iterative_testing.yaml"
ARCHITECTURE = SPEC / "architecture_discussion.yaml"


def _problems(text: str) -> list[str]:
    with pytest.raises(WorkflowValidationError) as caught:
        parse_workflow(textwrap.dedent(text), "spec.yaml")
    assert caught.value.code is ErrorCode.WORKFLOW_INVALID
    return [str(p) for p in caught.value.problems]


SPEC_TWO_STAGES = """
metadata:
  name: tiny
  description: Two stages in the specification's spelling.
  workflow_type: code_implementation
stages:
  - stage_id: 1
    name: code_generation
    parallel_agents: [{agent: code_agent}]
    routing: {next_stage_on_success: {success}, next_stage_on_failure: "ABORT", max_attempts: 1}
    failure_criteria: {failure}
  - stage_id: 2
    name: lint_and_format
    parallel_agents: [{agent: formatter_agent}]
    routing: {next_stage_on_success: "DONE", next_stage_on_failure: "DONE"}
"""


def _two(success: str = "2", failure: str = "{agent_defined: true}", extra: str = "") -> str:
    return SPEC_TWO_STAGES.replace("{success}", success).replace("{failure}", failure) + extra


def test_the_specifications_feature_workflow_loads_with_its_stages_routing_and_budgets() -> None:
    wf = load_workflow_file(FEATURE)

    assert wf.metadata.workflow_type is WorkflowType.CODE
    assert [(s.stage_id, s.type, s.required, s.max_attempts) for s in wf.stages] == [
        ("code_generation", StageType.IMPLEMENTATION, True, 1),
        ("test_generation_and_execution", StageType.TESTING, True, 3),
        ("security_review", StageType.REVIEW, False, 1),
        ("lint_and_format", StageType.LINT_AND_FORMAT, False, 1),
    ]
    routes = [(s.routing.next_stage_on_success, s.routing.next_stage_on_failure) for s in wf.stages]
    assert routes == [
        ("test_generation_and_execution", "ABORT"),
        ("security_review", "code_generation"),
        ("lint_and_format", "code_generation"),
        ("DONE", "DONE"),
    ]
    coder = wf.stage("code_generation").parallel_agents[0]
    assert (coder.agent_id, coder.mcp_tools) == ("code_agent", ("get_signature", "find_definition", "get_ast_node"))
    assert wf.stage("security_review").parallel_agents[0].mcp_tools == ()  # no list: no tool
    assert [a.agent_id for a in wf.stage("lint_and_format").parallel_agents] == ["code_agent", "formatter_agent"]
    assert all(s.failure_criteria == () for s in wf.stages)
    hints = wf.retrieval_strategy_config.retrieval_hints
    budgets = {sid: h.token_budget for sid, h in hints.items()}
    assert budgets == {
        "code_generation": 30000,
        "test_generation_and_execution": 25000,
        "security_review": 20000,
        "lint_and_format": 10000,
    }
    assert hints["code_generation"].avoid == ("test code", "deprecated patterns")
    sources = [
        (s.name, s.kind, s.priority, s.trigger_stages) for s in wf.retrieval_strategy_config.rag_strategy.sources
    ]
    assert sources == [
        ("code", "code", 1, ()),
        ("web", None, 2, ()),
        ("docs", "docs", 2, ()),
        ("advisories", None, 1, ("security_review",)),
    ]
    assert wf.metadata.selection_criteria.agents == ("code_agent", "test_agent", "security_agent", "formatter_agent")


def test_the_specifications_architecture_workflow_is_a_document_workflow_whose_analyst_gets_no_tools() -> None:
    wf = load_workflow_file(ARCHITECTURE)
    strategy = wf.retrieval_strategy_config

    assert wf.metadata.workflow_type is WorkflowType.DOCUMENT
    assert not strategy.ast_parsing and not strategy.lsp_integration
    assert [(s.stage_id, s.type, s.required) for s in wf.stages] == [
        ("architectural_analysis", StageType.ANALYSIS, True),
        ("decision_documentation", StageType.DOCUMENTATION, False),
    ]
    assert wf.stage("architectural_analysis").parallel_agents[0].mcp_tools == ()  # `mcp_tools: []`: none
    sources = {s.name: s.priority for s in strategy.rag_strategy.sources}
    assert sources == {"docs": 1, "decision_log": 1, "specification": 2, "web": 2}
    assert strategy.retrieval_hints["architectural_analysis"].token_budget == 15000


def test_every_field_without_a_counterpart_is_reported_as_informational_with_its_reason() -> None:
    wf = load_workflow_file(FEATURE)
    informational = {n.field: n.meaning for n in wf.notes if n.informational}

    assert "retrieval_strategy_config.strategy_name" in informational
    assert "retrieval_strategy_config.pattern_applied" in informational
    assert "retrieval_strategy_config.rag_strategy.chunk_strategy" in informational
    assert "lsp_integration" in informational["retrieval_strategy_config.rag_strategy.sources[1].name"]
    assert all(meaning for meaning in informational.values())
    plan = assemble_plan(
        wf,
        [StageDecision(stage_id=s.stage_id, include=True, reason="r", source=DecisionSource.RULE) for s in wf.stages],
        "Implement a feature",
    )
    assert plan.notes == wf.notes

    planning = {n.field: n for n in load_workflow_file(ARCHITECTURE).notes}
    unused = planning["retrieval_strategy_config.retrieval_hints.token_budget.planning"]
    assert unused.informational and "names no stage" in unused.meaning


def test_ided_workflows_validate_accepts_both_specification_files() -> None:
    result = CliRunner().invoke(app, ["workflows", "validate", str(FEATURE), str(ARCHITECTURE)])

    assert result.exit_code == 0, result.stderr
    assert "2 workflow file(s) valid" in result.stderr
    counted = [line for line in result.stderr.splitlines() if "field(s) in the specification's spelling" in line]
    assert len(counted) == 2 and "`ided workflows show feature_with_iterative_testing` lists them" in counted[0]


def test_a_stage_number_that_names_no_stage_is_a_problem_listing_the_numbers() -> None:
    problems = _problems(_two(success="7"))

    assert any("routing.next_stage_on_success 7 is no stage number" in p for p in problems)
    assert any("1 (code_generation), 2 (lint_and_format)" in p for p in problems)


def test_failure_criteria_other_than_agent_defined_true_is_a_problem() -> None:
    problems = _problems(_two(failure="{agent_defined: false}"))

    assert any("failure_criteria" in p and "agent_defined: true" in p for p in problems)


def test_an_unknown_key_inside_a_specification_block_and_a_bad_priority_are_problems() -> None:
    extra = """
retrieval_strategy_config:
  ast_parsing: {enabled: true, colour: blue}
  rag_strategy:
    sources:
      - {name: codebase_semantic_search, priority: URGENT}
"""
    problems = _problems(_two(extra=extra))

    assert any("unknown key 'retrieval_strategy_config.ast_parsing.colour'" in p for p in problems)
    assert any("priority 'URGENT' is not a priority" in p for p in problems)


def test_retrieval_switched_off_as_a_whole_turns_every_part_off() -> None:
    wf = parse_workflow(_two(extra="retrieval_strategy_config: {enabled: false}\n"), "spec.yaml")
    strategy = wf.retrieval_strategy_config

    assert not strategy.ast_parsing and not strategy.lsp_integration
    assert not strategy.rag_strategy.enabled and not strategy.adaptive_retrieval.enabled


def test_a_trigger_stage_that_names_no_stage_is_a_problem() -> None:
    extra = """
retrieval_strategy_config:
  rag_strategy:
    sources:
      - {name: cve_database, priority: HIGH_if_triggered, trigger_stages: [security_reviw]}
"""
    problems = _problems(_two(extra=extra))

    assert any("trigger_stages entry 'security_reviw', which is no stage" in p for p in problems)


def test_both_spellings_of_one_key_in_one_agent_is_a_problem() -> None:
    text = _two().replace("{agent: code_agent}", "{agent: code_agent, agent_id: coder}")

    assert any("both 'agent' and 'agent_id'" in p for p in _problems(text))


_ODD_VALUES = st.sampled_from([None, 0, 7, -1, True, "", "x", "HIGH", "DONE", [], [1], {}, {"enabled": "yes"}])


def _paths(node: object, prefix: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    found: list[tuple[object, ...]] = [prefix]
    if isinstance(node, dict):
        for key, value in cast("dict[str, object]", node).items():
            found.extend(_paths(value, (*prefix, key)))
    elif isinstance(node, list):
        for index, value in enumerate(cast("list[object]", node)):
            found.extend(_paths(value, (*prefix, index)))
    return found


def _replaced(node: object, path: tuple[object, ...], value: object) -> object:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(node, dict):
        return {k: _replaced(v, rest, value) if k == head else v for k, v in cast("dict[str, object]", node).items()}
    assert isinstance(node, list)
    return [_replaced(v, rest, value) if i == head else v for i, v in enumerate(cast("list[object]", node))]


_SPEC_DOC = yaml.safe_load(FEATURE.read_text(encoding="utf-8"))
_SPEC_PATHS = _paths(_SPEC_DOC)[1:]


@settings(max_examples=150, deadline=None)
@given(picks=st.lists(st.tuples(st.sampled_from(_SPEC_PATHS), _ODD_VALUES), min_size=1, max_size=3))
def test_any_value_anywhere_in_a_specification_file_loads_or_is_a_coded_problem(
    picks: list[tuple[tuple[object, ...], object]],
) -> None:
    document: object = _SPEC_DOC
    for path, value in picks:
        with contextlib.suppress(KeyError, IndexError, AssertionError):
            document = _replaced(document, path, value)
    try:
        parse_workflow(yaml.safe_dump(document), "fuzzed.yaml")
    except WorkflowValidationError as exc:
        assert exc.code is ErrorCode.WORKFLOW_INVALID and exc.problems


def test_mcp_tools_written_as_an_empty_mapping_or_left_out_give_an_agent_no_tools() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8").replace(
        '      - agent: "documentation_agent"\n', '      - agent: "documentation_agent"\n        mcp_tools: {}\n'
    )
    assert "mcp_tools: {}" in text
    written = parse_workflow(text, "arch.yaml").stage("decision_documentation").parallel_agents[0]
    left_out = load_workflow_file(ARCHITECTURE).stage("decision_documentation").parallel_agents[0]
    assert written.mcp_tools == left_out.mcp_tools == ()
    with pytest.raises(WorkflowValidationError, match="mcp_tools"):
        parse_workflow(text.replace("mcp_tools: {}", "mcp_tools: {search_docs: true}"), "arch.yaml")
