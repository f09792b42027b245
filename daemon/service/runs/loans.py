"""What a front lends a run the daemon executes, served back over the front's own connection.

A front's ``RunLoan`` holds objects that cannot cross the socket: an editor's file reader (ACP
``fs/read_text_file``: the agents see unsaved text) and a client's tools (the MCP servers an ACP
client passed with its session). The daemon transport (``DaemonRuns``) keeps them at its ``LoanDesk`` under a loan id
and sends what they are (``LoanSpec``: whether files are read, each tool's name, description,
argument schema and metadata) with ``runs/start`` or ``runs/feedback``. The daemon gives the run
stand-ins (``borrowed``) that call back over the connection the launch came on: ``loan/read_file``
and ``loan/call_tool`` (``LoanMethods``), answered by the desk with the real objects.

A loan is given back when the front stops following its run. A stand-in called after that, or once
the connection is gone, answers as the real object would fail: the file reader with nothing (the run
reads the disk), a tool with an ``McpServerError`` that the agent sees as the tool's answer.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from daemon.core.frozen_model import FrozenModel
from daemon.errors import McpServerError
from daemon.service.wire.rpc import Handler, RpcConnection, RpcError

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from daemon.orchestration.agents import FileReader

__all__ = [
    "CallToolParams",
    "CallToolResult",
    "LentTool",
    "LoanDesk",
    "LoanMethods",
    "LoanSpec",
    "ReadFileParams",
    "ReadFileResult",
    "RunLoan",
    "borrowed",
]

logger = logging.getLogger(__name__)

_READ_WAIT_S = 30.0
"""How long a stand-in file reader waits for the front (then the run reads the disk)."""
_CALL_WAIT_S = 3600.0
"""How long a stand-in tool waits for the front: the agents' own tool timeout is the bound that counts."""


Scalar = str | bool | int | float | None
"""A tool metadata value that crosses the socket (others stay behind)."""


@dataclass(frozen=True, kw_only=True)
class RunLoan:
    """What a front lends one launched run's agents (never persisted, never sent as it is): how they read the
    user's files (an editor's unsaved text) and more tools (a client's MCP tools)."""

    file_reader: FileReader | None = None
    extra_tools: tuple[BaseTool, ...] = ()


class LoanMethods:
    """The methods the daemon calls on the connection a lending launch came on."""

    READ_FILE = "loan/read_file"
    CALL_TOOL = "loan/call_tool"


class LentTool(FrozenModel):
    """One lent tool as the agents see it."""

    name: str
    description: str
    args_schema: dict[str, Any] = Field(description="The tool's arguments as a JSON schema.")
    metadata: dict[str, Scalar] = Field(default_factory=dict[str, Scalar])


class LoanSpec(FrozenModel):
    """What a launch lends its run, sent with ``runs/start`` or ``runs/feedback``."""

    loan_id: str = Field(min_length=1, max_length=80)
    reads_files: bool = False
    tools: tuple[LentTool, ...] = ()


class ReadFileParams(FrozenModel):
    loan_id: str
    path: str


class ReadFileResult(FrozenModel):
    text: str | None = None


class CallToolParams(FrozenModel):
    loan_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict[str, Any])


class CallToolResult(FrozenModel):
    output: str


def _schema(tool: BaseTool) -> dict[str, Any]:
    schema = tool.args_schema
    return dict(schema) if isinstance(schema, dict) else tool.get_input_jsonschema()  # pyright: ignore[reportUnknownArgumentType]


def _plain(metadata: Mapping[str, Any] | None) -> dict[str, Scalar]:
    return {k: v for k, v in (metadata or {}).items() if v is None or isinstance(v, str | bool | int | float)}


