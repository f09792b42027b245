"""The tools of one agent attempt, and how each call is executed and reported.

Built-in tools: ``read_file`` and ``list_files`` (always, when the run has files), ``write_file`` and
``replace_in_file`` (code-mode runs, editing stages), ``run_command`` (code-mode runs, stages that
run checks). The host adds its own tools (ided's code-intel and search tools, the client's MCP
tools); those that carry ``metadata["ided_code_intel"]`` are offered exactly as the workflow lists
them for the agent (``mcp_tools``; none when it lists none).

``Toolbox.call`` runs one tool call: it reports ``tool_call`` (in progress, with kind, title,
locations and the raw input), runs the tool under a timeout, and reports ``tool_call_update``
(completed or failed, with the output capped). A failing tool never ends the agent: the error
text goes back to the model as the tool's answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, ConfigDict, Field

from daemon.errors import DaemonError
from daemon.orchestration.agents.commands import CommandResult, CommandRunner
from daemon.orchestration.agents.events import (
    AgentEvents,
    AgentRef,
    ToolCallEvent,
    ToolCallLocation,
    ToolKindName,
)
from daemon.orchestration.agents.workspace_files import RunFiles

__all__ = ["CODE_INTEL_MARK", "EVENT_OUTPUT_CHARS", "TOOL_KIND_KEY", "Toolbox"]

logger = logging.getLogger(__name__)

CODE_INTEL_MARK = "ided_code_intel"
"""``BaseTool.metadata`` key of the host's code-intel tools (filtered by the workflow's ``mcp_tools``)."""
TOOL_KIND_KEY = "tool_kind"
"""``BaseTool.metadata`` key naming a tool's kind (read, edit, search, execute, ...); default other."""
EVENT_OUTPUT_CHARS = 8000
"""A tool-call update carries at most this much output (the model gets the whole answer)."""
MODEL_OUTPUT_CHARS = 60_000
"""A tool's answer to the model is cut to this."""
TOOL_TIMEOUT_S = 120.0
"""Upper bound for one non-command tool call (commands have their own timeout)."""


def _tool(method: Callable[..., Awaitable[str]], args: type[BaseModel], description: str) -> BaseTool:
    """A built-in tool: the bound ``method`` (its name less the leading ``_``), called with ``args``."""
    name = method.__name__.removeprefix("_")
    return StructuredTool.from_function(coroutine=method, name=name, description=description, args_schema=args)


_KINDS: dict[str, ToolKindName] = {
    "read_file": "read",
    "list_files": "read",
    "write_file": "edit",
    "replace_in_file": "edit",
    "run_command": "execute",
}


class _ReadArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="Workspace-relative file path.")
    start_line: int | None = Field(default=None, ge=1, description="First line to return (1-based).")
    end_line: int | None = Field(default=None, ge=1, description="Last line to return (inclusive).")


class _ListArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(default=".", description="Workspace-relative directory.")
    pattern: str | None = Field(default=None, description="Glob over the relative paths or names, e.g. '*.py'.")
    recursive: bool = Field(default=False, description="Descend into subdirectories.")


class _WriteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="Workspace-relative file path (created with its directories).")
    content: str = Field(description="The whole new content of the file.")


class _ReplaceArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="Workspace-relative file path.")
    old_text: str = Field(description="Exact text to replace (whitespace included); must occur once.")
    new_text: str = Field(description="Replacement text.")
    replace_all: bool = Field(default=False, description="Replace every occurrence instead of exactly one.")


class _CommandArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(description="A configured command name, e.g. test.")
    args: list[str] = Field(default_factory=list[str], description="Extra arguments appended to the command line.")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json(exclude_none=True)
    return json.dumps(value, ensure_ascii=False, default=str)


