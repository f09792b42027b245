"""C and C++ chunking with the real tree-sitter-c and tree-sitter-cpp grammars."""

from __future__ import annotations

from daemon.core.models import SymbolKind
from tests.unit.intel.chunking_support import chunk_fixture, named, only


def test_c_functions_structs_typedefs_and_function_macros_become_chunks() -> None:
    chunks = named(chunk_fixture("c_family", "list.c", "c"))

    assert {name: (c.symbol_kind, c.start_line, c.end_line) for name, c in chunks.items()} == {
        "MIN": (SymbolKind.FUNCTION, 5, 5),
        "node": (SymbolKind.STRUCT, 7, 11),
        "list_t": (SymbolKind.STRUCT, 13, 16),
        "color_t": (SymbolKind.ENUM, 18, 18),
        "list_push": (SymbolKind.FUNCTION, 24, 38),
        "list_head": (SymbolKind.FUNCTION, 40, 41),
        "list_dump": (SymbolKind.FUNCTION, 44, 46),
    }


def test_c_signatures_and_doc_comments() -> None:
    chunks = named(chunk_fixture("c_family", "list.c", "c"))

    assert chunks["list_push"].signature == "int list_push(list_t *list, int value)"
    assert chunks["list_push"].docstring == "Push a value to the front."
    assert chunks["list_head"].signature == "static struct node *list_head(list_t *list)"
    assert chunks["list_head"].docstring == "Returns the head node."
    assert chunks["node"].docstring == "A node of the list."
    assert chunks["list_t"].signature == "typedef struct list_t"


def test_c_includes_are_imports_and_globals_and_prototypes_form_module_chunks() -> None:
    chunks = chunk_fixture("c_family", "list.c", "c")

    assert chunks[0].imports == ("stdlib.h", "list.h")
    modules = only(chunks, SymbolKind.MODULE)
    assert [(m.start_line, m.end_line) for m in modules] == [(1, 4), (20, 22)]
    assert "int list_len(const list_t *list);" in modules[1].text


def test_cpp_names_are_joined_with_dots_through_namespaces_classes_and_written_scopes() -> None:
    chunks = named(chunk_fixture("c_family", "widget.cpp", "cpp"))

    assert {name: c.symbol_kind for name, c in chunks.items()} == {
        "ui.core": SymbolKind.NAMESPACE,
        "ui.core.Widget": SymbolKind.CLASS,
        "ui.core.Widget.Widget": SymbolKind.METHOD,
        "ui.core.Widget.draw": SymbolKind.METHOD,
        "ui.core.Widget.Size": SymbolKind.STRUCT,
        "ui.core.Color": SymbolKind.ENUM,
        "helper": SymbolKind.FUNCTION,
        "ui.core.Widget.resize": SymbolKind.METHOD,
        "operator==": SymbolKind.FUNCTION,
        "c_entry": SymbolKind.FUNCTION,
    }


def test_cpp_templates_belong_to_the_symbol_and_class_chunks_keep_declarations_only() -> None:
    chunks = named(chunk_fixture("c_family", "widget.cpp", "cpp"))

    widget = chunks["ui.core.Widget"]
    assert widget.signature == "template <typename T> class Widget : public Base"
    assert widget.docstring == "A drawable widget."
    assert (widget.start_line, widget.end_line) == (6, 26)
    assert "void resize(int w, int h);" in widget.text
    assert "void draw() const {" in widget.text
    assert "render(value_);" not in widget.text
    assert chunks["ui.core.Widget.draw"].docstring == "Draws the widget."
    assert chunks["ui.core.Widget.resize"].signature == "void ui::core::Widget<int>::resize(int w, int h)"


def test_cpp_namespace_and_extern_c_wrappers_alone_make_no_module_chunk() -> None:
    chunks = chunk_fixture("c_family", "widget.cpp", "cpp")

    assert only(chunks, SymbolKind.MODULE) == []
    assert chunks[0].imports == ("string", "vector")
