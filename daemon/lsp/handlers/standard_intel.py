"""Standard ``textDocument/definition``, ``textDocument/references`` and ``textDocument/hover`` from the
daemon's code intelligence (the same calls as ``ided/intel/*``), for the clients that ask.

A client asks with ``initializationOptions`` ``{"standardIntel": true}`` (ided's Neovim plugin and
VS Code extension do by default, and step aside where another language server answers); only then
are they registered, so only then does the ``initialize`` result advertise ``definitionProvider``,
``referencesProvider`` and ``hoverProvider``. Without it the methods are unknown (-32601): an editor
that runs its own language servers would get doubled results.

Positions are read against the file on disk (ided keeps no open-document copies). A position
that names no symbol gives an empty answer (``[]``, or ``null`` for hover), not an error; other
failures (no language server, a timeout) are JSON-RPC errors carrying the ided error code, and the
first of each kind per language is also shown (``window/showMessage``): editors only log a failed
request, and a person who installed no language server must be told which one to install.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from lsprotocol import types
from pydantic import BaseModel
from pygls.exceptions import JsonRpcException

from daemon.core import intel_models
from daemon.core.languages import language_for_path
from daemon.errors import ErrorCode
from daemon.lsp.convert import PositionMapper
from daemon.lsp.handlers import daemon_params
from daemon.lsp.handshake import STANDARD_INTEL_OPTION
from daemon.lsp.session import wire_errors
from daemon.service.intel.capabilities import DEFINITION, REFERENCES, SIGNATURE
from daemon.service.intel.capability import Capability

if TYPE_CHECKING:
    from daemon.lsp.server import IdedLanguageServer

__all__ = ["OPTION", "enabled", "hover_markdown", "register"]


R = TypeVar("R", bound=BaseModel)

_DEFINITIONS: dict[str, Any] = {"max_results": 50, "max_chars": 4000}
"""As many definitions as ``ided/intel/definition`` gives by default."""

OPTION = STANDARD_INTEL_OPTION
"""The ``initializationOptions`` key that turns the standard methods on (``daemon.lsp.handshake`` reads it too)."""


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


_SHOWN_CODES = frozenset(
    {
        ErrorCode.LANGUAGE_SERVER_FAILED.value,
        ErrorCode.LANGUAGE_SERVER_TERMINATED.value,
        ErrorCode.LANGUAGE_SERVER_NOT_READY.value,
        ErrorCode.LANGUAGE_SERVER_SLOW.value,
        ErrorCode.WORKSPACE_UNTRUSTED.value,
    }
)
"""Refusals a person must see: the editor only logs a failed definition/references/hover request."""

_WAIT_CODES = frozenset({ErrorCode.LANGUAGE_SERVER_NOT_READY.value, ErrorCode.LANGUAGE_SERVER_SLOW.value})
"""Refusals that pass: the server is there but still loading or slow (its message says to retry)."""


def _say_why(server: IdedLanguageServer, exc: JsonRpcException, file: str) -> None:
    """Show why the language servers could not answer (no server for the language found, a server that
    is not ready or failed), once per reason and language in a session: an editor answers a failed
    request with "no locations found" or nothing, and hovers come often."""
    data: object = exc.data
    code = cast(Mapping[str, object], data).get("code") if isinstance(data, Mapping) else None
    if not isinstance(code, str) or code not in _SHOWN_CODES:
        return
    language = language_for_path(file) or "these"
    message = exc.message.removeprefix("ided: ")
    if code in _WAIT_CODES:
        text = f"ided: {message}"
    else:
        text = f"ided: no definitions, references or hover for {language} files: {message}"
    server.show(types.MessageType.Warning, text, once=f"standard-intel:{code}:{language}")


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


async def _ask(
    server: IdedLanguageServer,
    capability: Capability[Any, R],
    method: str,
    uri: str,
    position: types.Position,
    **fixed: Any,
) -> tuple[PositionMapper, dict[str, Any], R] | None:
    """Ask the daemon for ``capability`` at the client's position; None when nothing is there."""
    mapper = server.mapper.fresh()
    values = await asyncio.to_thread(_target, mapper, uri, position)
    request = daemon_params(capability.params, method, **fixed, **values)
    assert capability.method is not None
    try:
        with wire_errors(capability.method):
            return mapper, values, await capability.run(server.workspace_port, request)
    except JsonRpcException as exc:
        if _nothing_there(exc):
            return None
        _say_why(server, exc, str(values["file"]))
        raise


async def _locations(
    server: IdedLanguageServer,
    capability: Capability[Any, R],
    method: str,
    params: types.DefinitionParams | types.ReferenceParams,
    locate: Callable[[PositionMapper, R], list[types.Location]],
    **fixed: Any,
) -> list[types.Location]:
    """The locations that answer ``method`` at the client's position ([] when nothing is there)."""
    asked = await _ask(server, capability, method, params.text_document.uri, params.position, **fixed)
    if asked is None:
        return []
    mapper, _values, result = asked
    return await asyncio.to_thread(locate, mapper, result)


def _definitions(mapper: PositionMapper, result: intel_models.DefinitionResult) -> list[types.Location]:
    return [mapper.location(d.location) for d in result.definitions]


def _references(mapper: PositionMapper, result: intel_models.ReferencesResult) -> list[types.Location]:
    return [mapper.location(r.location) for r in result.references]


def register(server: IdedLanguageServer) -> None:
    """Register the three methods (call from the ``initialize`` handler, before capabilities are built)."""

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def definition(params: types.DefinitionParams) -> list[types.Location]:
        method = types.TEXT_DOCUMENT_DEFINITION
        return await _locations(server, DEFINITION, method, params, _definitions, **_DEFINITIONS)

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    async def references(params: types.ReferenceParams) -> list[types.Location]:
        include = params.context.include_declaration
        method = types.TEXT_DOCUMENT_REFERENCES
        return await _locations(server, REFERENCES, method, params, _references, include_declaration=include)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(params: types.HoverParams) -> types.Hover | None:
        asked = await _ask(server, SIGNATURE, types.TEXT_DOCUMENT_HOVER, params.text_document.uri, params.position)
        if asked is None or not asked[2].signature.strip():
            return None
        _mapper, values, result = asked
        language = language_for_path(str(values["file"])) or ""
        contents = types.MarkupContent(kind=types.MarkupKind.Markdown, value=hover_markdown(result, language))
        return types.Hover(contents=contents)
