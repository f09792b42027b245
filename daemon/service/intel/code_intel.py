"""Code intelligence for one workspace: the domain service behind the MCP tools (and later LSP/ACP).

One method per tool. Symbols can be named ("Class.method", "module.func", "ns::func") or given
as file + line (+ column); a name is resolved through the index (exact ``qualified_name``
match on a lexical search), then package re-exports (``requests.get``), then a Tree-sitter scan, and then the
language server of that file's language is asked at the name's position; while that server is not
ready yet, ``find_definition`` by name answers at once with the index's definitions
(``answered_by="index"``) instead of waiting. In the daemon, reference answers are remembered while
nothing the language server could see has changed (``_references``). Results are bounded
(``max_results``, ``max_chars``), paths are workspace-relative, lines and columns 1-based.

Open it with ``async with CodeIntelService.open(config) as intel:``: that opens the workspace
index (a failure to open it only turns the index tools off, with the reason), creates the
language-server pool, and in the background starts the servers of the workspace's languages
(``intel.prestart``) and runs a lexical index pass (``intel.index_on_start``). Closing stops
every server and releases the index.

Tree-sitter work for a request (``get_ast_node``, the scopes around definitions and references)
runs off the event loop under a time and depth budget (``intel.syntax_timeout_seconds``,
``intel.syntax_max_depth``) and answers ``too_complex`` when it is spent, so one pathological file
cannot hold the loop or the threads other requests need.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from daemon.config import Config
from daemon.core.intel_models import (
    AstNodeResult,
    CallHierarchyResult,
    Definition,
    DefinitionResult,
    DiagnosticsResult,
    IntelStatus,
    LanguageServerState,
    ReferencesResult,
    SignatureResult,
    SymbolInfo,
    SymbolsResult,
    TypeResult,
)
from daemon.core.languages import CODE_LANGUAGES, language_for_path
from daemon.core.lru import LruMap
from daemon.core.models import SearchFilters, SearchMode, SearchResult
from daemon.errors import InvalidToolInput, LanguageServerError
from daemon.index.scanner import Scanner
from daemon.index.shared_index import OwnerThread, SharedIndex
from daemon.intel.ast_nodes import SyntaxFile
from daemon.intel.import_lines import in_import_statement
from daemon.intel.lsp.convert import FileLines, LspTarget, diagnostic_info, flatten_document_symbols, symbol_information
from daemon.intel.lsp.documents import read_text
from daemon.intel.lsp.pool import LanguageServerPool
from daemon.intel.lsp.requests import ServerRequests
from daemon.intel.parsers import has_grammar
from daemon.intel.syntax_budget import SyntaxBudget
from daemon.intel.workspace_paths import WorkspacePaths
from daemon.service.intel.outline import chunk_outline, outline_result
from daemon.service.intel.params import (
    AstNodeParams,
    CallHierarchyParams,
    DefinitionParams,
    DiagnosticsParams,
    DocumentSymbolsParams,
    ReferencesParams,
    SignatureParams,
    TypeParams,
    WorkspaceSymbolsParams,
)
from daemon.service.intel.results import IntelResults
from daemon.service.intel.server_pool import open_pool
from daemon.service.intel.signatures import Signatures
from daemon.service.intel.symbol_resolver import SymbolResolver
from daemon.service.intel.syntax_worker import SyntaxWorker
from daemon.service.intel.targets import Target, TargetFinder, language_of
from daemon.service.intel.trust_notice import trust_notice
from daemon.service.intel.types import Types

if TYPE_CHECKING:
    from lsprotocol import types as lsp

    from daemon.index.workspace_index import WorkspaceIndex

__all__ = ["CodeIntelService"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_NOT_READY_YET = frozenset(
    {
        LanguageServerState.NOT_STARTED,
        LanguageServerState.STARTING,
        LanguageServerState.RESTARTING,
        LanguageServerState.INDEXING,
    }
)
"""States in which a definition by name is answered from the index rather than waited for."""

_REMEMBERED_REFERENCES = 256
"""Reference answers kept in the daemon (see ``CodeIntelService._references``)."""


class CodeIntelService:
    """See the module docstring."""

    def __init__(
        self, config: Config, *, pool: LanguageServerPool, index_generation: Callable[[], object] | None = None
    ) -> None:
        self.config = config
        self.intel = config.intel
        self.paths = WorkspacePaths(config.workspace_path)
        self.pool = pool
        self.index = SharedIndex(config, wait_seconds=config.intel.ready_wait_seconds)
        self._scanner = Scanner.for_workspace(self.paths.root, config.index, include_secrets=False)
        self._resolver = SymbolResolver(
            self.paths.root,
            index_search=self.index.candidates,
            scanner=self._scanner,
            max_file_bytes=config.index.max_file_bytes,
            generation=index_generation,
        )
        self._finder = TargetFinder(self.paths, self._resolver)
        self._requests = ServerRequests(
            pool,
            timeout_s=config.intel.request_timeout_seconds,
            diagnostics_wait_s=config.intel.diagnostics_wait_seconds,
        )
        self._budget = SyntaxBudget(
            seconds=config.intel.syntax_timeout_seconds, max_depth=config.intel.syntax_max_depth
        )
        self._results = IntelResults(self.paths, self._budget)
        self._signatures = Signatures(self.paths, self._requests, self._resolver, self._results)
        self._types = Types(self._requests, self._results)
        self._syntax = SyntaxWorker()
        self._representative: dict[str, Path] = {}
        self._index_generation = index_generation
        # answers remembered while nothing the server could see has changed: a key holds the index generation
        # and the server's view token (``_references``), so an old answer is never found again, never stale
        self._references_seen: LruMap[tuple[object, ...], list[LspTarget]] = LruMap(_REMEMBERED_REFERENCES)
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- lifecycle ------------------------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        config: Config,
        *,
        background: bool = True,
        index: WorkspaceIndex | None = None,
        run_on_owner: OwnerThread[object] | None = None,
        index_generation: Callable[[], object] | None = None,
    ) -> AsyncGenerator[CodeIntelService]:
        """Create the pool and open the index in the background (tools wait for it, bounded).

        ``background=False`` skips the prestart of language servers and the startup index pass.
        ``index``: an index the caller owns and keeps fresh (the daemon's); it is used, not opened, and
        ``run_on_owner`` (the owner's thread, see ``SharedIndex.adopt``) is where every use of it runs;
        ``index_generation``: the owner's token that changes with the index (names resolved through
        the index are remembered while it holds, see ``SymbolResolver``).
        """
        pool = await open_pool(config)
        service = cls(config, pool=pool, index_generation=index_generation)
        if index is not None:
            service.index.adopt(index, run=run_on_owner)
        else:
            service._spawn(service._open_index(run_pass=background and config.intel.index_on_start))
        if background and config.intel.prestart:
            service._spawn(service._prestart())
        try:
            yield service
        finally:
            await service.aclose()

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.pool.aclose()
        self._syntax.close()
        await asyncio.to_thread(self.index.close)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _prestart(self) -> None:
        try:
            languages = await asyncio.to_thread(self._detect_languages)
            started = self.pool.prestart(languages)
            logger.info("prestarting language servers: %s", ", ".join(started) or "none")
        except Exception:  # background work: log, never take the server down
            logger.exception("prestarting language servers failed")

    async def _open_index(self, *, run_pass: bool) -> None:
        try:
            await asyncio.to_thread(lambda: self.index.open(run_pass=run_pass))
        except Exception:  # background work: log, never take the server down
            logger.exception("opening the workspace index failed")

    def _detect_languages(self) -> list[str]:
        """Code languages present in the workspace, most files first; remembers one file of each."""
        counts: dict[str, int] = {}
        for entry in self._scanner.scan().files:
            if entry.language in CODE_LANGUAGES:
                counts[entry.language] = counts.get(entry.language, 0) + 1
                self._representative.setdefault(entry.language, entry.abs_path)
        return sorted(counts, key=lambda lang: -counts[lang])

    # -- tools: positions -----------------------------------------------------------------------

    async def find_definition(self, p: DefinitionParams) -> DefinitionResult:
        max_results, max_chars = p.max_results, p.max_chars
        targets, notes, query = await self._finder.targets(p.symbol, p.file, p.line, p.column)
        starting = self._starting_server(targets) if not p.file else None
        if starting is not None:
            return await self._index_definitions(targets, notes, query, starting, max_results, max_chars)
        found, server = await self._ask_each(targets, self._definitions)
        unique = list({(t.path, t.selection.start.line, t.selection.start.character): t for t in found}.values())
        definitions = await asyncio.to_thread(self._results.definitions, unique[:max_results], max_chars)
        if not definitions:
            notes.append("the language server found no definition at this position")
        return _definition_result(query, definitions, len(unique), max_results, server, notes)

    async def _ask_each(
        self, targets: list[Target], ask: Callable[[Target], Awaitable[list[LspTarget]]]
    ) -> tuple[list[LspTarget], str | None]:
        """What ``ask`` answers for every target, in order, and the name of the server asked."""
        found: list[LspTarget] = []
        server: str | None = None
        for target in targets:
            server = self.pool.server_for(target.language).name
            found.extend(await ask(target))
        return found, server

    async def _definitions(self, target: Target) -> list[LspTarget]:
        found: list[LspTarget] = []
        for hit in await self._requests.definitions(target):
            found.extend(await self._through_import(target, hit))
        return found

    def _starting_server(self, targets: list[Target]) -> str | None:
        """The name and state of the language server of ``targets`` while it is not ready yet (it is
        started if it was not); None when it is ready, or cannot start (then it is asked, and says why)."""
        for target in targets:
            server = self.pool.server_for(target.language)
            if not server.spec.available:
                continue
            state = server.status().state
            if state in _NOT_READY_YET:
                server.start_soon()
                return f"{server.name} is {state.value}"
        return None

    async def _index_definitions(
        self, targets: list[Target], notes: list[str], query: str, starting: str, max_results: int, max_chars: int
    ) -> DefinitionResult:
        """The definitions the index holds for a name, answered while the language server starts."""
        definitions = await asyncio.to_thread(self._results.index_definitions, targets[:max_results], max_chars)
        notes.append(
            f"answered from the workspace index: the language server {starting}; "
            "ask again in a few seconds for its answer (imports followed, types resolved)"
        )
        return _definition_result(query, definitions, len(targets), max_results, None, notes, answered_by="index")

    async def _through_import(self, target: Target, hit: LspTarget) -> list[LspTarget]:
        """``hit``, or where it leads when it is an import in the asked file (one hop, see ``import_lines``)."""
        if hit.path != target.absolute:
            return [hit]
        lines = (await asyncio.to_thread(read_text, hit.path)).splitlines()
        if not in_import_statement(lines, hit.selection.start.line):
            return [hit]
        logger.debug(
            "definition of %s is an import (line %d): asking at the import",
            target.relative,
            hit.selection.start.line + 1,
        )
        onward = [t for t in await self._requests.definitions(target, hit.selection.start) if t.path != hit.path]
        return onward or [hit]

    async def get_references(self, p: ReferencesParams) -> ReferencesResult:
        include_declaration, max_results = p.include_declaration, p.max_results
        targets, notes, query = await self._finder.targets(p.symbol, p.file, p.line, p.column)
        found, server = await self._ask_each(
            targets, functools.partial(self._references, include_declaration=include_declaration)
        )
        unique = sorted(
            {(t.path, t.range.start.line, t.range.start.character): t for t in found}.values(),
            key=lambda t: (str(t.path), t.range.start.line, t.range.start.character),
        )
        declarations = {(t.absolute, t.line) for t in targets if t.match is not None}
        references = await asyncio.to_thread(self._results.references, unique[:max_results], declarations)
        return ReferencesResult(
            query=query,
            references=tuple(references),
            total=len(unique),
            truncated=len(unique) > max_results,
            files=len({t.path for t in unique}),
            server=server,
            notes=tuple(notes),
        )

    async def _references(self, target: Target, *, include_declaration: bool) -> list[LspTarget]:
        """The server's references at ``target``. In the daemon (``index_generation`` given) the answer is
        remembered with the index generation and the token of what the server knows (every document
        and watched-file notification it was sent, its restarts and reported work: ``pool.view``) and
        answered again while both stay the same: any change the server could see asks it again."""
        if self._index_generation is None:
            return await self._requests.references(target, include_declaration=include_declaration)
        generation = self._index_generation()
        view = await self.pool.view(target.language, target.absolute, display=target.relative)
        if view is None:
            return await self._requests.references(target, include_declaration=include_declaration)
        key = (generation, view, target.absolute, target.line, target.column, include_declaration)
        found = self._references_seen.get(key)
        if found is None:
            found = await self._requests.references(target, include_declaration=include_declaration)
            self._references_seen.put(key, found)
        return list(found)

    async def get_signature(self, p: SignatureParams) -> SignatureResult:
        max_chars = p.max_chars
        targets, notes, query = await self._finder.targets(p.symbol, p.file, p.line, p.column)
        target = targets[0]
        server = self.pool.server_for(target.language).name
        return await self._signatures.signature(target, query, notes, max_chars=max_chars, server=server)

    async def get_type(self, p: TypeParams) -> TypeResult:
        targets, notes, query = await self._finder.targets(p.symbol, p.file, p.line, p.column)
        target = targets[0]
        server = self.pool.server_for(target.language).name
        return await self._types.type_of(target, query, notes, server=server, limit=p.max_results)

    async def call_hierarchy(self, p: CallHierarchyParams) -> CallHierarchyResult:
        direction, max_results = p.direction, p.max_results
        targets, notes, query = await self._finder.targets(p.symbol, p.file, p.line, p.column)
        target = targets[0]
        server = self.pool.server_for(target.language)
        item, calls = await self._requests.call_hierarchy(target, direction)
        if item is None:
            notes.append("the language server found no callable at this position")
        converted = await asyncio.to_thread(self._results.calls, item, calls[:max_results], direction)
        return CallHierarchyResult(
            query=query,
            direction=direction,
            item=converted[0],
            calls=tuple(converted[1]),
            total=len(calls),
            truncated=len(calls) > max_results,
            server=server.name,
            notes=tuple(notes),
        )

    # -- tools: files ---------------------------------------------------------------------------

    async def get_ast_node(self, p: AstNodeParams) -> AstNodeResult:
        file, line, column, max_chars = p.file, p.line, p.column, p.max_chars
        resolved = self.paths.resolve(file)
        language = language_for_path(resolved.relative)
        if language is None or not has_grammar(language):
            raise InvalidToolInput(f"{resolved.relative!r}: no Tree-sitter grammar for this kind of file")
        clock = self._budget.start(f"the syntax node at {resolved.relative}:{line}")
        text = await asyncio.to_thread(read_text, resolved.absolute, display=resolved.relative)

        def describe() -> AstNodeResult:
            syntax = SyntaxFile.parse(language, text.encode("utf-8"), clock=clock)
            return syntax.describe(line, column, max_text=max_chars)

        result = await self._syntax.run(describe, clock)
        return result.model_copy(update={"path": resolved.relative})

    async def document_symbols(self, p: DocumentSymbolsParams) -> SymbolsResult:
        """The file's outline: nested at most ``depth`` deep, without what sits inside functions unless
        ``include_locals``, and at most ``max_chars`` of symbols (as JSON); ``notes`` say what was left out."""
        file, max_results, depth, include_locals = p.file, p.max_results, p.depth, p.include_locals
        max_chars = p.max_chars
        resolved = self.paths.resolve(file)
        language = language_of(resolved.relative)
        notes: list[str] = []
        server_name: str | None = self.pool.server_for(language).name
        try:
            result = await self._requests.document_symbols(language, resolved.absolute, resolved.relative)
        except LanguageServerError as exc:
            result = None
            notes.append(f"language server unavailable ({exc.message})")
        if result is not None:
            flat = await asyncio.to_thread(
                functools.partial(
                    flatten_document_symbols,
                    result,
                    resolved.absolute,
                    FileLines(self.paths),
                    limit=max_results,
                    depth=depth,
                    include_locals=include_locals,
                )
            )
        else:
            server_name = None
            notes.append("fallback: symbols from the Tree-sitter chunker")
            symbols, total = await asyncio.to_thread(
                self._results.chunk_symbols, resolved.absolute, resolved.relative, language, 5000
            )
            flat = chunk_outline(symbols, total, depth=depth, max_results=max_results)
        return outline_result(
            resolved.relative, flat, depth=depth, max_chars=max_chars, server=server_name, notes=notes
        )

    async def workspace_symbols(self, p: WorkspaceSymbolsParams) -> SymbolsResult:
        query, language, max_results = p.query, p.language, p.max_results
        if not query.strip():
            raise InvalidToolInput("give a non-empty query (a symbol name or its start)")
        if language is not None:
            languages = [language]
            self.pool.server_for(language)
        else:
            languages = list(dict.fromkeys(lang for s in self.pool.running() for lang in s.spec.languages))
            if not languages:
                languages = await asyncio.to_thread(self._detect_languages)
        notes: list[str] = []
        symbols: list[SymbolInfo] = []
        servers: list[str] = []
        seen_servers: set[str] = set()
        for lang in languages:
            server = self.pool.server_for(lang)
            if server.name in seen_servers or not server.spec.available:
                continue
            seen_servers.add(server.name)
            anchor = self._representative.get(lang)
            if anchor is None:
                await asyncio.to_thread(self._detect_languages)
                anchor = self._representative.get(lang)
            display = self.paths.display(anchor)[0] if anchor else None
            items = await self._requests.workspace_symbols(lang, query, anchor=anchor, display=display)
            servers.append(server.name)
            converted = await asyncio.to_thread(self._symbol_infos, items)
            symbols.extend(s for s in converted if s.location.in_workspace)
        if not servers:
            notes.append("no language server is available for the workspace's languages")
        total = len(symbols)
        return SymbolsResult(
            query=query,
            symbols=tuple(symbols[:max_results]),
            total=total,
            truncated=total > max_results,
            server=", ".join(servers) or None,
            notes=tuple(notes),
        )

    def _symbol_infos(self, items: list[lsp.SymbolInformation | lsp.WorkspaceSymbol]) -> list[SymbolInfo]:
        lines = FileLines(self.paths)
        return [symbol_information(item, lines) for item in items]

    async def diagnostics(self, p: DiagnosticsParams) -> DiagnosticsResult:
        file, max_results = p.file, p.max_results
        resolved = self.paths.resolve(file)
        language = language_of(resolved.relative)
        notes: list[str] = []
        items = await self._requests.diagnostics(language, resolved.absolute, resolved.relative, notes)
        lines = FileLines(self.paths)
        converted = await asyncio.to_thread(lambda: [diagnostic_info(d, resolved.absolute, lines) for d in items])
        return DiagnosticsResult(
            path=resolved.relative,
            diagnostics=tuple(converted[:max_results]),
            total=len(converted),
            truncated=len(converted) > max_results,
            server=self.pool.server_for(language).name,
            notes=tuple(notes),
        )

    # -- tools: index ---------------------------------------------------------------------------

    async def search(
        self, query: str, *, k: int | None, filters: SearchFilters | None, mode: SearchMode | None = None
    ) -> SearchResult:
        """Hybrid (or ``mode``) search over the workspace index, waiting (bounded) for it to open."""
        return await asyncio.to_thread(self.index.search, query, k, filters, mode)

    async def index_status(self) -> IntelStatus:
        status, note = await asyncio.to_thread(self.index.status)
        return IntelStatus(
            workspace=str(self.paths.root),
            index=status,
            index_note=note,
            servers=tuple(self.pool.statuses()),
            trust=trust_notice(self.config),
        )


def _definition_result(
    query: str,
    definitions: list[Definition],
    total: int,
    max_results: int,
    server: str | None,
    notes: list[str],
    *,
    answered_by: Literal["language_server", "index"] = "language_server",
) -> DefinitionResult:
    return DefinitionResult(
        query=query,
        definitions=tuple(definitions),
        total=total,
        truncated=total > max_results,
        server=server,
        answered_by=answered_by,
        notes=tuple(notes),
    )
