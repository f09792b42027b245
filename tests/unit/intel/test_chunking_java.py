"""Java chunking with the real tree-sitter-java grammar."""

from __future__ import annotations

from daemon.core.models import SymbolKind
from tests.unit.intel.chunking_support import chunk_fixture, named, only


def test_types_methods_and_constructors_nest_through_their_outer_types() -> None:
    chunks = named(chunk_fixture("java", "Inventory.java", "java"))

    assert {name: c.symbol_kind for name, c in chunks.items()} == {
        "Inventory": SymbolKind.CLASS,
        "Inventory.Inventory": SymbolKind.METHOD,
        "Inventory.add": SymbolKind.METHOD,
        "Inventory.Kind": SymbolKind.ENUM,
        "Inventory.Kind.label": SymbolKind.METHOD,
        "Inventory.Visitor": SymbolKind.INTERFACE,
        "Inventory.Visitor.fallback": SymbolKind.METHOD,
        "Inventory.Entry": SymbolKind.CLASS,
        "Inventory.Entry.Entry": SymbolKind.METHOD,
        "Inventory.Node": SymbolKind.CLASS,
        "Inventory.Node.Inner": SymbolKind.CLASS,
        "Inventory.Node.Inner.touch": SymbolKind.METHOD,
    }


def test_signatures_leave_out_annotations_and_javadoc_is_the_docstring() -> None:
    chunks = named(chunk_fixture("java", "Inventory.java", "java"))

    add = chunks["Inventory.add"]
    assert add.signature == "public synchronized boolean add(final T item) throws IllegalStateException"
    assert add.docstring == "Adds an item."
    assert (add.start_line, add.end_line) == (20, 27)
    assert add.text.split("\n")[3].strip() == "@Override"
    inventory = chunks["Inventory"]
    assert inventory.signature == "public class Inventory<T extends Item> implements Iterable<T>"
    assert inventory.docstring == "An inventory of items.\n\n@param <T> the item type"
    assert (inventory.start_line, inventory.end_line) == (7, 62)


def test_the_class_chunk_keeps_fields_and_abstract_declarations_but_no_method_bodies() -> None:
    text = named(chunk_fixture("java", "Inventory.java", "java"))["Inventory"].text

    assert "private final List<T> items = new ArrayList<>();" in text
    assert "public abstract int size();" in text
    assert "public synchronized boolean add(final T item) throws IllegalStateException {" in text
    assert "requireNonNull(item);" not in text


def test_imports_are_collected_and_package_lines_make_no_module_chunk() -> None:
    chunks = chunk_fixture("java", "Inventory.java", "java")

    assert chunks[0].imports == ("java.util.ArrayList", "java.util.List", "java.util.Objects.requireNonNull")
    assert only(chunks, SymbolKind.MODULE) == []
