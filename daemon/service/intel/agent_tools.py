"""ided's code-intel and search tools as LangChain tools for the pipeline's agents.

Derived from the capability registry (``daemon.service.intel.capabilities``), the same entries the MCP
server lists: one ``StructuredTool`` per capability, its args schema the capability's params model,
its description the capability's, answering through the ``Workspace`` port (this process's
language servers and index, or the workspace daemon's: the tools do not know which). Each tool
answers with its result model; a ``DaemonError`` (unknown symbol, server not ready) becomes the
tool's error text, which the agent sees and can act on. Tools carry ``metadata`` marking them as
code-intel (so the workflow's ``mcp_tools`` list filters them per agent) and naming their kind
(search or read).

Inside a run the tools are built over the run's ``OverlayWorkspace`` (``daemon.service.pipeline.run_scope``):
``search_code``/``search_docs`` find the run's own edits; the other capabilities answer from the
workspace's language servers, which follow the user's tree (agents read their edits with ``read_file``).
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel

from daemon.core.ports import Workspace
from daemon.orchestration.agents import CODE_INTEL_MARK, TOOL_KIND_KEY
from daemon.service.intel.capabilities import CAPABILITIES
from daemon.service.intel.capability import Capability

__all__ = ["INTEL_TOOL_NAMES", "code_intel_tools"]


INTEL_TOOL_NAMES: tuple[str, ...] = tuple(c.name for c in CAPABILITIES)
"""The agents' code-intel tool names: every capability of the registry."""


def _tool(workspace: Workspace, capability: Capability[Any, Any]) -> BaseTool:
    async def call(**arguments: Any) -> BaseModel:
        return await capability.run(workspace, capability.parse(arguments))

    return StructuredTool.from_function(
        coroutine=call,
        name=capability.name,
        description=capability.description,
        args_schema=capability.params,
        metadata={CODE_INTEL_MARK: True, TOOL_KIND_KEY: capability.kind},
    )


def code_intel_tools(workspace: Workspace) -> list[BaseTool]:
    """The code-intel tools over ``workspace``, ready to pass to ``PipelineRuntime.start(extra_tools=...)``."""
    return [_tool(workspace, capability) for capability in CAPABILITIES]
