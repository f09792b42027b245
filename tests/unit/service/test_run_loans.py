"""``daemon.service.runs.loans`` over a real Unix socket pair: the daemon's stand-ins call back to the
front's ``LoanDesk`` for the editor's text and the client's tools, and fail as the real objects would
once the loan is given back or the front is gone."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from langchain_core.tools import StructuredTool

from daemon.errors import McpServerError
from daemon.service.runs.loans import LoanDesk, RunLoan, borrowed
from daemon.service.wire.rpc import RpcConnection


@dataclass
class Buffers:
    texts: dict[str, str]

    async def read_text(self, path: Path) -> str | None:
        return self.texts.get(str(path))


async def _shout(text: str, times: int = 1) -> str:
    return " ".join([text.upper()] * times)


SHOUT = StructuredTool.from_function(
    coroutine=_shout, name="shout", description="The text in capitals.", metadata={"tool_kind": "read", "obj": object()}
)


@pytest.fixture
async def link() -> AsyncIterator[tuple[LoanDesk, RpcConnection, RpcConnection]]:
    """The front's desk serving on one end; the daemon's connection at the other."""
    front_sock, daemon_sock = socket.socketpair()
    desk = LoanDesk()
    front = RpcConnection(*await asyncio.open_unix_connection(sock=front_sock), handlers=desk.handlers(), name="front")
    daemon = RpcConnection(*await asyncio.open_unix_connection(sock=daemon_sock), name="daemon")
    served = [asyncio.create_task(front.serve()), asyncio.create_task(daemon.serve())]
    try:
        yield desk, front, daemon
    finally:
        await front.close()
        await daemon.close()
        await asyncio.wait_for(asyncio.gather(*served), 30)


async def test_a_lent_reader_and_tool_answer_from_the_front_until_the_loan_is_given_back(
    link: tuple[LoanDesk, RpcConnection, RpcConnection],
) -> None:
    desk, _front, daemon = link
    spec = desk.lend(RunLoan(file_reader=Buffers({"/w/a.py": "unsaved"}), extra_tools=(SHOUT,)))
    assert spec is not None and spec.reads_files
    (lent,) = spec.tools
    assert lent.name == "shout" and lent.metadata == {"tool_kind": "read"}  # what cannot cross stays behind
    assert set(lent.args_schema["properties"]) == {"text", "times"}

    loan = borrowed(daemon, spec)
    assert loan is not None and loan.file_reader is not None
    assert await loan.file_reader.read_text(Path("/w/a.py")) == "unsaved"
    assert await loan.file_reader.read_text(Path("/w/other.py")) is None
    (tool,) = loan.extra_tools
    assert tool.name == "shout" and tool.metadata == {"tool_kind": "read"}
    assert await tool.ainvoke({"text": "hi", "times": 2}) == "HI HI"

    desk.give_back(spec)
    assert await loan.file_reader.read_text(Path("/w/a.py")) is None  # the run reads the disk
    with pytest.raises(McpServerError, match="has ended"):
        await tool.ainvoke({"text": "late"})


async def test_a_stand_in_tool_of_a_front_that_is_gone_fails_with_the_cause(
    link: tuple[LoanDesk, RpcConnection, RpcConnection],
) -> None:
    desk, front, daemon = link
    assert desk.lend(RunLoan()) is None  # nothing to lend: no loan travels
    assert borrowed(daemon, None) is None
    loan = borrowed(daemon, desk.lend(RunLoan(extra_tools=(SHOUT,))))
    assert loan is not None
    (tool,) = loan.extra_tools
    await front.close()
    await daemon.wait_closed()
    with pytest.raises(McpServerError, match="gone"):
        await tool.ainvoke({"text": "anyone?"})
