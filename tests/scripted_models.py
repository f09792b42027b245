"""The base of the tests' hand-scripted chat models (the one sanctioned double): async only, one answer per call."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict

__all__ = ["AsyncScriptedChatModel"]


class AsyncScriptedChatModel(BaseChatModel):
    """Subclasses script ``answer``; the sync path is refused (the pipeline calls models asynchronously)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    @property
    def _llm_type(self) -> str:
        return f"test-{type(self).__name__}"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        raise NotImplementedError("async only")

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=await self.answer(messages))])

    async def answer(self, messages: list[BaseMessage]) -> AIMessage:
        raise NotImplementedError(f"{type(self).__name__} scripts no answer")
