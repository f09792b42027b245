"""The code-intel service of a running daemon, behind the same methods as ``CodeIntelService``.

Fronts that attach to the daemon (``ided mcp --attach``) use this: one hot index and one set of
language servers for every editor and agent on the workspace. A broken connection is re-attached
once (starting a new daemon if the old one died) and the call retried.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from pydantic import BaseModel

from daemon.config import Config
from daemon.core.intel_models import (
    AstNodeResult,
    CallHierarchyResult,
    DefinitionResult,
    DiagnosticsResult,
    IntelStatus,
    ReferencesResult,
    SignatureResult,
    SymbolsResult,
)
from daemon.core.models import ChunkKind, SearchMode, SearchResult
from daemon.errors import DaemonError, ErrorCode
from daemon.service.api import Methods, SearchParams
from daemon.service.code_intel import trim_search_result
from daemon.service.daemon_client import DaemonClient
from daemon.service.rpc import RpcError

__all__ = ["RemoteCodeIntel"]

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)


class RemoteCodeIntel:
    def __init__(self, config: Config, client: DaemonClient) -> None:
        self._config = config
        self._client = client

    @classmethod
    async def attach(cls, config: Config) -> RemoteCodeIntel:
        return cls(config, await DaemonClient.attach(config, client="mcp", start=True))

    async def aclose(self) -> None:
        await self._client.close()

    async def _call(self, method: str, params: Mapping[str, Any] | BaseModel, result: type[M]) -> M:
        for attempt in (1, 2):
            try:
                return await self._client.call_model(method, params, result)
            except ConnectionError:
                if attempt == 2:
                    raise DaemonError(f"lost the connection to the daemon of {self._config.workspace}") from None
                logger.warning("daemon connection lost: re-attaching")
                await self._client.close()
                self._client = await DaemonClient.attach(self._config, client="mcp", start=True)
            except RpcError as exc:
                raw: object = exc.data
                data = cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}
                code = data.get("code")
                known = {c.value for c in ErrorCode}
                err_code = ErrorCode(code) if isinstance(code, str) and code in known else None
                raise DaemonError(exc.message.split(" [see ", 1)[0], code=err_code) from None
        raise AssertionError("unreachable")

    @staticmethod
    def _target(symbol: str | None, file: str | None, line: int | None, column: int | None) -> dict[str, Any]:
        return {"symbol": symbol, "file": file, "line": line, "column": column}

    async def find_definition(
        self,
        symbol: str | None = None,
        *,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        max_results: int = 10,
        max_chars: int = 2000,
    ) -> DefinitionResult:
        params = {**self._target(symbol, file, line, column), "max_results": max_results, "max_chars": max_chars}
        return await self._call(Methods.INTEL_DEFINITION, params, DefinitionResult)

    async def get_references(
        self,
        symbol: str | None = None,
        *,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        include_declaration: bool = True,
        max_results: int = 50,
    ) -> ReferencesResult:
        params = {
            **self._target(symbol, file, line, column),
            "include_declaration": include_declaration,
            "max_results": max_results,
        }
        return await self._call(Methods.INTEL_REFERENCES, params, ReferencesResult)

    async def get_signature(
        self,
        symbol: str | None = None,
        *,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        max_chars: int = 4000,
    ) -> SignatureResult:
        params = {**self._target(symbol, file, line, column), "max_chars": max(100, max_chars)}
        return await self._call(Methods.INTEL_SIGNATURE, params, SignatureResult)

    async def call_hierarchy(
        self,
        symbol: str | None = None,
        *,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        direction: Literal["incoming", "outgoing"] = "incoming",
        max_results: int = 50,
    ) -> CallHierarchyResult:
        params = {**self._target(symbol, file, line, column), "direction": direction, "max_results": max_results}
        return await self._call(Methods.INTEL_CALL_HIERARCHY, params, CallHierarchyResult)

    async def get_ast_node(
        self, file: str, line: int, column: int | None = None, *, max_chars: int = 200
    ) -> AstNodeResult:
        params = {"file": file, "line": line, "column": column, "max_chars": max(100, max_chars)}
        return await self._call(Methods.INTEL_AST_NODE, params, AstNodeResult)

    async def document_symbols(
        self,
        file: str,
        *,
        max_results: int = 200,
        depth: int | None = 2,
        include_locals: bool = False,
        max_chars: int | None = 20_000,
    ) -> SymbolsResult:
        params = {
            "file": file,
            "max_results": max_results,
            "depth": depth,
            "include_locals": include_locals,
            "max_chars": max_chars,
        }
        return await self._call(Methods.INTEL_DOCUMENT_SYMBOLS, params, SymbolsResult)

    async def workspace_symbols(
        self, query: str, *, language: str | None = None, max_results: int = 50
    ) -> SymbolsResult:
        params = {"query": query, "max_results": max_results}
        return await self._call(Methods.INTEL_WORKSPACE_SYMBOLS, params, SymbolsResult)

    async def diagnostics(self, file: str, *, max_results: int = 100) -> DiagnosticsResult:
        params = {"file": file, "max_results": max_results}
        return await self._call(Methods.INTEL_DIAGNOSTICS, params, DiagnosticsResult)

    async def search_code(
        self,
        query: str,
        *,
        k: int = 10,
        language: str | None = None,
        path_glob: str | None = None,
        max_chars: int = 1500,
    ) -> SearchResult:
        params = SearchParams(query=query, k=k, kind=ChunkKind.CODE, language=language, path_glob=path_glob)
        return trim_search_result(await self._call(Methods.INDEX_SEARCH, params, SearchResult), max_chars)

    async def search_docs(self, query: str, *, k: int = 10, max_chars: int = 1500) -> SearchResult:
        params = SearchParams(query=query, k=k, kind=ChunkKind.DOCS, mode=SearchMode.HYBRID)
        return trim_search_result(await self._call(Methods.INDEX_SEARCH, params, SearchResult), max_chars)

    async def index_status(self) -> IntelStatus:
        return await self._call(Methods.INTEL_STATUS, {}, IntelStatus)
