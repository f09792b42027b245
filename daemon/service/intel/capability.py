"""A capability: one code-intel or search operation, declared once, from which every front is derived.

A ``Capability`` names the operation (the MCP and agent tool name), its params and result models,
the text a model or a user reads (title, description), whether it only reads, and two functions:

- ``work(service, params)``: what answers it in the process that owns the language servers, served
  by the daemon as ``method`` (its RPC name) and by ``LocalWorkspace`` in process. It names the
  service's method by reference (``lambda s, p: s.find_definition(p)``), so pyright checks the
  declaration against the method it names;
- ``run(workspace, params)``: how any front asks a ``Workspace`` for it, whichever transport the
  workspace uses (the MCP tools, the agents' LangChain tools and the retrieval agent call this):
  ``workspace.intel(method, ...)``, or the capability's own ``route`` when it has no ``method``
  (the searches go through ``workspace.search``, the status through ``workspace.status``).

Over LSP a capability is served as ``lsp_method`` (``ided/intel/definition`` for ``intel/definition``),
its params and result on the wire derived from its models (``daemon.lsp.intel_wire``), unless
``lsp_elsewhere`` says where the LSP front serves it instead, or why it does not.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from daemon.core.ports import Workspace

if TYPE_CHECKING:
    from daemon.service.intel.code_intel import CodeIntelService

__all__ = ["Capability", "ToolKind"]

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
    method: str | None = None
    work: Callable[[CodeIntelService, P], Awaitable[R]] | None = None
    route: Callable[[Workspace, P], Awaitable[R]] | None = None
    read_only: bool = True
    lsp_elsewhere: str | None = None
    """Where the LSP front serves it instead of ``lsp_method``, or why it does not (None: served there)."""

    def __post_init__(self) -> None:
        if (self.method is None) == (self.route is None):
            raise ValueError(f"capability {self.name}: give either the daemon method that serves it or its route")
        if self.method is not None and self.work is None:
            raise ValueError(f"capability {self.name}: a daemon method needs the work that answers it")

    @property
    def lsp_method(self) -> str:
        """Its ``ided/*`` LSP method: its daemon method (or ``intel/<name>``) under ``ided/``, each word after
        the first capitalised (``intel/ast_node`` -> ``ided/intel/astNode``)."""
        path = self.method if self.method is not None else f"intel/{self.name}"
        return "ided/" + "/".join(_camel(part) for part in path.split("/"))

    @property
    def daemon_method(self) -> str:
        """The daemon's ``intel/*`` method that serves it (``ValueError`` for one routed through the
        ``Workspace`` port instead)."""
        if self.method is None:
            raise ValueError(f"capability {self.name} is routed through the Workspace port, not a daemon method")
        return self.method

    def parse(self, arguments: Any) -> P:
        """The params from JSON-like arguments (``ValidationError`` when they do not fit)."""
        return self.params.model_validate(arguments if arguments is not None else {})

    async def run(self, workspace: Workspace, params: P) -> R:
        """Ask ``workspace`` (whichever transport it uses): its ``route``, else ``workspace.intel(method)``."""
        if self.route is not None:
            return await self.route(workspace, params)
        return await workspace.intel(self.daemon_method, params, self.result)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
