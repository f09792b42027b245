"""The language-server requests behind the code-intel tools, built and sent in one place.

``ServerRequests`` asks the pool's server of a file's language one question at a time: the
definitions, references, hover, type definitions, call hierarchy, document symbols or diagnostics at a place, or a
workspace-symbol query. A place is a file with a 1-based line and a 1-based column counted in code
points (``Place``); it is converted to the server's position encoding against the document as the
server has it. Answers are the server's own LSP types (or ``LspTarget`` lists for locations): the
conversion into ided's models happens in the caller, which knows the workspace.

Every request is bounded by ``timeout_s``; failures are ``LanguageServerError``s (from the pool),
and a server without a capability the tool needs gets ``InvalidToolInput`` (call hierarchy) or an
empty answer (the others), as each method says.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lsprotocol import types as lsp

from daemon.errors import InvalidToolInput
from daemon.intel.lsp.client import LspClient
from daemon.intel.lsp.convert import LspTarget, lsp_targets, parse_hover
from daemon.intel.lsp.documents import OpenDocument
from daemon.intel.lsp.pool import LanguageServerPool

__all__ = ["Place", "ServerRequests"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Place:
    """A position in a workspace file: 1-based line, 1-based code-point column."""

    absolute: Path
    relative: str
    language: str
    line: int
    column: int


def _document(doc: OpenDocument | None) -> lsp.TextDocumentIdentifier:
    assert doc is not None
    return lsp.TextDocumentIdentifier(uri=doc.uri)


def _position(doc: OpenDocument | None, place: Place) -> lsp.Position:
    assert doc is not None
    return doc.position(place.line, place.column)


class ServerRequests:
    """See the module docstring."""

    def __init__(self, pool: LanguageServerPool, *, timeout_s: float, diagnostics_wait_s: float) -> None:
        self.pool = pool
        self._timeout = timeout_s
        self._diagnostics_wait = diagnostics_wait_s

    async def _ask(self, place: Place, operation: Any) -> Any:
        return await self.pool.run(place.language, operation, path=place.absolute, display=place.relative)

    async def definitions(self, place: Place, at: lsp.Position | None = None) -> list[LspTarget]:
        """The server's definitions at ``place`` (or at position ``at`` in its file, already encoded)."""

        async def op(client: LspClient, doc: OpenDocument | None) -> Any:
            position = at if at is not None else _position(doc, place)
            params = lsp.DefinitionParams(text_document=_document(doc), position=position)
            return await client.request(lsp.TEXT_DOCUMENT_DEFINITION, params, timeout_s=self._timeout)

        return lsp_targets(await self._ask(place, op))

    async def references(self, place: Place, *, include_declaration: bool) -> list[LspTarget]:
        async def op(client: LspClient, doc: OpenDocument | None) -> Any:
            params = lsp.ReferenceParams(
                text_document=_document(doc),
                position=_position(doc, place),
                context=lsp.ReferenceContext(include_declaration=include_declaration),
            )
            return await client.request(lsp.TEXT_DOCUMENT_REFERENCES, params, timeout_s=self._timeout)

        return lsp_targets(await self._ask(place, op))

    async def hover(self, place: Place, name: str | None) -> tuple[str, str | None] | None:
        """(signature, documentation) from the hover at ``place``; None when the server has none."""

        async def op(client: LspClient, doc: OpenDocument | None) -> lsp.Hover | None:
            params = lsp.HoverParams(text_document=_document(doc), position=_position(doc, place))
            result = await client.request(lsp.TEXT_DOCUMENT_HOVER, params, timeout_s=self._timeout)
            return result if isinstance(result, lsp.Hover) else None

        return parse_hover(await self._ask(place, op), name)

    async def type_definitions(self, place: Place) -> list[LspTarget]:
        """Where the type of what is at ``place`` is declared; [] when the server has no type definitions."""

        async def op(client: LspClient, doc: OpenDocument | None) -> Any:
            if not client.supports("type_definition_provider"):
                return None
            params = lsp.TypeDefinitionParams(text_document=_document(doc), position=_position(doc, place))
            return await client.request(lsp.TEXT_DOCUMENT_TYPE_DEFINITION, params, timeout_s=self._timeout)

        return lsp_targets(await self._ask(place, op))

    async def call_hierarchy(
        self, place: Place, direction: Literal["incoming", "outgoing"]
    ) -> tuple[lsp.CallHierarchyItem | None, list[Any]]:
        """The callable at ``place`` and its incoming or outgoing calls; (None, []) when there is none."""
        server = self.pool.server_for(place.language)

        async def op(client: LspClient, doc: OpenDocument | None) -> tuple[Any, list[Any]]:
            if not client.supports("call_hierarchy_provider"):
                raise InvalidToolInput(f"{server.name} does not support call hierarchy")
            params = lsp.CallHierarchyPrepareParams(text_document=_document(doc), position=_position(doc, place))
            items = await client.request(lsp.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY, params, timeout_s=self._timeout)
            if not items:
                return None, []
            item = items[0]
            if direction == "incoming":
                calls = await client.request(
                    lsp.CALL_HIERARCHY_INCOMING_CALLS,
                    lsp.CallHierarchyIncomingCallsParams(item=item),
                    timeout_s=self._timeout,
                )
            else:
                calls = await client.request(
                    lsp.CALL_HIERARCHY_OUTGOING_CALLS,
                    lsp.CallHierarchyOutgoingCallsParams(item=item),
                    timeout_s=self._timeout,
                )
            return item, list(calls or [])

        return await self._ask(place, op)

    async def document_symbols(self, language: str, path: Path, display: str) -> Any:
        """The server's outline of ``path`` (nested or flat, as it answers); None when it has no outline."""

        async def op(client: LspClient, doc: OpenDocument | None) -> Any:
            if not client.supports("document_symbol_provider"):
                return None
            params = lsp.DocumentSymbolParams(text_document=_document(doc))
            return await client.request(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL, params, timeout_s=self._timeout)

        return await self.pool.run(language, op, path=path, display=display)

    async def workspace_symbols(
        self, language: str, query: str, *, anchor: Path | None, display: str | None
    ) -> list[lsp.SymbolInformation | lsp.WorkspaceSymbol]:
        """The workspace-symbol answer of ``language``'s server (``anchor``: a file of that language, to start it)."""

        async def op(client: LspClient, _doc: OpenDocument | None) -> Any:
            if not client.supports("workspace_symbol_provider"):
                return []
            params = lsp.WorkspaceSymbolParams(query=query)
            return await client.request(lsp.WORKSPACE_SYMBOL, params, timeout_s=self._timeout)

        return list(await self.pool.run(language, op, path=anchor, display=display) or [])

    async def diagnostics(self, language: str, path: Path, display: str, notes: list[str]) -> list[lsp.Diagnostic]:
        """The diagnostics of ``path`` as the server has it: pulled when it can, else the published ones
        for this version (waiting up to ``diagnostics_wait_s``; a note says when none came)."""
        wait = self._diagnostics_wait

        async def op(client: LspClient, doc: OpenDocument | None) -> list[lsp.Diagnostic]:
            assert doc is not None
            if client.supports("diagnostic_provider"):
                params = lsp.DocumentDiagnosticParams(text_document=_document(doc))
                report = await client.request(lsp.TEXT_DOCUMENT_DIAGNOSTIC, params, timeout_s=self._timeout)
                return list(getattr(report, "items", None) or [])
            deadline = time.monotonic() + wait
            while True:
                changed = client.diagnostics_changed
                published = client.diagnostics.get(doc.uri)
                if published is not None and (
                    published.version == doc.version or (published.version is None and published.received >= doc.synced)
                ):
                    return list(published.items)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    notes.append(f"the server published no diagnostics for this version within {wait:g} s")
                    return list(published.items) if published is not None else []
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), remaining)

        return await self.pool.run(language, op, path=path, display=display)