def _locations_in(value: Any, out: list[ToolCallLocation], limit: int = 20) -> None:
    """Every ``{path, line|start_line|range.start_line}`` object found in a JSON-like value (tool results)."""
    if len(out) >= limit:
        return
    if isinstance(value, dict):
        obj = cast("dict[str, Any]", value)
        path = obj.get("path")
        if isinstance(path, str) and path:
            line = obj.get("line", obj.get("start_line"))
            span = obj.get("range")
            if line is None and isinstance(span, dict):
                line = cast("dict[str, Any]", span).get("start_line")
            location = ToolCallLocation(path=path, line=line if isinstance(line, int) else None)
            if location not in out:
                out.append(location)
        for item in obj.values():
            _locations_in(item, out, limit)
    elif isinstance(value, list):
        for item in cast("list[Any]", value):
            _locations_in(item, out, limit)


class Toolbox:
    """One agent attempt's tools, the commands it ran and the files it wrote."""

    def __init__(
        self,
        *,
        agent: AgentRef,
        events: AgentEvents,
        files: RunFiles | None,
        commands: CommandRunner | None,
        editable: bool,
        extra_tools: Sequence[BaseTool] = (),
        allowed_intel: Sequence[str] = (),
    ) -> None:
        self.agent = agent
        self._events = events
        self._files = files
        self._commands = commands
        self.commands_run: list[CommandResult] = []
        self.tools_used: list[str] = []
        self.files_written: list[str] = []
        self._counter = 0
        tools: list[BaseTool] = []
        if files is not None:
            tools += [
                _tool(self._read_file, _ReadArgs, "Read a text file of the workspace (optionally a line range)."),
                _tool(self._list_files, _ListArgs, "List a directory of the workspace (directories end with '/')."),
            ]
            if editable:
                tools += [
                    _tool(self._write_file, _WriteArgs, "Create or overwrite a file with the given content."),
                    _tool(
                        self._replace_in_file,
                        _ReplaceArgs,
                        "Replace an exact snippet of a file (it must occur once unless replace_all).",
                    ),
                ]
        if commands is not None and commands.commands:
            description = (
                "Run a configured project command (tests, linters) in the workspace; returns its "
                "exit code and output. Commands: " + ", ".join(commands.names)
            )
            tools.append(_tool(self._run_command, _CommandArgs, description))
        allowed = set(allowed_intel)
        for tool in extra_tools:
            marked = bool((tool.metadata or {}).get(CODE_INTEL_MARK))
            if marked and tool.name not in allowed:
                continue
            tools.append(tool)
        self.tools: tuple[BaseTool, ...] = tuple(tools)
        self._by_name = {t.name: t for t in self.tools}

    # -- built-in tools -------------------------------------------------------------------------

    def _need_files(self) -> RunFiles:
        assert self._files is not None
        return self._files

    async def _read_file(self, path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        return await self._need_files().read(path, start_line=start_line, end_line=end_line)

    async def _list_files(self, path: str = ".", pattern: str | None = None, recursive: bool = False) -> str:
        entries = await self._need_files().list(path, pattern=pattern, recursive=recursive)
        return "\n".join(entries) if entries else "(empty)"

    async def _write_file(self, path: str, content: str) -> str:
        files = self._need_files()
        message = await files.write(path, content)
        self.files_written.append(files.relative(path))
        return message

    async def _replace_in_file(self, path: str, old_text: str, new_text: str, replace_all: bool = False) -> str:
        files = self._need_files()
        message = await files.replace(path, old_text, new_text, replace_all=replace_all)
        self.files_written.append(files.relative(path))
        return message

    async def _run_command(self, name: str, args: list[str] | None = None) -> str:
        assert self._commands is not None
        result = await self._commands.run(name, args or ())
        self.commands_run.append(result)
        return result.report()

    # -- executing calls ------------------------------------------------------------------------

    def next_id(self) -> str:
        self._counter += 1
        a = self.agent
        return f"{a.stage_id}.{a.attempt}.{a.agent_id}.{self._counter}"

    def _kind(self, name: str) -> ToolKindName:
        if name in _KINDS:
            return _KINDS[name]
        tool = self._by_name.get(name)
        kind = (tool.metadata or {}).get(TOOL_KIND_KEY) if tool is not None else None
        return (
            cast("ToolKindName", kind) if kind in ("read", "edit", "search", "execute", "fetch", "think") else "other"
        )

    def _title(self, name: str, args: dict[str, Any]) -> str:
        if name == "run_command":
            extra = " ".join(map(str, args.get("args") or []))
            return f"run {args.get('name', '?')}" + (f" {extra}" if extra else "")
        first = next((v for k, v in args.items() if k in ("path", "file", "symbol", "query", "name")), None)
        return f"{name} {first}" if first is not None else name

    def _arg_locations(self, name: str, args: dict[str, Any]) -> tuple[ToolCallLocation, ...]:
        path = args.get("path", args.get("file"))
        if not isinstance(path, str) or not path or name == "list_files":
            return ()
        line = args.get("line", args.get("start_line"))
        if self._files is not None:
            try:
                path = self._files.relative(path)
            except DaemonError:
                return ()
            if name == "replace_in_file" and isinstance(args.get("old_text"), str):
                line = self._files.first_line_of(path, args["old_text"])
        return (ToolCallLocation(path=path, line=line if isinstance(line, int) else None),)

    async def call(self, call: ToolCall) -> ToolMessage:
        """Run one tool call the model asked for, reporting it; the answer goes back to the model."""
        name = call["name"]
        args = dict(call["args"])
        call_id = call.get("id") or self.next_id()
        event_id = self.next_id()
        self.tools_used.append(name)
        start = ToolCallEvent(
            tool_call_id=event_id,
            name=name,
            title=self._title(name, args),
            kind=self._kind(name),
            status="in_progress",
            locations=self._arg_locations(name, args),
            raw_input=args,
        )
        await self._events.tool_call(self.agent, start)
        tool = self._by_name.get(name)
        status: str = "success"
        if tool is None:
            text = f"error: no tool named '{name}'; available: {', '.join(sorted(self._by_name))}"
            status = "error"
        else:
            try:
                timeout = None if name == "run_command" else TOOL_TIMEOUT_S
                text = _text(await asyncio.wait_for(tool.ainvoke(args), timeout))
            except TimeoutError:
                text, status = f"error: {name} did not answer within {TOOL_TIMEOUT_S:g}s", "error"
            except DaemonError as exc:
                text, status = f"error: {exc.message}", "error"
            except Exception as exc:  # a tool is a seam: any failure becomes the tool's answer, never a crash
                logger.warning("tool %s failed for %s", name, self.agent.agent_id, exc_info=True)
                text, status = f"error: {type(exc).__name__}: {exc}", "error"
        if name == "run_command" and status == "success" and self.commands_run and not self.commands_run[-1].ok:
            status = "error"
        locations = start.locations
        if not locations and status == "success" and name != "list_files":
            found: list[ToolCallLocation] = []
            with contextlib.suppress(ValueError):
                _locations_in(json.loads(text), found)
            locations = tuple(found)
        shown = text if len(text) <= EVENT_OUTPUT_CHARS else text[:EVENT_OUTPUT_CHARS] + "\n[... cut]"
        end = ToolCallEvent(
            tool_call_id=event_id,
            name=name,
            title=start.title,
            kind=start.kind,
            status="completed" if status == "success" else "failed",
            locations=locations,
            raw_input=args,
            output=shown,
        )
        await self._events.tool_call_update(self.agent, end)
        content = text if len(text) <= MODEL_OUTPUT_CHARS else text[:MODEL_OUTPUT_CHARS] + "\n[... cut]"
        return ToolMessage(content=content, tool_call_id=call_id, name=name, status=status)

    async def run_command_directly(self, name: str) -> CommandResult:
        """Run a configured command as if the agent had asked (reported like any tool call)."""
        call: ToolCall = {"name": "run_command", "args": {"name": name}, "id": self.next_id(), "type": "tool_call"}
        await self.call(call)
        return self.commands_run[-1]
