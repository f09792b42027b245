"""ided's search and code intelligence for ACP clients: one extension method per capability.

Every entry of the capability registry (``daemon.service.intel.capabilities``) is an ACP extension request
``_ided/intel/<name>`` (the SDK adds the ``_``): ``_ided/intel/search_code``,
``_ided/intel/find_definition``, ``_ided/intel/get_references``, ... Derived from the registry, so a
capability added there is served here too, with the same params and result models as the MCP tool, the
agents' tool and the daemon's ``intel/*`` method.

Params: the capability's params (workspace-relative paths, 1-based lines and columns) plus
``sessionId``, the session whose workspace answers. Result: the capability's result model as JSON.
The call goes through the workspace daemon this process attached to for the session's folder
(``acp.attach_daemon``; ``daemon.acp.workspaces``): one index and one set of language servers for the
editor, its agents and every other front. Without a daemon the call answers with the reason.

Errors: an unknown name -32601; params that do not fit the capability (or no ``sessionId``) -32602;
an unknown session -32602; the daemon's or the language server's refusal -32603 with ``data.code``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp import RequestError
from pydantic import ValidationError

from daemon.core.ports import Workspace
from daemon.service.intel.capabilities import CAPABILITIES
from daemon.service.intel.capability import Capability

__all__ = ["EXT_PREFIX", "METHODS", "SESSION_PARAM", "ext_method_name", "parse_call", "run_call"]

EXT_PREFIX = "ided/intel/"
"""The names given to the SDK (``ext_method``); on the wire each is ``_ided/intel/<capability>``."""

SESSION_PARAM = "sessionId"


def ext_method_name(capability: Capability[Any, Any]) -> str:
    """The extension method's name without the wire's leading ``_``."""
    return EXT_PREFIX + capability.name


METHODS: Mapping[str, Capability[Any, Any]] = {ext_method_name(c): c for c in CAPABILITIES}
"""Extension method (without ``_``) -> the capability it serves: every registry entry."""


def parse_call(method: str, params: Mapping[str, Any]) -> tuple[Capability[Any, Any], str, Any]:
    """The capability, the session id and the capability's params of one call; ``RequestError`` when
    the method is unknown or the params do not fit."""
    capability = METHODS.get(method)
    if capability is None:
        raise RequestError.method_not_found(f"_{method}")
    session_id = params.get(SESSION_PARAM)
    if not isinstance(session_id, str) or not session_id:
        details = f"_{method} needs {SESSION_PARAM}: the session whose workspace answers"
        raise RequestError.invalid_params({"method": f"_{method}", "details": details})
    arguments = {k: v for k, v in params.items() if k != SESSION_PARAM}
    try:
        return capability, session_id, capability.parse(arguments)
    except ValidationError as exc:
        details = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'params'}: {e['msg']}" for e in exc.errors())
        raise RequestError.invalid_params({"method": f"_{method}", "details": details}) from None


async def run_call(capability: Capability[Any, Any], params: Any, workspace: Workspace) -> dict[str, Any]:
    """Ask ``workspace`` for ``capability``; its result as JSON (``DaemonError`` passes through)."""
    result = await capability.run(workspace, params)
    answer: dict[str, Any] = result.model_dump(mode="json")
    return answer
