"""Code intelligence inside the daemon: the language-server pool and its ``intel/*`` methods.

Uses the daemon's own index (no second owner) and forwards the watcher's changes to the
language servers so their answers follow the files on disk.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from daemon.config import Config
from daemon.core.intel_models import LanguageServerStatus
from daemon.service.api import (
    AstNodeParams,
    CallHierarchyParams,
    DocumentSymbolsParams,
    FileParams,
    Methods,
    ReferencesParams,
    SymbolTarget,
    WorkspaceSymbolsParams,
)
from daemon.service.code_intel import CodeIntelService
from daemon.service.index_host import IndexHost
from daemon.service.rpc import Handler

__all__ = ["IntelHost"]

logger = logging.getLogger(__name__)


class IntelHost:
    """A daemon component (see ``DaemonComponent``)."""

    def __init__(self, config: Config, index: IndexHost) -> None:
        self._config = config
        self._index = index
        self._stack = contextlib.AsyncExitStack()
        self._service: CodeIntelService | None = None

    async def start(self) -> None:
        self._service = await self._stack.enter_async_context(
            CodeIntelService.open(self._config, index=self._index.workspace_index)
        )
        self._index.on_files_changed(self._files_changed)

    async def close(self) -> None:
        await self._stack.aclose()
        self._service = None

    async def _files_changed(self, paths: list[str]) -> None:
        if self._service is not None:
            root = self._config.workspace_path
            await self._service.pool.files_changed([root / p for p in paths])

    def servers(self) -> list[LanguageServerStatus]:
        return list(self._service.pool.statuses()) if self._service is not None else []

    def _svc(self) -> CodeIntelService:
        if self._service is None:
            raise RuntimeError("code intelligence is not started")
        return self._service

    def handlers(self) -> Mapping[str, Handler]:
        async def definition(params: dict[str, Any]) -> Any:
            p = SymbolTarget.model_validate(params)
            return await self._svc().find_definition(
                p.symbol, file=p.file, line=p.line, column=p.column, max_results=p.max_results, max_chars=p.max_chars
            )

        async def references(params: dict[str, Any]) -> Any:
            p = ReferencesParams.model_validate(params)
            return await self._svc().get_references(
                p.symbol,
                file=p.file,
                line=p.line,
                column=p.column,
                include_declaration=p.include_declaration,
                max_results=p.max_results,
            )

        async def signature(params: dict[str, Any]) -> Any:
            p = SymbolTarget.model_validate(params)
            return await self._svc().get_signature(
                p.symbol, file=p.file, line=p.line, column=p.column, max_chars=p.max_chars
            )

        async def ast_node(params: dict[str, Any]) -> Any:
            p = AstNodeParams.model_validate(params)
            return await self._svc().get_ast_node(p.file, p.line, p.column, max_chars=p.max_chars)

        async def document_symbols(params: dict[str, Any]) -> Any:
            p = DocumentSymbolsParams.model_validate(params)
            return await self._svc().document_symbols(
                p.file, max_results=p.max_results, depth=p.depth, include_locals=p.include_locals, max_chars=p.max_chars
            )

        async def workspace_symbols(params: dict[str, Any]) -> Any:
            p = WorkspaceSymbolsParams.model_validate(params)
            return await self._svc().workspace_symbols(p.query, max_results=p.max_results)

        async def call_hierarchy(params: dict[str, Any]) -> Any:
            p = CallHierarchyParams.model_validate(params)
            return await self._svc().call_hierarchy(
                p.symbol, file=p.file, line=p.line, column=p.column, direction=p.direction, max_results=p.max_results
            )

        async def diagnostics(params: dict[str, Any]) -> Any:
            p = FileParams.model_validate(params)
            return await self._svc().diagnostics(p.file, max_results=p.max_results)

        async def status(params: dict[str, Any]) -> Any:
            return await self._svc().index_status()

        return {
            Methods.INTEL_DEFINITION: definition,
            Methods.INTEL_REFERENCES: references,
            Methods.INTEL_SIGNATURE: signature,
            Methods.INTEL_AST_NODE: ast_node,
            Methods.INTEL_DOCUMENT_SYMBOLS: document_symbols,
            Methods.INTEL_WORKSPACE_SYMBOLS: workspace_symbols,
            Methods.INTEL_CALL_HIERARCHY: call_hierarchy,
            Methods.INTEL_DIAGNOSTICS: diagnostics,
            Methods.INTEL_STATUS: status,
        }
