"""A capability: one code-intel or search operation, declared once, from which every front is derived.

A ``Capability`` names the operation (the MCP and agent tool name), its params and result models,
the text a model or a user reads (title, description), whether it only reads, and two functions:

- ``run(workspace, params)``: how any front asks a ``Workspace`` for it, whichever transport the
  workspace uses (the MCP tools, the agents' LangChain tools and the retrieval agent call this);
- ``work(service, params)``: what answers it in the process that owns the language servers, served
  by the daemon as ``method`` (its RPC name) and by ``LocalWorkspace`` in process.

A capability with no ``method`` of its own (the searches) is served by another daemon method
(``index/search``) that ``run`` calls through the port.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from daemon.core.ports import Workspace

if TYPE_CHECKING:
    from daemon.service.code_intel import CodeIntelService

__all__ = ["Capability", "ToolKind", "served"]

P = TypeVar("P", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)

ToolKind = Literal["search", "read"]
"""How the agents' toolbox classes the tool (``TOOL_KIND_KEY``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Capability(Generic[P, R]):
    """See the module docstring."""

    name: str
    params: type[P]
    result: type[R]
    title: str
    description: str
    kind: ToolKind
    run: Callable[[Workspace, P], Awaitable[R]]
    method: str | None = None
    work: Callable[[CodeIntelService, P], Awaitable[R]] | None = None
    read_only: bool = True

    def parse(self, arguments: Any) -> P:
        """The params from JSON-like arguments (``ValidationError`` when they do not fit)."""
        return self.params.model_validate(arguments if arguments is not None else {})


def served(
    *,
    name: str,
    method: str,
    params: type[P],
    result: type[R],
    title: str,
    kind: ToolKind,
    description: str,
    work: Callable[[CodeIntelService, P], Awaitable[R]],
) -> Capability[P, R]:
    """A capability the daemon serves as ``method``: any front runs it as ``workspace.intel(method, ...)``."""

    async def run(workspace: Workspace, p: P) -> R:
        return await workspace.intel(method, p, result)

    return Capability(
        name=name,
        method=method,
        params=params,
        result=result,
        title=title,
        kind=kind,
        description=description,
        run=run,
        work=work,
    )
