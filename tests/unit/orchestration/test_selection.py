"""Workflow selection: the orchestrator model's structured answer, retry with the error, deterministic fallback."""

from __future__ import annotations

import json

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

from daemon.config import ResilienceConfig
from daemon.core.selection_models import DecisionSource, SelectionPath
from daemon.errors import WorkflowError
from daemon.orchestration.deterministic_selector import decide_stages, score_workflows, select_deterministically
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.project_profile import ProjectProfile
from daemon.orchestration.replay_provider import ReplayChatModel, ReplayEntry, ReplayScript
from daemon.orchestration.resilience import ChatCaller, ResilienceLayer
from daemon.orchestration.selection import Orchestrator
from tests.pipeline_support import FAST_RESILIENCE, builtin_catalog, choose

CATALOG = builtin_catalog()
PROFILE = ProjectProfile(languages={"python": 40}, files=60, size="small")
SECURE = ProjectProfile(languages={"python": 40}, files=60, size="small", security_markers=("app/auth.py",))


def caller_of(*answers: str) -> ChatCaller:
    model = GenericFakeChatModel(messages=iter(answers))
    caller = ModelRegistry.from_models({"orchestrator": model}, ResilienceLayer(FAST_RESILIENCE)).caller("orchestrator")
    assert caller is not None
    return caller


def valid_feature() -> str:
    return json.dumps(
        choose(
            "feature_with_iterative_testing",
            rationale="a new flag",
            requirements_analysis="SKIP",
            code_review="INCLUDE",
            documentation="INCLUDE",
        )
    )


async def test_model_answer_selects_the_workflow_with_a_reason_for_every_optional_stage() -> None:
    selection = await Orchestrator(caller_of(valid_feature())).select("Add a --json flag", CATALOG, PROFILE)
    assert selection.workflow == "feature_with_iterative_testing"
    assert selection.path is SelectionPath.LLM
    assert selection.rationale == "a new flag"
    model_decided = {d.stage_id: d for d in selection.stage_decisions if d.source is DecisionSource.MODEL}
    assert {k: v.include for k, v in model_decided.items()} == {
        "requirements_analysis": False,
        "code_review": True,
        "documentation": True,
    }
    assert all(d.reason for d in selection.stage_decisions)
    assert [d.stage_id for d in selection.stage_decisions][:2] == ["requirements_analysis", "implementation"]


async def test_invalid_answer_goes_back_to_the_model_with_the_error_then_the_fix_is_accepted() -> None:
    incomplete = json.dumps(choose("feature_with_iterative_testing", code_review="INCLUDE"))
    script = ReplayScript(
        [
            ReplayEntry(role="orchestrator", answer=incomplete),
            ReplayEntry(
                role="orchestrator",
                match=r"That answer is invalid: missing a decision for optional stages: documentation, requirements_",
                answer=valid_feature(),
            ),
        ]
    )
    registry = ModelRegistry.from_models(
        {"orchestrator": ReplayChatModel(script=script, role="orchestrator")}, ResilienceLayer(FAST_RESILIENCE)
    )
    orchestrator = Orchestrator(registry.caller("orchestrator"), retries=1)
    selection = await orchestrator.select("Add a --json flag", CATALOG, PROFILE)
    assert selection.path is SelectionPath.LLM_AFTER_RETRY
    assert [a.ok for a in selection.attempts] == [False, True]
    assert selection.attempts[0].error is not None and "missing a decision" in selection.attempts[0].error


async def test_two_invalid_answers_fall_back_to_the_deterministic_selector_and_record_why() -> None:
    selection = await Orchestrator(caller_of("I think bug_fix fits.", '{"workflow": "nope"}'), retries=1).select(
        "Fix the crash when the config is empty", CATALOG, PROFILE
    )
    assert selection.path is SelectionPath.DETERMINISTIC_FALLBACK
    assert selection.workflow == "bug_fix"
    assert [a.ok for a in selection.attempts] == [False, False]
    assert "no JSON object" in (selection.attempts[0].error or "")
    assert "stage_decisions" in (selection.attempts[1].error or "")
    assert selection.model is not None


async def test_retrieval_queries_in_the_answer_are_rejected() -> None:
    with_queries = {**choose("bug_fix", code_review="SKIP"), "retrieval_queries": ["where is the crash"]}
    selection = await Orchestrator(caller_of(json.dumps(with_queries)), retries=0).select(
        "Fix the crash", CATALOG, PROFILE
    )
    assert selection.path is SelectionPath.DETERMINISTIC_FALLBACK
    assert "'retrieval_queries' is not allowed" in (selection.attempts[0].error or "")


