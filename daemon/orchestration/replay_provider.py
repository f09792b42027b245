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
  - role: coder
    match: "Attempt: 1\\b"
    say: "Adding the function."           # optional text beside the tool calls
    tool_calls:                           # a tool-calling turn: the agent runs these, then asks again
      - {name: write_file, args: {path: src/calc.py, content: "def add(a, b):\\n    return a + b\\n"}}
      - {name: run_command, args: {name: test}}
```

A call takes the first entry, in file order, whose role and ``match`` fit and which is not used up.
Entries are used up per run (``daemon.orchestration.current_run``): every run a long-lived daemon executes
reads the script as written, while a run's retries, resumption and feedback go on where it left off.
Mappings and lists are sent as JSON text. No fitting entry is an error naming the script and role.
A top-level list is read as the ``responses`` list. ``record_tools: tools.jsonl`` (beside the script)
appends, each time a role's model is given tools, ``{"role": ..., "tools": [names]}``: what a real
provider would have been sent, for tests that check each front hands agents the same tools.
The model binds any tools (``bind_tools``) and
answers with the scripted ``tool_calls`` whatever tools were bound; a tool-calling agent's next turn
sees the tools' answers in its prompt, so a later entry can ``match`` on them (``exited with code 1``).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import yaml
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolCall
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import ConfigDict, Field, ValidationError, model_validator

from daemon.core.frozen_model import FrozenModel
from daemon.core.lru import LruMap
from daemon.errors import ConfigError
from daemon.orchestration.current_run import CURRENT_RUN

__all__ = ["ReplayChatModel", "ReplayEntry", "ReplayExhausted", "ReplayScript", "ReplayToolCall", "ScriptedFailure"]


_RUNS_KEPT = 1024
"""Runs whose used-up entries are remembered (the oldest are forgotten first)."""


class ReplayExhausted(RuntimeError):
    """No scripted answer fits the call."""


class ScriptedFailure(RuntimeError):
    """An ``error:`` entry: the provider failure the script asks for."""


class ReplayToolCall(FrozenModel):
    """One scripted tool call."""

    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict[str, Any])


class ReplayEntry(FrozenModel):
    role: str = "*"
    match: str | None = Field(default=None, description="Regex searched in the prompt (all messages).")
    answer: str | dict[str, Any] | list[Any] | None = None
    error: str | None = None
    tool_calls: tuple[ReplayToolCall, ...] = Field(default=(), description="A tool-calling turn.")
    say: str | None = Field(default=None, description="Text sent beside the tool calls.")
    repeat: bool = False
    delay_seconds: float = Field(default=0.0, ge=0, le=600)

    @model_validator(mode="after")
    def _one_outcome(self) -> ReplayEntry:
        outcomes = (self.answer is not None) + (self.error is not None) + bool(self.tool_calls)
        if outcomes != 1:
            raise ValueError("give exactly one of 'answer' or 'error' (or 'tool_calls' for a tool-calling turn)")
        if self.match is not None:
            re.compile(self.match)
        return self

    def text(self) -> str:
        if self.tool_calls:
            return self.say or ""
        if isinstance(self.answer, str):
            return self.answer
        return json.dumps(self.answer, ensure_ascii=False)


class _ScriptFile(FrozenModel):
    responses: tuple[ReplayEntry, ...]
    record_tools: str | None = None


class ReplayScript:
    """The entries of one script file and which of them are used up (shared by every role)."""

    def __init__(
        self, entries: Sequence[ReplayEntry], *, source: str = "<memory>", tools_log: Path | None = None
    ) -> None:
        self.entries = tuple(entries)
        self.source = source
        self.tools_log = tools_log
        self._used: LruMap[str | None, set[int]] = LruMap(_RUNS_KEPT)
        """The entries used up, per run (None: calls made outside a run)."""
        self._lock = threading.Lock()
        self.calls: list[tuple[str, int]] = []
        self.counter_lock = threading.Lock()
        self.tool_call_count = 0

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
        log = None if script.record_tools is None else path.parent / script.record_tools
        return cls(script.responses, source=str(path), tools_log=log)

    def record_tools(self, role: str, names: Sequence[str]) -> None:
        """Append the tools a ``role`` model was offered to ``record_tools`` (a JSON line), when the script asks."""
        if self.tools_log is None:
            return
        line = json.dumps({"role": role, "tools": list(names)}) + "\n"
        with self._lock, self.tools_log.open("a", encoding="utf-8") as out:
            out.write(line)

    def take(self, role: str, prompt: str) -> ReplayEntry:
        """The first fitting entry not used up in the current run (see the module docstring)."""
        with self._lock:
            scope = CURRENT_RUN.get()
            used = self._used.get(scope)
            if used is None:
                used = set[int]()
                self._used.put(scope, used)
            for index, entry in enumerate(self.entries):
                if index in used or entry.role not in ("*", role):
                    continue
                if entry.match is not None and not re.search(entry.match, prompt):
                    continue
                if not entry.repeat:
                    used.add(index)
                self.calls.append((role, index))
                return entry
        first_line = next((line for line in prompt.splitlines() if line.strip()), "")[:120]
        raise ReplayExhausted(
            f"replay script {self.source} has no unused answer for role '{role}' matching the prompt "
            f"(it starts: {first_line!r})"
        )


def _prompt_text(messages: Sequence[BaseMessage]) -> str:
    return "\n".join(str(m.text) for m in messages)


def _tool_name(tool: dict[str, Any] | type | Callable[..., Any] | BaseTool) -> str:
    if isinstance(tool, BaseTool):
        return tool.name
    if isinstance(tool, dict):
        described = cast("dict[str, Any]", tool)
        function: Any = described.get("function")
        if isinstance(function, dict):
            described = cast("dict[str, Any]", function)
        return str(described.get("name", "?"))
    return getattr(tool, "__name__", "?")


class ReplayChatModel(BaseChatModel):
    """A LangChain chat model over a ``ReplayScript`` for one role."""

    script: ReplayScript
    role: str

    model_config = ConfigDict(arbitrary_types_allowed=True)

    @property
    def _llm_type(self) -> str:
        return "ided-replay"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """The script decides which tools are called; binding only has to be accepted (and is recorded)."""
        self.script.record_tools(self.role, [_tool_name(tool) for tool in tools])
        return self

    def _result(self, entry: ReplayEntry) -> ChatResult:
        if entry.error is not None:
            raise ScriptedFailure(entry.error)
        with self.script.counter_lock:
            self.script.tool_call_count += len(entry.tool_calls)
            first = self.script.tool_call_count - len(entry.tool_calls)
        calls = [
            ToolCall(name=c.name, args=dict(c.args), id=f"replay-{first + i + 1}", type="tool_call")
            for i, c in enumerate(entry.tool_calls)
        ]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=entry.text(), tool_calls=calls))])

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
