"""Every model call goes through here: cache, concurrency limit, timeout, retries, circuit breaker, fallbacks.

For one call over a chain of endpoints (a role's model, then its ``fallbacks`` in order):

1. an answer cached for the same endpoint and the same messages (content hash) is returned as is;
2. an endpoint whose circuit is open is skipped (it failed ``breaker_failure_threshold`` times in a
   row; after ``breaker_reset_seconds`` one trial call is let through, half-open);
3. otherwise the call runs under the provider's semaphore (``max_concurrency_per_provider`` calls in
   flight per provider endpoint) with the endpoint's timeout, and is retried ``max_retries`` times
   with exponential backoff (``backoff_initial_seconds`` doubling up to ``backoff_max_seconds``);
4. when every endpoint failed, ``PipelineError(model_unavailable)`` names each failure.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import random
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from daemon.config import ResilienceConfig
from daemon.core.lru import LruMap
from daemon.core.models import content_hash
from daemon.errors import ErrorCode, PipelineError

__all__ = [
    "ChatCaller",
    "CircuitBreaker",
    "ModelEndpoint",
    "ResilienceLayer",
    "ResilienceStats",
    "ResilientChat",
    "ResponseCache",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")


class ChatCaller(Protocol):
    """What the pipeline calls a model through: messages in, the answer's text out."""

    @property
    def label(self) -> str: ...

    async def complete(self, messages: Sequence[BaseMessage]) -> str: ...


@dataclass(frozen=True, kw_only=True, eq=False)
class ModelEndpoint:
    """One configured chat model."""

    name: str
    provider: str
    model: str
    chat_model: BaseChatModel
    timeout_seconds: float = 120.0
    provider_key: str = ""

    @property
    def label(self) -> str:
        return f"{self.name} ({self.provider}:{self.model})"

    @property
    def concurrency_key(self) -> str:
        return self.provider_key or self.provider


class ResponseCache:
    """Answers keyed by a content hash of endpoint + messages: an LRU in memory, optionally persisted in SQLite."""

    def __init__(self, max_entries: int, path: Path | None = None) -> None:
        self._max = max_entries
        self._memory: LruMap[str, str] = LruMap(max_entries)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if path is not None and max_entries > 0:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, check_same_thread=False, timeout=5.0)
            self._db.execute("CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)")
            self._db.commit()

    @staticmethod
    def key(endpoint: ModelEndpoint, messages: Sequence[BaseMessage]) -> str:
        payload = {
            "endpoint": [endpoint.provider, endpoint.model, endpoint.provider_key],
            "messages": [[m.type, m.content] for m in messages],
        }
        return content_hash(json.dumps(payload, sort_keys=True, ensure_ascii=False))

    def get(self, key: str) -> str | None:
        with self._lock:
            known = self._memory.get(key)
            if known is not None:
                return known
            if self._db is None:
                return None
            row = self._db.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        answer = str(row[0])
        self._remember(key, answer)
        return answer

    def put(self, key: str, answer: str) -> None:
        if self._max <= 0:
            return
        self._remember(key, answer)
        with self._lock:
            if self._db is not None:
                self._db.execute("INSERT OR REPLACE INTO answers (key, answer) VALUES (?, ?)", (key, answer))
                self._db.commit()

    def _remember(self, key: str, answer: str) -> None:
        with self._lock:
            self._memory.put(key, answer)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


