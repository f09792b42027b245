"""Go chunking with the real tree-sitter-go grammar."""

from __future__ import annotations

from daemon.core.models import SymbolKind
from tests.unit.intel.chunking_support import chunk_fixture, named, only


def test_functions_methods_and_type_specs_become_chunks() -> None:
    chunks = named(chunk_fixture("go", "server.go", "go"))

    assert {name: c.symbol_kind for name, c in chunks.items()} == {
        "Server": SymbolKind.STRUCT,
        "Handler": SymbolKind.INTERFACE,
        "ID": SymbolKind.TYPE,
        "Pair": SymbolKind.STRUCT,
        "NewServer": SymbolKind.FUNCTION,
        "Server.Start": SymbolKind.METHOD,
        "Pair.String": SymbolKind.METHOD,
    }


def test_methods_are_qualified_by_the_receiver_base_type_and_keep_the_receiver_in_the_signature() -> None:
    chunks = named(chunk_fixture("go", "server.go", "go"))

    start = chunks["Server.Start"]
    assert start.name == "Start"
    assert start.signature == "func (s *Server) Start(ctx context.Context) error"
    assert chunks["Pair.String"].signature == "func (p Pair[K, V]) String() string"
    assert chunks["Pair"].signature == "type Pair[K comparable, V any] struct"


def test_doc_comment_blocks_above_are_docstrings_and_part_of_the_range() -> None:
    chunks = named(chunk_fixture("go", "server.go", "go"))

    server = chunks["Server"]
    assert server.docstring == "Server serves requests.\nIt is safe for concurrent use."
    assert (server.start_line, server.end_line) == (20, 25)
    assert server.signature == "type Server struct"
    assert (chunks["Handler"].start_line, chunks["Handler"].end_line) == (28, 31)
    assert chunks["Handler"].docstring == "Handler handles one request."
    assert chunks["ID"].signature == "type ID int64"
    assert (chunks["Server.Start"].start_line, chunks["Server.Start"].end_line) == (47, 51)


def test_import_paths_are_collected_and_package_vars_and_consts_form_a_module_chunk() -> None:
    chunks = chunk_fixture("go", "server.go", "go")

    assert chunks[0].imports == ("context", "fmt", "net/http", "errors")
    modules = only(chunks, SymbolKind.MODULE)
    assert [(m.start_line, m.end_line) for m in modules] == [(1, 18)]
    assert "defaultPort = 8080" in modules[0].text
