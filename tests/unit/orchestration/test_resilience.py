"""The resilience layer over scripted chat models: cache, retries with backoff, breaker, fallbacks, limits."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import PrivateAttr

from daemon.config import ResilienceConfig
from daemon.errors import ErrorCode, PipelineError
from daemon.orchestration.replay_provider import ReplayChatModel, ReplayEntry, ReplayScript
from daemon.orchestration.resilience import CircuitBreaker, ModelEndpoint, ResilienceLayer, ResponseCache
from tests.scripted_models import AsyncScriptedChatModel

PROMPT = [HumanMessage(content="hello")]


def endpoint(name: str, script: ReplayScript, *, timeout: float = 10.0, provider_key: str = "p") -> ModelEndpoint:
    return ModelEndpoint(
        name=name,
        provider="replay",
        model=name,
        chat_model=ReplayChatModel(script=script, role=name),
        timeout_seconds=timeout,
        provider_key=provider_key,
    )


def config(**over: Any) -> ResilienceConfig:
    base: dict[str, Any] = {"cache": False, "max_retries": 2, "backoff_initial_seconds": 0.5, "backoff_max_seconds": 4}
    return ResilienceConfig(**{**base, **over})


class RecordingSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


async def test_identical_prompts_are_answered_from_the_cache() -> None:
    script = ReplayScript([ReplayEntry(role="a", answer="first"), ReplayEntry(role="a", answer="second")])
    layer = ResilienceLayer(config(cache=True))
    chain = [endpoint("a", script)]
    assert await layer.call(chain, PROMPT, role="r") == "first"
    assert await layer.call(chain, PROMPT, role="r") == "first"
    assert await layer.call(chain, [HumanMessage(content="other")], role="r") == "second"
    assert layer.stats.cache_hits == 1 and layer.stats.calls == 2


def test_the_cache_persists_across_processes_in_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    first = ResponseCache(10, path)
    first.put("k", "answer")
    first.close()
    second = ResponseCache(10, path)
    assert second.get("k") == "answer"
    assert second.get("missing") is None
    second.close()


async def test_failed_calls_are_retried_with_exponential_backoff() -> None:
    script = ReplayScript(
        [ReplayEntry(role="a", error="503"), ReplayEntry(role="a", error="503"), ReplayEntry(role="a", answer="ok")]
    )
    sleep = RecordingSleep()
    layer = ResilienceLayer(config(), sleep=sleep)
    assert await layer.call([endpoint("a", script)], PROMPT, role="r") == "ok"
    assert layer.stats.retries == 2
    assert len(sleep.delays) == 2
    assert 0.25 <= sleep.delays[0] <= 0.5 and 0.5 <= sleep.delays[1] <= 1.0


async def test_every_endpoint_failing_is_a_model_unavailable_error_naming_each_failure() -> None:
    script = ReplayScript([ReplayEntry(role="*", error="boom", repeat=True)])
    layer = ResilienceLayer(config(max_retries=1), sleep=RecordingSleep())
    with pytest.raises(PipelineError) as caught:
        await layer.call([endpoint("a", script), endpoint("b", script)], PROMPT, role="coder")
    assert caught.value.code is ErrorCode.MODEL_UNAVAILABLE
    assert "no model answered for role 'coder'" in caught.value.message
    assert "a (replay:a) attempt 2: ScriptedFailure: boom" in caught.value.message
    assert "b (replay:b) attempt 1" in caught.value.message


async def test_an_open_circuit_fails_fast_and_the_fallback_answers_until_the_reset() -> None:
    now = [0.0]
    script = ReplayScript(
        [
            ReplayEntry(role="primary", error="down", repeat=True),
            ReplayEntry(role="backup", answer="from backup", repeat=True),
        ]
    )
    layer = ResilienceLayer(
        config(max_retries=0, breaker_failure_threshold=2, breaker_reset_seconds=30), clock=lambda: now[0]
    )
    chain = [endpoint("primary", script), endpoint("backup", script)]
    for _ in range(2):
        assert await layer.call(chain, PROMPT, role="r") == "from backup"
    assert layer.breaker(chain[0]).state == "open"
    calls_before = len(script.calls)
    assert await layer.call(chain, PROMPT, role="r") == "from backup"
    assert [role for role, _ in script.calls[calls_before:]] == ["backup"]  # primary was not called
    assert layer.stats.circuit_refusals == 1
    now[0] = 31.0
    assert layer.breaker(chain[0]).state == "half_open"
    await layer.call(chain, PROMPT, role="r")
    assert script.calls[-2][0] == "primary"  # one trial call, which failed again
    assert layer.breaker(chain[0]).state == "open"


def test_a_successful_trial_call_closes_the_circuit() -> None:
    now = [0.0]
    breaker = CircuitBreaker(1, 10, clock=lambda: now[0])
    breaker.record_failure()
    assert not breaker.allow()
    now[0] = 10.0
    assert breaker.allow() and not breaker.allow()  # one trial at a time
    breaker.record_success()
    assert breaker.state == "closed" and breaker.allow()


async def test_a_call_past_its_timeout_counts_as_a_failure() -> None:
    script = ReplayScript(
        [ReplayEntry(role="slow", answer="late", delay_seconds=30), ReplayEntry(role="fast", answer="ok")]
    )
    layer = ResilienceLayer(config(max_retries=0))
    chain = [endpoint("slow", script, timeout=0.05), endpoint("fast", script)]
    assert await layer.call(chain, PROMPT, role="r") == "ok"
    assert layer.stats.failures == 1 and layer.stats.fallbacks == 1


class BlockingChatModel(AsyncScriptedChatModel):
    """A scripted LLM whose calls wait for the test, to observe how many run at once."""

    _release: asyncio.Event = PrivateAttr(default_factory=asyncio.Event)
    _in_flight: int = PrivateAttr(default=0)
    _arrived: asyncio.Queue[int] = PrivateAttr(default_factory=lambda: asyncio.Queue[int]())

    async def answer(self, messages: list[BaseMessage]) -> AIMessage:
        self._in_flight += 1
        self._arrived.put_nowait(self._in_flight)
        await self._release.wait()
        self._in_flight -= 1
        return AIMessage(content="ok")


async def test_calls_per_provider_are_limited_to_the_configured_concurrency() -> None:
    model = BlockingChatModel()
    layer = ResilienceLayer(config(max_concurrency_per_provider=2))
    chain = [ModelEndpoint(name="m", provider="x", model="m", chat_model=model, provider_key="x:local")]
    calls = [asyncio.create_task(layer.call(chain, [HumanMessage(content=str(i))], role="r")) for i in range(5)]
    async with asyncio.timeout(10):
        first, second = await model._arrived.get(), await model._arrived.get()
    assert (first, second) == (1, 2)
    model._release.set()
    assert await asyncio.wait_for(asyncio.gather(*calls), 10) == ["ok"] * 5
    assert layer.stats.max_in_flight["x:local"] == 2
