"""``ided/intel/*``: definitions, references, signatures, types and syntax nodes from the daemon's
code-intelligence service (real language servers and Tree-sitter).

Derived from the capability registry (``daemon.service.intel.capabilities``): each binding below names the
capability it serves, its LSP method and wire params type, how the wire params become the
capability's params (positions converted from the client's encoding to the daemon's 1-based
code-point columns against the file on disk) and how the capability's result becomes the wire
result (every location converted back). Both conversions read files, so they run off the event
loop. The daemon method called, its params model and its result model are the registry entry's.

``ELSEWHERE`` says, for every capability without an ``ided/intel/*`` method, where the LSP front
serves it instead or why it does not: a registry entry that is in neither fails the front's test.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from daemon.lsp.convert import PositionMapper
from daemon.lsp.handlers import daemon_params
from daemon.lsp.protocol import AstNodeParams, LspMethods, ReferencesParams, SymbolTargetParams
from daemon.lsp.session import wire_errors
from daemon.service.intel import capabilities as caps
from daemon.service.intel.capability import Capability

if TYPE_CHECKING:
    from daemon.lsp.server import IdedLanguageServer

__all__ = ["BINDINGS", "ELSEWHERE", "LspBinding", "register", "target_values"]


def target_values(mapper: PositionMapper, params: SymbolTargetParams, method: str) -> dict[str, Any]:
    """The daemon's SymbolTarget fields for a symbol name or a document position."""
    values: dict[str, Any] = {"max_results": params.max_results, "max_chars": params.max_chars}
    if params.symbol is not None:
        values["symbol"] = params.symbol
    if params.text_document is not None:
        values["file"] = mapper.path_of(params.text_document.uri)
        if params.position is not None:
            values["line"], values["column"] = mapper.from_client(values["file"], params.position)
    if params.symbol is None and ("file" not in values or params.position is None):
        raise JsonRpcInvalidParams(f"invalid params for {method}: give symbol, or textDocument and position")
    return values


def _references_values(mapper: PositionMapper, params: ReferencesParams, method: str) -> dict[str, Any]:
    return {**target_values(mapper, params, method), "include_declaration": params.include_declaration}


def _ast_node_values(mapper: PositionMapper, params: AstNodeParams, method: str) -> dict[str, Any]:
    path = mapper.path_of(params.text_document.uri)
    line, column = mapper.from_client(path, params.position)
    return {"file": path, "line": line, "column": column, "max_chars": params.max_chars}


@dataclass(frozen=True, slots=True)
class LspBinding:
    """How one capability travels over LSP: its method and the conversions on either side of the daemon."""

    method: str
    values: Callable[[PositionMapper, Any, str], dict[str, Any]]
    answer: Callable[[PositionMapper, Any], Any]


BINDINGS: Mapping[str, LspBinding] = {
    caps.DEFINITION.name: LspBinding(LspMethods.INTEL_DEFINITION, target_values, PositionMapper.definition_result),
    caps.REFERENCES.name: LspBinding(LspMethods.INTEL_REFERENCES, _references_values, PositionMapper.references_result),
    caps.SIGNATURE.name: LspBinding(LspMethods.INTEL_SIGNATURE, target_values, PositionMapper.signature_result),
    caps.TYPE.name: LspBinding(LspMethods.INTEL_TYPE, target_values, PositionMapper.type_result),
    caps.AST_NODE.name: LspBinding(LspMethods.INTEL_AST_NODE, _ast_node_values, PositionMapper.ast_node_result),
}
"""Capability name -> its ``ided/intel/*`` binding."""

ELSEWHERE: Mapping[str, str] = {
    caps.SEARCH_CODE.name: "ided/index/search with kind=code (hits as LSP locations; handlers/index.py)",
    caps.SEARCH_DOCS.name: "ided/index/search with kind=docs (handlers/index.py)",
    caps.INDEX_STATUS.name: "ided/index/status (handlers/index.py)",
    caps.WORKSPACE_SYMBOLS.name: "workspace/symbol, from the index (handlers/index.py)",
    caps.DOCUMENT_SYMBOLS.name: "not served: the editor's own language server answers textDocument/documentSymbol",
    caps.CALL_HIERARCHY.name: "not served: the editor's own language server answers the call-hierarchy requests",
    caps.DIAGNOSTICS.name: "not served: the editor's own language server publishes diagnostics",
}
"""Capability name -> where the LSP front serves it instead of an ``ided/intel/*`` method, or why not."""


def _register(server: IdedLanguageServer, capability: Capability[Any, Any], binding: LspBinding) -> None:
    method = capability.method
    if method is None:
        raise ValueError(f"capability {capability.name} is not a daemon method: it cannot be bound to LSP")
    fields = capability.params.model_fields

    async def handle(params: Any) -> Any:
        mapper = server.mapper.fresh()
        values = await asyncio.to_thread(binding.values, mapper, params, binding.method)
        request = daemon_params(capability.params, binding.method, **{k: v for k, v in values.items() if k in fields})
        with wire_errors(method):
            result = await capability.run(server.workspace_port, request)
        return await asyncio.to_thread(binding.answer, mapper, result)

    handle.__name__ = capability.name
    server.feature(binding.method)(handle)


def register(server: IdedLanguageServer) -> None:
    for name, binding in BINDINGS.items():
        _register(server, caps.BY_NAME[name], binding)
