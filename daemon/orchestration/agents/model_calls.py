"""Tool-calling model calls with the same resilience as every other model call of a runtime.

A role's chain of endpoints (its model, then its fallbacks) is tried in order; each endpoint's call
runs under its timeout, is retried ``max_retries`` times with exponential backoff, and counts
toward the endpoint's circuit breaker and the layer's statistics (the shared ``ResilienceLayer``).
Answers are not cached: a tool-calling conversation has side effects between its turns.

Each endpoint's model is bound to the tools with ``bind_tools``; a model that cannot bind tools
(``NotImplementedError``: scripted test models, some local servers) is called as is, and any tool
calls it still returns are honoured.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

from daemon.errors import ErrorCode, PipelineError
from daemon.orchestration.resilience import ModelEndpoint, ResilienceLayer

__all__ = ["ToolCallingModel", "estimate_tokens"]

logger = logging.getLogger(__name__)


def estimate_tokens(messages: Sequence[BaseMessage], answer: AIMessage) -> int:
    """The provider's token count when it reports one, else about four characters per token."""
    usage = answer.usage_metadata
    if usage is not None:
        return int(usage.get("total_tokens", 0))
    chars = sum(len(str(m.content)) for m in messages) + len(str(answer.content)) + len(str(answer.tool_calls))
    return max(1, chars // 4)


class ToolCallingModel:
    """One role's endpoint chain, bound to one set of tools."""

    def __init__(
        self, chain: Sequence[ModelEndpoint], layer: ResilienceLayer, *, role: str, tools: Sequence[BaseTool]
    ) -> None:
        if not chain:
            raise ValueError(f"role {role}: empty model chain")
        self._chain = tuple(chain)
        self._layer = layer
        self.role = role
        self._bound: list[Runnable[LanguageModelInput, Any]] = [self._bind(e, tools) for e in self._chain]

    @staticmethod
    def _bind(endpoint: ModelEndpoint, tools: Sequence[BaseTool]) -> Runnable[LanguageModelInput, Any]:
        if not tools:
            return endpoint.chat_model
        try:
            return endpoint.chat_model.bind_tools(list(tools))
        except NotImplementedError:
            logger.debug("%s cannot bind tools; calling it without tool schemas", endpoint.label)
            return endpoint.chat_model

    @property
    def label(self) -> str:
        return self._chain[0].label

    async def _call(
        self, endpoint: ModelEndpoint, runnable: Runnable[LanguageModelInput, Any], messages: Sequence[BaseMessage]
    ) -> Any:
        self._layer.stats.calls += 1
        return await asyncio.wait_for(runnable.ainvoke(list(messages)), endpoint.timeout_seconds)

    async def invoke(self, messages: Sequence[BaseMessage]) -> AIMessage:
        """The first answer along the chain; ``PipelineError(model_unavailable)`` when none comes."""
        layer = self._layer
        problems: list[str] = []
        for position, (endpoint, runnable) in enumerate(zip(self._chain, self._bound, strict=True)):
            if position:
                layer.stats.fallbacks += 1
            call = functools.partial(self._call, endpoint, runnable, messages)
            answered = await layer.attempt(endpoint, call, problems, jitter=False)
            if answered is not None:
                (answer,) = answered
                if isinstance(answer, AIMessage):
                    return answer
                return AIMessage(content=str(getattr(answer, "content", answer)))
        raise PipelineError(
            f"no model answered for role '{self.role}': " + "; ".join(problems[-6:]),
            code=ErrorCode.MODEL_UNAVAILABLE,
        )
