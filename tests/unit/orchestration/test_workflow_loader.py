"""Workflow files: the shipped ones load, the schema is published, and every bad file is a clear error."""

from __future__ import annotations

import json
import textwrap
import tomllib
from pathlib import Path

import pytest
import yaml

from daemon.core.workflow_schema import StageType, WorkflowType, workflow_json_schema
from daemon.errors import ErrorCode
from daemon.orchestration.workflow_loader import (
    WorkflowCatalog,
    WorkflowValidationError,
    builtin_workflow_dir,
    check_workflow_file,
    load_workflow_file,
    parse_workflow,
)

SHIPPED = sorted(builtin_workflow_dir().glob("*.yaml"))

MINIMAL = """
metadata:
  name: tiny
  description: A tiny workflow.
  workflow_type: code
stages:
  - stage_id: first
    name: First
    type: analysis
    parallel_agents: [{agent_id: analyst}]
    routing: {next_stage_on_success: second}
  - stage_id: second
    name: Second
    type: implementation
    parallel_agents: [{agent_id: coder}]
    routing: {next_stage_on_success: DONE, next_stage_on_failure: ABORT}
"""


def _problems(text: str, name: str = "bad.yaml") -> list[str]:
    with pytest.raises(WorkflowValidationError) as caught:
        parse_workflow(textwrap.dedent(text), name)
    assert caught.value.code is ErrorCode.WORKFLOW_INVALID
    return [str(p) for p in caught.value.problems]


def _with_stages(stages: str, extra: str = "") -> str:
    head = "metadata:\n  name: tiny\n  description: A tiny workflow.\n  workflow_type: code\n"
    return head + extra + "stages:\n" + textwrap.indent(textwrap.dedent(stages), "  ")


def test_all_nine_shipped_workflows_load_without_problems() -> None:
    catalog = WorkflowCatalog.load([builtin_workflow_dir()])
    assert catalog.problems == ()
    assert catalog.names() == [
        "architecture_discussion",
        "bug_fix",
        "documentation_update",
        "feature_with_iterative_testing",
        "refactor",
        "security_audit",
        "spec_architecture_discussion",
        "spec_feature_with_iterative_testing",
        "test_generation",
    ]


def test_feature_workflow_retries_the_implementation_when_tests_fail_three_times_at_most() -> None:
    wf = load_workflow_file(builtin_workflow_dir() / "feature_with_iterative_testing.yaml")
    assert wf.metadata.workflow_type is WorkflowType.CODE
    execution = wf.stage("test_execution")
    assert execution.type is StageType.TEST_EXECUTION
    assert execution.routing.retry_stage == "implementation"
    assert execution.max_attempts == 3
    assert {s.stage_id for s in wf.optional_stages} == {"requirements_analysis", "code_review", "documentation"}
    hints = wf.retrieval_strategy_config.retrieval_hints
    assert set(hints) == {s.stage_id for s in wf.stages}
    assert hints["implementation"].token_budget == 8000


def test_architecture_workflow_works_on_documents_without_ast_or_language_servers() -> None:
    wf = load_workflow_file(builtin_workflow_dir() / "architecture_discussion.yaml")
    strategy = wf.retrieval_strategy_config
    assert wf.metadata.workflow_type is WorkflowType.DOCUMENT
    assert not strategy.ast_parsing and not strategy.lsp_integration
    assert [s.stage_id for s in wf.stages] == [
        "context_gathering",
        "prior_art_research",
        "options_analysis",
        "trade_off_review",
        "decision_record",
    ]
    assert {s.name for s in strategy.rag_strategy.sources} >= {"docs", "decision_log"}


