"""Model providers per role, the replay provider, and structured output parsing."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from daemon.config import ModelConfig, PipelineConfig
from daemon.errors import ConfigError
from daemon.orchestration.llm_providers import ModelRegistry, build_chat_model, role_candidates
from daemon.orchestration.replay_provider import ReplayExhausted, ReplayScript
from daemon.orchestration.resilience import ResilienceLayer, ResilientChat
from daemon.orchestration.structured_output import AnswerInvalid, extract_json, parse_answer
from tests.pipeline_support import FAST_RESILIENCE, write_script


def registry(config: PipelineConfig, env: dict[str, str] | None = None) -> ModelRegistry:
    return ModelRegistry.from_config(config, env=env or {}, layer=ResilienceLayer(FAST_RESILIENCE))


def test_agent_roles_fall_back_to_agents_then_default() -> None:
    assert role_candidates("coder") == ["coder", "agents", "default"]
    assert role_candidates("orchestrator") == ["orchestrator", "default"]
    models = {
        "default": ModelConfig(model="general", base_url="http://127.0.0.1:9/v1"),
        "agents": ModelConfig(model="agentic", base_url="http://127.0.0.1:9/v1"),
    }
    reg = registry(PipelineConfig(models=models))
    coder, orchestrator = reg.caller("coder"), reg.caller("orchestrator")
    assert isinstance(coder, ResilientChat) and isinstance(orchestrator, ResilientChat)
    assert coder.label == "agents (openai:agentic)"
    assert orchestrator.label == "default (openai:general)"
    assert reg.missing(["coder", "reviewer"]) == []


def test_no_configuration_serves_no_role() -> None:
    reg = registry(PipelineConfig())
    assert reg.caller("orchestrator") is None
    assert reg.missing(["coder", "coder", "reviewer"]) == ["coder", "reviewer"]


def test_fallbacks_chain_in_order_and_an_unknown_fallback_is_a_config_error() -> None:
    models = {
        "orchestrator": ModelConfig(model="big", base_url="http://a/v1", fallbacks=("local",)),
        "local": ModelConfig(model="small", base_url="http://b/v1", fallbacks=("orchestrator",)),
    }
    chat = registry(PipelineConfig(models=models)).caller("orchestrator")
    assert isinstance(chat, ResilientChat)
    assert [e.name for e in chat.chain] == ["orchestrator", "local"]
    assert [e.provider_key for e in chat.chain] == ["openai:http://a/v1", "openai:http://b/v1"]
    broken = {"orchestrator": ModelConfig(model="big", base_url="http://a/v1", fallbacks=("nope",))}
    with pytest.raises(ConfigError, match="fallback 'nope' is not a configured entry"):
        registry(PipelineConfig(models=broken)).caller("orchestrator")


def test_openai_compatible_endpoints_get_base_url_timeout_and_no_client_retries() -> None:
    model = build_chat_model(
        "local", ModelConfig(model="qwen2.5-coder:7b", base_url="http://localhost:11434/v1", timeout_seconds=7), {}
    )
    assert isinstance(model, ChatOpenAI)
    assert model.openai_api_base == "http://localhost:11434/v1"
    assert model.model_name == "qwen2.5-coder:7b" and model.request_timeout == 7 and model.max_retries == 0


def test_api_keys_come_from_the_named_environment_variable() -> None:
    entry = ModelConfig(provider="anthropic", model="claude-x", api_key_env="MY_KEY")
    model = build_chat_model("a", entry, {"MY_KEY": "sk-test"})
    assert isinstance(model, ChatAnthropic) and model.anthropic_api_key.get_secret_value() == "sk-test"
    with pytest.raises(ConfigError, match="environment variable MY_KEY is not set"):
        build_chat_model("a", entry, {})
    with pytest.raises(ConfigError, match=r"set base_url \(a local OpenAI-compatible server\) or api_key_env"):
        build_chat_model("o", ModelConfig(model="gpt"), {})
    with pytest.raises(ConfigError, match="model is empty"):
        build_chat_model("o", ModelConfig(base_url="http://x/v1"), {})


async def test_replay_script_answers_every_role_in_file_order(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"role": "coder", "match": "second", "answer": "coder second"},
            {"role": "coder", "answer": {"status": "success", "summary": "x"}},
            {"role": "*", "answer": "anyone", "repeat": True},
        ],
    )
    reg = registry(PipelineConfig(replay_script=str(script)))
    coder = reg.caller("coder")
    assert coder is not None and reg.caller("retrieval") is None
    assert await coder.complete([HumanMessage(content="first")]) == '{"status": "success", "summary": "x"}'
    assert await coder.complete([HumanMessage(content="the second")]) == "coder second"
    assert await coder.complete([HumanMessage(content="third")]) == "anyone"
    reviewer = reg.caller("reviewer")
    assert reviewer is not None and await reviewer.complete([HumanMessage(content="x")]) == "anyone"


def test_an_exhausted_script_names_the_file_and_the_role(tmp_path: Path) -> None:
    path = write_script(tmp_path / "s.yaml", [{"role": "coder", "answer": "once"}])
    script = ReplayScript.load(path)
    assert script.take("coder", "p").answer == "once"
    with pytest.raises(ReplayExhausted, match=rf"{path.name} has no unused answer for role 'coder'"):
        script.take("coder", "Stage: implementation")


def test_bad_replay_scripts_are_config_errors(tmp_path: Path) -> None:
    (tmp_path / "both.yaml").write_text("- {role: x, answer: a, error: b}\n")
    with pytest.raises(ConfigError, match="exactly one of 'answer' or 'error'"):
        ReplayScript.load(tmp_path / "both.yaml")
    with pytest.raises(ConfigError, match="cannot be read"):
        ReplayScript.load(tmp_path / "missing.yaml")


class Pair(BaseModel):
    a: int
    b: str


@pytest.mark.parametrize(
    "text",
    ['{"a": 1, "b": "x"}', 'Sure!\n```json\n{"a": 1, "b": "x"}\n```', 'Here you go: {"a": 1, "b": "x"} -- done'],
)
def test_json_is_found_bare_fenced_or_inside_prose(text: str) -> None:
    assert parse_answer(text, Pair) == Pair(a=1, b="x")


def test_answers_without_json_or_with_the_wrong_shape_explain_the_problem() -> None:
    with pytest.raises(AnswerInvalid, match="no JSON object"):
        extract_json("I cannot answer that.")
    with pytest.raises(AnswerInvalid, match="'a': Input should be a valid integer"):
        parse_answer('{"a": "one", "b": "x"}', Pair)


def test_the_replay_script_can_be_chosen_by_environment_variable(tmp_path: Path) -> None:
    from daemon.config import load_config

    script = write_script(tmp_path / "s.yaml", [{"role": "*", "answer": "hi", "repeat": True}])
    config = load_config(tmp_path, env={"HOME": str(tmp_path), "IDED_PIPELINE__REPLAY_SCRIPT": str(script)})
    assert config.pipeline.replay_script == str(script)
    assert registry(config.pipeline).caller("orchestrator") is not None