async def test_listing_a_required_stage_or_an_unknown_one_is_invalid() -> None:
    answer = choose("bug_fix", code_review="SKIP", fix="SKIP", polish="INCLUDE")
    selection = await Orchestrator(caller_of(json.dumps(answer)), retries=0).select("Fix the crash", CATALOG, PROFILE)
    error = selection.attempts[0].error or ""
    assert "required stages must not be listed: fix" in error
    assert "not stages of this workflow: polish" in error


async def test_an_unreachable_model_falls_back_at_once() -> None:
    script = ReplayScript([ReplayEntry(role="orchestrator", error="connection refused", repeat=True)])
    layer = ResilienceLayer(ResilienceConfig(cache=False, max_retries=1, backoff_initial_seconds=0))
    registry = ModelRegistry.from_models({"orchestrator": ReplayChatModel(script=script, role="orchestrator")}, layer)
    selection = await Orchestrator(registry.caller("orchestrator"), retries=3).select(
        "Refactor the scanner", CATALOG, PROFILE
    )
    assert selection.path is SelectionPath.DETERMINISTIC_FALLBACK
    assert len(selection.attempts) == 1 and "connection refused" in (selection.attempts[0].error or "")
    assert len(script.calls) == 2  # one call plus one resilience retry, no selection retries


async def test_a_forced_workflow_is_kept_and_a_model_choosing_another_is_corrected() -> None:
    wrong = json.dumps(choose("bug_fix", code_review="SKIP"))
    selection = await Orchestrator(caller_of(wrong), retries=0).select(
        "Fix the crash", CATALOG, PROFILE, workflow="refactor"
    )
    assert selection.workflow == "refactor" and selection.forced
    assert "fixed by the user" in (selection.attempts[0].error or "")


async def test_forcing_an_unknown_workflow_is_an_error_not_a_fallback() -> None:
    with pytest.raises(WorkflowError, match="unknown workflow 'nope'"):
        await Orchestrator(None).select("anything", CATALOG, PROFILE, workflow="nope")


async def test_without_a_model_the_deterministic_selector_decides() -> None:
    selection = await Orchestrator(None).select("Write unit tests for the manifest module", CATALOG, PROFILE)
    assert selection.path is SelectionPath.DETERMINISTIC_NO_MODEL
    assert selection.workflow == "test_generation"
    assert selection.scores[0].workflow == "test_generation"


@pytest.mark.parametrize(
    ("request_text", "workflow"),
    [
        ("Add a --json flag to the status command", "feature_with_iterative_testing"),
        ("Fix the crash when the config file is empty", "bug_fix"),
        ("Should we move run records to Postgres? Compare the options", "architecture_discussion"),
        ("Refactor the scanner into smaller modules", "refactor"),
        ("Audit the login code for injection vulnerabilities", "security_audit"),
        ("Write unit tests for the manifest", "test_generation"),
        ("Update the README to describe the run command", "documentation_update"),
    ],
)
def test_applicable_patterns_pick_the_workflow(request_text: str, workflow: str) -> None:
    assert select_deterministically(request_text, CATALOG, PROFILE).workflow == workflow


def test_without_any_pattern_match_the_closest_description_wins() -> None:
    scores = score_workflows("explain how the cache layer should evolve", CATALOG)
    assert all(s.pattern_hits == 0 for s in scores)
    assert scores[0].workflow == "architecture_discussion"
    assert scores[0].similarity > scores[1].similarity == 0.0


def test_optional_stage_rules_keyword_then_security_profile_then_default() -> None:
    wf = CATALOG.get("feature_with_iterative_testing")
    plain = {d.stage_id: d for d in decide_stages(wf, "Add a flag", PROFILE)}
    assert not plain["documentation"].include and "default" in plain["documentation"].reason
    assert plain["code_review"].include and "default" in plain["code_review"].reason
    worded = {d.stage_id: d for d in decide_stages(wf, "Add a flag and update the docs", PROFILE)}
    assert worded["documentation"].include and worded["documentation"].reason == "the request mentions 'docs'"
    audit = CATALOG.get("security_audit")
    secure = {d.stage_id: d for d in decide_stages(audit, "Audit the code", SECURE)}
    assert secure["dependency_audit"].include and "app/auth.py" in secure["dependency_audit"].reason
    insecure = {d.stage_id: d for d in decide_stages(audit, "Audit the code", PROFILE)}
    assert not insecure["dependency_audit"].include


def test_deterministic_selection_is_stable() -> None:
    first = select_deterministically("make it faster", CATALOG, PROFILE)
    second = select_deterministically("make it faster", CATALOG, PROFILE)
    assert first == second