class CircuitBreaker:
    """Closed -> open after ``threshold`` consecutive failures -> half-open after ``reset_seconds`` (one trial)."""

    def __init__(self, threshold: int, reset_seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._threshold = threshold
        self._reset = reset_seconds
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._trial_in_flight = False

    @property
    def state(self) -> str:
        if self._opened_at is None:
            return "closed"
        return "half_open" if self._clock() - self._opened_at >= self._reset else "open"

    def allow(self) -> bool:
        state = self.state
        if state == "closed":
            return True
        if state == "half_open" and not self._trial_in_flight:
            self._trial_in_flight = True
            return True
        return False

    def record_success(self) -> None:
        self._failures = 0
        self._opened_at = None
        self._trial_in_flight = False

    def record_failure(self) -> None:
        self._failures += 1
        if self._trial_in_flight or self._failures >= self._threshold:
            self._opened_at = self._clock()
        self._trial_in_flight = False


@dataclass
class ResilienceStats:
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    fallbacks: int = 0
    circuit_refusals: int = 0
    max_in_flight: dict[str, int] = field(default_factory=dict[str, int])


def _answer_text(message: BaseMessage) -> str:
    return str(message.text)


class ResilienceLayer:
    """Shared by every role of one runtime: semaphores per provider, breakers per endpoint, one cache."""

    def __init__(
        self,
        config: ResilienceConfig,
        *,
        cache_path: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.config = config
        self.cache = ResponseCache(config.cache_max_entries, cache_path) if config.cache else None
        self.stats = ResilienceStats()
        self._clock = clock
        self._sleep = sleep
        self._semaphores: dict[str, asyncio.Semaphore] = {}
        self._in_flight: dict[str, int] = {}
        self._breakers: dict[str, CircuitBreaker] = {}

    def breaker(self, endpoint: ModelEndpoint) -> CircuitBreaker:
        if endpoint.name not in self._breakers:
            self._breakers[endpoint.name] = CircuitBreaker(
                self.config.breaker_failure_threshold, self.config.breaker_reset_seconds, self._clock
            )
        return self._breakers[endpoint.name]

    def _semaphore(self, key: str) -> asyncio.Semaphore:
        if key not in self._semaphores:
            self._semaphores[key] = asyncio.Semaphore(self.config.max_concurrency_per_provider)
        return self._semaphores[key]

    def _backoff(self, attempt: int, *, jitter: bool) -> float:
        base = min(self.config.backoff_max_seconds, self.config.backoff_initial_seconds * (2**attempt))
        return base * (0.5 + random.random() / 2) if jitter else base  # jitter, not security

    async def attempt(
        self, endpoint: ModelEndpoint, call: Callable[[], Awaitable[T]], problems: list[str], *, jitter: bool = True
    ) -> tuple[T] | None:
        """``call``'s answer from ``endpoint`` (as a 1-tuple), retried with backoff while the endpoint's
        circuit breaker allows; None once the retries are spent or the circuit is open, each failure
        added to ``problems``."""
        breaker = self.breaker(endpoint)
        for attempt in range(self.config.max_retries + 1):
            if not breaker.allow():
                self.stats.circuit_refusals += 1
                problems.append(f"{endpoint.label}: circuit open after repeated failures")
                return None
            try:
                answer = await call()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the provider seam: any client error becomes a recorded failure
                breaker.record_failure()
                self.stats.failures += 1
                reason = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
                problems.append(f"{endpoint.label} attempt {attempt + 1}: {reason}")
                logger.warning("model call failed (%s, attempt %d): %s", endpoint.label, attempt + 1, reason)
                if attempt < self.config.max_retries:
                    self.stats.retries += 1
                    await self._sleep(self._backoff(attempt, jitter=jitter))
                continue
            breaker.record_success()
            return (answer,)
        return None

    async def _invoke(self, endpoint: ModelEndpoint, messages: Sequence[BaseMessage]) -> str:
        key = endpoint.concurrency_key
        async with self._semaphore(key):
            self._in_flight[key] = self._in_flight.get(key, 0) + 1
            self.stats.max_in_flight[key] = max(self.stats.max_in_flight.get(key, 0), self._in_flight[key])
            try:
                self.stats.calls += 1
                message = await asyncio.wait_for(endpoint.chat_model.ainvoke(list(messages)), endpoint.timeout_seconds)
            finally:
                self._in_flight[key] -= 1
        return _answer_text(message)

    async def call(self, chain: Sequence[ModelEndpoint], messages: Sequence[BaseMessage], *, role: str) -> str:
        """The first answer along ``chain``; ``PipelineError(model_unavailable)`` when none comes."""
        problems: list[str] = []
        for position, endpoint in enumerate(chain):
            if position:
                self.stats.fallbacks += 1
                logger.info("role %s falls back to %s", role, endpoint.label)
            key = ResponseCache.key(endpoint, messages) if self.cache is not None else ""
            if self.cache is not None:
                cached = await asyncio.to_thread(self.cache.get, key)
                if cached is not None:
                    self.stats.cache_hits += 1
                    return cached
            answered = await self.attempt(endpoint, functools.partial(self._invoke, endpoint, messages), problems)
            if answered is not None:
                if self.cache is not None:
                    await asyncio.to_thread(self.cache.put, key, answered[0])
                return answered[0]
        raise PipelineError(
            f"no model answered for role '{role}': " + "; ".join(problems[-6:]),
            code=ErrorCode.MODEL_UNAVAILABLE,
        )

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()


class ResilientChat:
    """A role's ``ChatCaller``: its endpoint chain behind the shared resilience layer."""

    def __init__(self, layer: ResilienceLayer, chain: Sequence[ModelEndpoint], *, role: str) -> None:
        if not chain:
            raise ValueError(f"role {role}: empty model chain")
        self._layer = layer
        self._chain = tuple(chain)
        self.role = role

    @property
    def label(self) -> str:
        return self._chain[0].label

    @property
    def chain(self) -> tuple[ModelEndpoint, ...]:
        return self._chain

    async def complete(self, messages: Sequence[BaseMessage]) -> str:
        return await self._layer.call(self._chain, messages, role=self.role)