def test_published_workflow_schema_matches_the_models() -> None:
    published = json.loads((builtin_workflow_dir() / "schema.json").read_text())
    assert published == workflow_json_schema(), "regenerate workflows/schema.json (`ided workflows schema`)"


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_workflow_validates_against_the_published_json_schema(path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(yaml.safe_load(path.read_text()), workflow_json_schema())


def test_unknown_routing_target_names_file_stage_suggestion_and_fix() -> None:
    [problem] = _problems(MINIMAL.replace("next_stage_on_success: second", "next_stage_on_success: secnd"))
    assert problem.startswith("bad.yaml: stage 'first': routing.next_stage_on_success 'secnd' is not a stage id")
    assert "did you mean 'second'" in problem
    assert "fix: point routing.next_stage_on_success at one of: first, second, DONE, ABORT" in problem


def test_unreachable_stage_is_reported_with_how_to_reach_it() -> None:
    text = MINIMAL + textwrap.indent(
        textwrap.dedent(
            """
            - stage_id: orphan
              name: Orphan
              type: review
              parallel_agents: [{agent_id: reviewer}]
              routing: {next_stage_on_success: DONE}
            """
        ),
        "  ",
    )
    [problem] = _problems(text)
    assert "stage 'orphan'" in problem and "unreachable from the entry stage 'first'" in problem
    assert "route to it from another stage" in problem


def test_loop_without_max_attempts_is_rejected_and_a_bound_fixes_it() -> None:
    loop = MINIMAL.replace("next_stage_on_failure: ABORT", "next_stage_on_failure: first")
    [problem] = _problems(loop)
    assert "the routing loop first -> second -> first has no max_attempts bound" in problem
    assert "set max_attempts on one of its stages" in problem
    bounded = loop.replace("type: implementation", "type: implementation\n    max_attempts: 3")
    assert parse_workflow(bounded, "ok.yaml").stage("second").max_attempts == 3


def test_a_stage_routing_to_itself_needs_max_attempts() -> None:
    [problem] = _problems(MINIMAL.replace("next_stage_on_failure: ABORT", "next_stage_on_failure: second"))
    assert "the routing loop second -> second has no max_attempts bound" in problem


def test_duplicate_stage_ids_are_reported_with_both_positions() -> None:
    problems = _problems(MINIMAL.replace("stage_id: second", "stage_id: first"))
    assert any("duplicate stage_id 'first' (stages[0] and stages[1])" in p for p in problems)


def test_schema_errors_name_the_stage_the_key_and_the_fix() -> None:
    problems = _problems(
        _with_stages(
            """
            - stage_id: only
              name: Only
              type: analysys
              parallel_agents: [{agent_id: analyst, tools: [x]}]
              routing: {next_stage_on_success: DONE}
            """
        )
    )
    assert any(p.startswith("bad.yaml: stage 'only': 'type': Input should be") and "use one of" in p for p in problems)
    assert any("unknown key 'parallel_agents.0.tools'" in p and "remove 'tools'" in p for p in problems)


def test_missing_routing_is_a_missing_field_error_for_that_stage() -> None:
    problems = _problems(
        _with_stages(
            """
            - stage_id: only
              name: Only
              type: analysis
              parallel_agents: [{agent_id: analyst}]
            """
        )
    )
    assert problems == ["bad.yaml: stage 'only': 'routing': Field required (fix: add 'routing')"]


def test_invalid_yaml_reports_the_line() -> None:
    [problem] = _problems("metadata:\n  name: [unclosed\n")
    assert "not valid YAML at line" in problem


def test_reserved_ids_bad_regexes_duplicate_agents_and_stray_hints_are_each_reported() -> None:
    text = _with_stages(
        """
        - stage_id: done
          name: Done
          type: analysis
          parallel_agents: [{agent_id: a}, {agent_id: a}]
          routing: {next_stage_on_success: DONE}
        """,
        extra="retrieval_strategy_config:\n  retrieval_hints:\n    nowhere: {token_budget: 10}\n",
    ).replace(
        "workflow_type: code\n", "workflow_type: code\n  selection_criteria: {applicable_patterns: ['(unclosed']}\n"
    )
    problems = "\n".join(_problems(text))
    assert "stage_id 'done' is reserved" in problems
    assert "agent 'a' appears twice" in problems
    assert "'(unclosed' is not a valid regular expression" in problems
    assert "retrieval_hints has an entry for unknown stage 'nowhere'" in problems


def test_reflection_must_name_stages_of_the_workflow_and_its_nodes_are_reserved() -> None:
    problems = "\n".join(_problems(MINIMAL + "reflection: {enabled: true, stages: [nowhere]}\n"))
    assert "reflection.stages names 'nowhere', which is no stage of this workflow" in problems
    reserved = _with_stages(
        """
        - stage_id: reflector
          name: Reflector
          type: review
          parallel_agents: [{agent_id: a}]
          routing: {next_stage_on_success: DONE}
        """
    )
    assert any("stage_id 'reflector' is reserved" in p for p in _problems(reserved))
    fine = parse_workflow(MINIMAL + "reflection: {enabled: true}\nevaluation: {enabled: true, pass_score: 7}\n", "ok")
    assert fine.reflection.enabled and fine.reflection.max_rounds == 2 and fine.evaluation.pass_score == 7
    assert any("pass_score" in p for p in _problems(MINIMAL + "evaluation: {enabled: true, pass_score: 11}\n"))


def test_retry_stage_must_be_a_stage_not_a_terminal() -> None:
    problems = _problems(
        MINIMAL.replace("next_stage_on_failure: ABORT", "next_stage_on_failure: ABORT, retry_stage: DONE")
    )
    assert any("retry_stage" in p for p in problems)


def test_workspace_workflows_are_added_and_override_built_ins_by_name(tmp_path: Path) -> None:
    own = tmp_path / ".ided" / "workflows"
    own.mkdir(parents=True)
    (own / "tiny.yaml").write_text(MINIMAL)
    (own / "bug_fix.yaml").write_text(MINIMAL.replace("name: tiny", "name: bug_fix"))
    catalog = WorkflowCatalog.load([builtin_workflow_dir(), own])
    assert "tiny" in catalog.names()
    assert catalog.sources["bug_fix"] == str(own / "bug_fix.yaml")
    assert [s.stage_id for s in catalog.get("bug_fix").stages] == ["first", "second"]


def test_a_broken_workspace_file_is_left_out_and_reported_while_the_rest_load(tmp_path: Path) -> None:
    own = tmp_path / "wf"
    own.mkdir()
    (own / "broken.yaml").write_text(MINIMAL.replace("next_stage_on_success: second", "next_stage_on_success: nope"))
    (own / "tiny.yml").write_text(MINIMAL)
    (own / "twin.yaml").write_text(MINIMAL)
    catalog = WorkflowCatalog.load([own])
    assert catalog.names() == ["tiny"]
    messages = [str(p) for p in catalog.problems]
    assert any("broken.yaml" in m and "'nope'" in m for m in messages)
    assert any("twin.yaml" in m and "already defined" in m for m in messages)
    assert check_workflow_file(own / "tiny.yml") == []


def test_unknown_workflow_names_the_closest_one() -> None:
    catalog = WorkflowCatalog.load([builtin_workflow_dir()])
    with pytest.raises(Exception, match="did you mean 'bug_fix'"):
        catalog.get("bugfix")


def test_the_shipped_workflows_are_the_checkouts_folder_and_the_wheel_carries_them_where_the_loader_looks() -> None:
    root = Path(__file__).resolve().parents[3]
    assert builtin_workflow_dir() == root / "workflows"
    build = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert build["force-include"]["workflows"] == "daemon/builtin_workflows"
    assert (root / "daemon").is_dir() and not (root / "daemon" / "builtin_workflows").exists()
