"""``ided/intel/*``: definitions, references, signatures and syntax nodes from the daemon's
code-intelligence service (real language servers and Tree-sitter).

Derived from the capability registry (``daemon.service.intel.capabilities``): every capability whose
declaration does not say ``lsp_elsewhere`` is served as its ``lsp_method``, its wire params and result
derived from its models (``daemon.lsp.intel_wire``: positions converted between the client's encoding
and the daemon's 1-based code-point columns against the file on disk, places as LSP places). Both
conversions read files, so they run off the event loop. The daemon method called, its params model and
its result model are the registry entry's; nothing here names a capability.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from daemon.lsp.intel_wire import SERVED, capability_params, wire_result
from daemon.lsp.session import wire_errors
from daemon.service.intel.capability import Capability

if TYPE_CHECKING:
    from daemon.lsp.server import IdedLanguageServer

__all__ = ["register"]


def _register(server: IdedLanguageServer, capability: Capability[Any, Any]) -> None:
    method = capability.lsp_method

    async def handle(params: Any) -> Any:
        mapper = server.mapper.fresh()
        request = await asyncio.to_thread(capability_params, capability, mapper, params, method)
        with wire_errors(capability.method or method):
            result = await capability.run(server.workspace_port, request)
        return await asyncio.to_thread(wire_result, mapper, result)

    handle.__name__ = capability.name
    server.feature(method)(handle)


def register(server: IdedLanguageServer) -> None:
    for capability in SERVED:
        _register(server, capability)
