"""``ided/intel/*``: definitions, references, signatures and syntax nodes from the daemon's
code-intelligence service (real language servers and Tree-sitter).

A target is a symbol name or a document position; positions are converted from the client's
encoding to the daemon's 1-based code-point columns against the file on disk, and every location
in the answer back again (off the event loop: it reads files).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from daemon.core import intel_models
from daemon.lsp.convert import PositionMapper
from daemon.lsp.handlers import daemon_params
from daemon.lsp.protocol import (
    AstNodeParams,
    AstNodeResult,
    DefinitionResult,
    LspMethods,
    ReferencesParams,
    ReferencesResult,
    SignatureResult,
    SymbolTargetParams,
)
from daemon.service import api
from daemon.service.api import Methods

if TYPE_CHECKING:
    from daemon.lsp.server import IdedLanguageServer

__all__ = ["register", "target_values"]

logger = logging.getLogger(__name__)


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


def register(server: IdedLanguageServer) -> None:
    @server.feature(LspMethods.INTEL_DEFINITION)
    async def definition(params: SymbolTargetParams) -> DefinitionResult:
        mapper = server.mapper.fresh()
        values = await asyncio.to_thread(target_values, mapper, params, LspMethods.INTEL_DEFINITION)
        target = daemon_params(api.SymbolTarget, LspMethods.INTEL_DEFINITION, **values)
        result = await server.session.call(Methods.INTEL_DEFINITION, target, intel_models.DefinitionResult)
        return await asyncio.to_thread(mapper.definition_result, result)

    @server.feature(LspMethods.INTEL_REFERENCES)
    async def references(params: ReferencesParams) -> ReferencesResult:
        mapper = server.mapper.fresh()
        values = await asyncio.to_thread(target_values, mapper, params, LspMethods.INTEL_REFERENCES)
        target = daemon_params(
            api.ReferencesParams,
            LspMethods.INTEL_REFERENCES,
            include_declaration=params.include_declaration,
            **values,
        )
        result = await server.session.call(Methods.INTEL_REFERENCES, target, intel_models.ReferencesResult)
        return await asyncio.to_thread(mapper.references_result, result)

    @server.feature(LspMethods.INTEL_SIGNATURE)
    async def signature(params: SymbolTargetParams) -> SignatureResult:
        mapper = server.mapper.fresh()
        values = await asyncio.to_thread(target_values, mapper, params, LspMethods.INTEL_SIGNATURE)
        target = daemon_params(api.SymbolTarget, LspMethods.INTEL_SIGNATURE, **values)
        result = await server.session.call(Methods.INTEL_SIGNATURE, target, intel_models.SignatureResult)
        return await asyncio.to_thread(mapper.signature_result, result)

    @server.feature(LspMethods.INTEL_AST_NODE)
    async def ast_node(params: AstNodeParams) -> AstNodeResult:
        mapper = server.mapper.fresh()
        path = mapper.path_of(params.text_document.uri)
        line, column = await asyncio.to_thread(mapper.from_client, path, params.position)
        request = daemon_params(
            api.AstNodeParams,
            LspMethods.INTEL_AST_NODE,
            file=path,
            line=line,
            column=column,
            max_chars=params.max_chars,
        )
        result = await server.session.call(Methods.INTEL_AST_NODE, request, intel_models.AstNodeResult)
        return await asyncio.to_thread(mapper.ast_node_result, result)
