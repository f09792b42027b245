"""``ided/index/search``, ``ided/index/status`` and the standard ``workspace/symbol``, from the index."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from daemon.core.models import ChunkKind, SearchMode, SearchResult
from daemon.lsp import convert
from daemon.lsp.handlers import daemon_params
from daemon.lsp.protocol import EmptyParams, IndexSearchParams, IndexSearchResult, IndexStatusResult, LspMethods
from daemon.lsp.session import wire_errors
from daemon.service.wire.api import Methods, SearchParams

if TYPE_CHECKING:
    from daemon.lsp.server import IdedLanguageServer

__all__ = ["SYMBOL_CANDIDATES", "SYMBOL_LIMIT", "register"]


SYMBOL_CANDIDATES = 100
SYMBOL_LIMIT = 50


async def _search(server: IdedLanguageServer, request: SearchParams) -> SearchResult:
    """Search through the front's ``Workspace``."""
    with wire_errors(Methods.INDEX_SEARCH):
        return await server.workspace_port.search(
            request.query, k=request.k, filters=request.filters(), mode=request.mode
        )


def register(server: IdedLanguageServer) -> None:
    @server.feature(LspMethods.INDEX_SEARCH)
    async def search(params: IndexSearchParams) -> IndexSearchResult:
        request = daemon_params(
            SearchParams,
            LspMethods.INDEX_SEARCH,
            query=params.query,
            k=params.k,
            kind=params.kind,
            language=params.language,
            path_glob=params.path_glob,
            mode=params.mode,
        )
        result = await _search(server, request)
        server.warn_if_indexing()
        if params.group_by_file:
            result = result.grouped_by_file()
        return convert.search_result(server.mapper, result, include_text=params.include_text)

    @server.feature(LspMethods.INDEX_STATUS)
    async def status(params: EmptyParams | None) -> IndexStatusResult:
        with wire_errors(Methods.DAEMON_STATUS):
            return convert.index_status(await server.workspace_port.status())

    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbol(params: types.WorkspaceSymbolParams) -> list[types.SymbolInformation]:
        query = params.query.strip()
        if not query:  # "all symbols" of a workspace is not a useful answer from a search index
            return []
        request = SearchParams(query=query, k=SYMBOL_CANDIDATES, kind=ChunkKind.CODE, mode=SearchMode.HYBRID)
        result = await _search(server, request)
        server.warn_if_indexing()
        return convert.symbol_information(server.mapper, result, query, SYMBOL_LIMIT)
