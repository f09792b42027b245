"""The replay provider: a chat model that answers from a scripted JSON/YAML file.

For tests and demos driven from outside Python (a GUI, a shell script): set
``pipeline.replay_script`` (or ``IDED_PIPELINE__REPLAY_SCRIPT``) and every role answers from it.

```yaml
responses:
  - role: orchestrator                  # which role may use it; "*" (default) for any
    answer: {workflow: bug_fix, stage_decisions: [], rationale: "a crash report"}
  - role: coder
    match: "Attempt: 1\\b"              # optional regex, searched in the whole prompt
    answer: {status: failure, summary: "does not compile"}
  - role: "*"
    answer: {status: success, summary: "done"}
    repeat: true                        # never used up (default: each entry answers once)
    delay_seconds: 0.5                  # simulated latency
  - role: reviewer
    error: "503 service unavailable"    # raise instead of answering (a provider failure)
```

A call takes the first entry, in file order, whose role and ``match`` fit and which is not used up.
Mappings and lists are sent as JSON text. No fitting entry is an error naming the script and role.
A top-level list is read as the ``responses`` list.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import yaml
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from daemon.errors import ConfigError

__all__ = ["ReplayChatModel", "ReplayEntry", "ReplayExhausted", "ReplayScript", "ScriptedFailure"]

logger = logging.getLogger(__name__)


class ReplayExhausted(RuntimeError):
    """No scripted answer fits the call."""


class ScriptedFailure(RuntimeError):
    """An ``error:`` entry: the provider failure the script asks for."""


class ReplayEntry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    role: str = "*"
    match: str | None = Field(default=None, description="Regex searched in the prompt (all messages).")
    answer: str | dict[str, Any] | list[Any] | None = None
    error: str | None = None
    repeat: bool = False
    delay_seconds: float = Field(default=0.0, ge=0, le=600)

    @model_validator(mode="after")
    def _one_outcome(self) -> ReplayEntry:
        if (self.answer is None) == (self.error is None):
            raise ValueError("give exactly one of 'answer' or 'error'")
        if self.match is not None:
            re.compile(self.match)
        return self

    def text(self) -> str:
        if isinstance(self.answer, str):
            return self.answer
        return json.dumps(self.answer, ensure_ascii=False)


class _ScriptFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    responses: tuple[ReplayEntry, ...]


class ReplayScript:
    """The entries of one script file and which of them are used up (shared by every role)."""

    def __init__(self, entries: Sequence[ReplayEntry], *, source: str = "<memory>") -> None:
        self.entries = tuple(entries)
        self.source = source
        self._used: set[int] = set()
        self._lock = threading.Lock()
        self.calls: list[tuple[str, int]] = []

    @classmethod
    def load(cls, path: Path) -> ReplayScript:
        try:
            raw: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"replay script {path} cannot be read", cause=exc) from exc
        if isinstance(raw, list):
            raw = {"responses": cast("list[object]", raw)}
        try:
            script = _ScriptFile.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"replay script {path}: '{where}': {first['msg']}") from exc
        return cls(script.responses, source=str(path))

    def take(self, role: str, prompt: str) -> ReplayEntry:
        with self._lock:
            for index, entry in enumerate(self.entries):
                if index in self._used or entry.role not in ("*", role):
                    continue
                if entry.match is not None and not re.search(entry.match, prompt):
                    continue
                if not entry.repeat:
                    self._used.add(index)
                self.calls.append((role, index))
                return entry
        first_line = next((line for line in prompt.splitlines() if line.strip()), "")[:120]
        raise ReplayExhausted(
            f"replay script {self.source} has no unused answer for role '{role}' matching the prompt "
            f"(it starts: {first_line!r})"
        )


def _prompt_text(messages: Sequence[BaseMessage]) -> str:
    return "\n".join(str(m.text) for m in messages)


class ReplayChatModel(BaseChatModel):
    """A LangChain chat model over a ``ReplayScript`` for one role."""

    script: ReplayScript
    role: str

    model_config = ConfigDict(arbitrary_types_allowed=True)

    @property
    def _llm_type(self) -> str:
        return "ided-replay"

    def _result(self, entry: ReplayEntry) -> ChatResult:
        if entry.error is not None:
            raise ScriptedFailure(entry.error)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=entry.text()))])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        entry = self.script.take(self.role, _prompt_text(messages))
        if entry.delay_seconds:
            time.sleep(entry.delay_seconds)
        return self._result(entry)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        entry = self.script.take(self.role, _prompt_text(messages))
        if entry.delay_seconds:
            await asyncio.sleep(entry.delay_seconds)
        return self._result(entry)
