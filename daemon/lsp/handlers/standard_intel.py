"""Opt-in standard ``textDocument/definition``, ``textDocument/references`` and ``textDocument/hover``
from the daemon's code intelligence (the same calls as ``ided/intel/*``).

Off by default: most editors already run their own language servers, and two servers answering
the same request give doubled results. A client turns them on with ``initializationOptions``
``{"standardIntel": true}``; only then are they registered, so only then does the ``initialize``
result advertise ``definitionProvider``, ``referencesProvider`` and ``hoverProvider``. Without it the
methods are unknown (-32601).

Positions are read against the file on disk (ided keeps no open-document copies). A position
that names no symbol gives an empty answer (``[]``, or ``null`` for hover), not an error; other
failures (no language server, a timeout) are JSON-RPC errors carrying the ided error code.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from daemon.core import intel_models
from daemon.errors import ErrorCode
from daemon.intel.languages import language_for_path
from daemon.lsp.convert import PositionMapper
from daemon.lsp.handlers import daemon_params
from daemon.service.api import Methods
from daemon.service.intel_params import DefinitionParams, ReferencesParams, SignatureParams

if TYPE_CHECKING:
    from daemon.lsp.server import IdedLanguageServer

__all__ = ["OPTION", "enabled", "hover_markdown", "register"]

logger = logging.getLogger(__name__)

OPTION = "standardIntel"
"""The ``initializationOptions`` key that turns the standard methods on."""


def enabled(options: Any) -> bool:
    """Whether ``initializationOptions`` asks for the standard methods (only a literal ``true`` does)."""
    if not isinstance(options, Mapping):
        return False
    mapping = cast(Mapping[str, object], options)
    return mapping.get(OPTION) is True


def _nothing_there(exc: JsonRpcException) -> bool:
    """The daemon refused the target itself (no symbol at that place): an empty answer, not a failure."""
    data: object = exc.data
    if not isinstance(data, Mapping):
        return False
    return cast(Mapping[str, object], data).get("code") == ErrorCode.INVALID_TOOL_INPUT.value


def hover_markdown(result: intel_models.SignatureResult, language: str) -> str:
    """The hover text: the signature in a fenced block, then its documentation."""
    text = f"```{language}\n{result.signature}\n```"
    if result.documentation:
        text += f"\n\n{result.documentation.strip()}"
    return text


def _target(mapper: PositionMapper, uri: str, position: types.Position) -> dict[str, Any]:
    path = mapper.path_of(uri)
    line, column = mapper.from_client(path, position)
    return {"file": path, "line": line, "column": column}


def register(server: IdedLanguageServer) -> None:
    """Register the three methods (call from the ``initialize`` handler, before capabilities are built)."""

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def definition(params: types.DefinitionParams) -> list[types.Location]:
        mapper = server.mapper.fresh()
        values = await asyncio.to_thread(_target, mapper, params.text_document.uri, params.position)
        target = daemon_params(
            DefinitionParams, types.TEXT_DOCUMENT_DEFINITION, max_results=50, max_chars=4000, **values
        )
        try:
            result = await server.session.call(Methods.INTEL_DEFINITION, target, intel_models.DefinitionResult)
        except JsonRpcException as exc:
            if _nothing_there(exc):
                return []
            raise
        converted = await asyncio.to_thread(mapper.definition_result, result)
        return [d.location for d in converted.definitions]

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    async def references(params: types.ReferenceParams) -> list[types.Location]:
        mapper = server.mapper.fresh()
        values = await asyncio.to_thread(_target, mapper, params.text_document.uri, params.position)
        request = daemon_params(
            ReferencesParams,
            types.TEXT_DOCUMENT_REFERENCES,
            include_declaration=params.context.include_declaration,
            **values,
        )
        try:
            result = await server.session.call(Methods.INTEL_REFERENCES, request, intel_models.ReferencesResult)
        except JsonRpcException as exc:
            if _nothing_there(exc):
                return []
            raise
        converted = await asyncio.to_thread(mapper.references_result, result)
        return [r.location for r in converted.references]

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(params: types.HoverParams) -> types.Hover | None:
        mapper = server.mapper.fresh()
        values = await asyncio.to_thread(_target, mapper, params.text_document.uri, params.position)
        target = daemon_params(SignatureParams, types.TEXT_DOCUMENT_HOVER, **values)
        try:
            result = await server.session.call(Methods.INTEL_SIGNATURE, target, intel_models.SignatureResult)
        except JsonRpcException as exc:
            if _nothing_there(exc):
                return None
            raise
        if not result.signature.strip():
            return None
        language = language_for_path(str(values["file"])) or ""
        contents = types.MarkupContent(kind=types.MarkupKind.Markdown, value=hover_markdown(result, language))
        return types.Hover(contents=contents)