class LoanDesk:
    """The front's side: the loans it lent, by id, and the handlers that serve them to the daemon."""

    def __init__(self) -> None:
        self._loans: dict[str, RunLoan] = {}

    def lend(self, loan: RunLoan | None) -> LoanSpec | None:
        """Keep ``loan``'s objects and describe them; None when it lends none."""
        if loan is None or (loan.file_reader is None and not loan.extra_tools):
            return None
        loan_id = secrets.token_hex(8)
        self._loans[loan_id] = loan
        tools = tuple(
            LentTool(name=t.name, description=t.description, args_schema=_schema(t), metadata=_plain(t.metadata))
            for t in loan.extra_tools
        )
        return LoanSpec(loan_id=loan_id, reads_files=loan.file_reader is not None, tools=tools)

    def give_back(self, spec: LoanSpec | None) -> None:
        if spec is not None:
            self._loans.pop(spec.loan_id, None)

    def _loan(self, loan_id: str) -> RunLoan:
        loan = self._loans.get(loan_id)
        if loan is None:
            raise McpServerError(f"loan {loan_id} has ended: its run is no longer followed by the front that lent it")
        return loan

    def handlers(self) -> Mapping[str, Handler]:
        async def read_file(params: dict[str, Any]) -> ReadFileResult:
            p = ReadFileParams.model_validate(params)
            reader = self._loan(p.loan_id).file_reader
            return ReadFileResult(text=await reader.read_text(Path(p.path)) if reader is not None else None)

        async def call_tool(params: dict[str, Any]) -> CallToolResult:
            p = CallToolParams.model_validate(params)
            tool = next((t for t in self._loan(p.loan_id).extra_tools if t.name == p.name), None)
            if tool is None:
                raise McpServerError(f"no lent tool named '{p.name}'")
            output: Any = await tool.ainvoke(p.arguments)
            return CallToolResult(output=output if isinstance(output, str) else str(output))

        return {LoanMethods.READ_FILE: read_file, LoanMethods.CALL_TOOL: call_tool}


class _BorrowedReader:
    """The daemon's side of a lent file reader: asks the front; nothing (read the disk) when it cannot."""

    def __init__(self, conn: RpcConnection, loan_id: str) -> None:
        self._conn = conn
        self._loan_id = loan_id

    async def read_text(self, path: Path) -> str | None:
        params = ReadFileParams(loan_id=self._loan_id, path=str(path))
        try:
            answer = await self._conn.request(LoanMethods.READ_FILE, params, wait_s=_READ_WAIT_S)
        except (RpcError, ConnectionError, TimeoutError) as exc:
            logger.debug("the front did not read %s (%s); reading the disk", path, exc)
            return None
        return ReadFileResult.model_validate(answer).text


def _borrowed_tool(conn: RpcConnection, loan_id: str, lent: LentTool) -> BaseTool:
    from langchain_core.tools import StructuredTool  # the daemon loads LangChain only when a run is lent tools

    async def call(**arguments: Any) -> str:
        params = CallToolParams(loan_id=loan_id, name=lent.name, arguments=arguments)
        try:
            answer = await conn.request(LoanMethods.CALL_TOOL, params, wait_s=_CALL_WAIT_S)
        except RpcError as exc:
            raise McpServerError(exc.message) from None
        except ConnectionError as exc:
            raise McpServerError(f"tool '{lent.name}' is lent by a front that is gone: {exc}") from None
        return CallToolResult.model_validate(answer).output

    return StructuredTool(
        name=lent.name,
        description=lent.description,
        args_schema=lent.args_schema,
        coroutine=call,
        metadata=dict(lent.metadata),
    )


def borrowed(conn: RpcConnection, spec: LoanSpec | None) -> RunLoan | None:
    """The daemon's ``RunLoan`` for a launch that came on ``conn`` lending ``spec`` (None: it lent nothing)."""
    if spec is None:
        return None
    return RunLoan(
        file_reader=_BorrowedReader(conn, spec.loan_id) if spec.reads_files else None,
        extra_tools=tuple(_borrowed_tool(conn, spec.loan_id, t) for t in spec.tools),
    )
