"""JavaScript, TypeScript and TSX chunking with the real grammars."""

from __future__ import annotations

from daemon.core.models import SymbolKind
from daemon.intel.chunking import chunk_source
from tests.unit.intel.chunking_support import assert_well_formed, chunk_fixture, named, only


def test_typescript_symbols_get_their_kinds_and_qualified_names() -> None:
    chunks = chunk_fixture("ecmascript", "service.ts", "typescript")

    kinds = {name: chunk.symbol_kind for name, chunk in named(chunks).items()}

    assert kinds == {
        "ServerOptions": SymbolKind.INTERFACE,
        "Handler": SymbolKind.TYPE,
        "State": SymbolKind.ENUM,
        "Server": SymbolKind.CLASS,
        "Server.onError": SymbolKind.METHOD,
        "Server.constructor": SymbolKind.METHOD,
        "Server.start": SymbolKind.METHOD,
        "Server.running": SymbolKind.METHOD,
        "add": SymbolKind.FUNCTION,
        "createServer": SymbolKind.FUNCTION,
        "createServer.validate": SymbolKind.FUNCTION,
        "Util": SymbolKind.NAMESPACE,
        "Util.clamp": SymbolKind.FUNCTION,
        "default": SymbolKind.FUNCTION,
        "legacy": SymbolKind.FUNCTION,
    }
    assert {c.language for c in chunks} == {"typescript"}


def test_signatures_leave_out_export_and_decorators() -> None:
    chunks = named(chunk_fixture("ecmascript", "service.ts", "typescript"))

    assert chunks["Server"].signature == "class Server extends EventEmitter implements Disposable"
    assert chunks["Server.start"].signature == "async start(port: number = DEFAULT_PORT): Promise<void>"
    assert chunks["add"].signature == "const add = (a: number, b: number): number =>"
    assert chunks["createServer"].signature == "function createServer(options: ServerOptions): Server"
    assert chunks["Handler"].signature == "type Handler"


def test_ranges_include_the_export_the_decorators_and_the_doc_comment_above() -> None:
    chunks = named(chunk_fixture("ecmascript", "service.ts", "typescript"))

    server = chunks["Server"]
    assert (server.start_line, server.end_line) == (24, 48)
    assert server.text.startswith('/** A small HTTP-ish server. */\n@Injectable({ providedIn: "root" })\nexport class')
    assert server.docstring == "A small HTTP-ish server."
    assert (chunks["Server.start"].start_line, chunks["Server.start"].end_line) == (38, 41)
    assert chunks["Server.start"].text.lstrip().startswith("@Log()")
    assert chunks["ServerOptions"].docstring == "Options for the server."
    assert chunks["add"].docstring == "Adds two numbers."
    assert chunks["Server.onError"].docstring == "Called on every error."


def test_a_class_chunk_keeps_member_headers_but_not_their_bodies() -> None:
    text = named(chunk_fixture("ecmascript", "service.ts", "typescript"))["Server"].text

    assert "private state: State = State.Idle;" in text
    assert "abstract stop(): void;" in text
    assert "get running(): boolean {" in text
    assert "super();" not in text
    assert "this.state = State.Running;" not in text


def test_imports_cover_es_modules_re_exports_and_import_require() -> None:
    chunks = chunk_fixture("ecmascript", "service.ts", "typescript")

    assert chunks[0].imports == ("events", "./config", "fs", "./shared")


def test_top_level_statements_outside_symbols_become_module_chunks() -> None:
    modules = only(chunk_fixture("ecmascript", "service.ts", "typescript"), SymbolKind.MODULE)

    assert [(m.start_line, m.end_line) for m in modules] == [(1, 6), (71, 71)]
    assert "export const DEFAULT_PORT = 8080;" in modules[0].text


def test_commonjs_functions_and_require_calls_are_understood() -> None:
    chunks = chunk_fixture("ecmascript", "legacy.js", "javascript")
    symbols = named(chunks)

    assert chunks[0].imports == ("path", "fs/promises")
    assert symbols["join"].docstring == "Join two segments."
    assert symbols["load"].signature == "const load = async function (file)"
    assert symbols["exports.resolve"].name == "resolve"
    assert symbols["Cache.clear"].symbol_kind is SymbolKind.METHOD
    assert symbols["Cache.get"].symbol_kind is SymbolKind.METHOD
    assert symbols["Cache.create"].signature == "static create()"
    # "use strict" and the require lines alone are no module chunk
    assert all(m.start_line > 3 for m in only(chunks, SymbolKind.MODULE))


def test_tsx_components_are_chunked_with_the_tsx_grammar() -> None:
    chunks = chunk_fixture("ecmascript", "Button.tsx", "tsx")
    symbols = named(chunks)

    assert set(symbols) == {"Props", "Button", "App"}
    assert (symbols["Button"].start_line, symbols["Button"].end_line) == (5, 12)
    assert symbols["App"].signature == "function App()"
    assert chunks[0].imports == ("react",)


def test_broken_javascript_still_yields_chunks() -> None:
    source = b"function ok() { return 1; }\n\nfunction broken( { \n\nclass A { m() { return [; } }\n"

    chunks = chunk_source("bad.js", source, "javascript")

    assert_well_formed(chunks, source)
    assert "ok" in named(chunks)


def test_a_class_assigned_to_module_exports_is_a_class_and_this_closures_are_not_symbols() -> None:
    symbols = named(chunk_fixture("ecmascript", "legacy.js", "javascript"))

    assert symbols["Store"].symbol_kind is SymbolKind.CLASS
    assert (symbols["Store"].start_line, symbols["Store"].end_line) == (38, 42)
    assert symbols["Store.constructor"].symbol_kind is SymbolKind.METHOD
    assert not any(name.endswith("onChange") for name in symbols)
