"""Rust chunking with the real tree-sitter-rust grammar."""

from __future__ import annotations

from daemon.core.models import SymbolKind
from tests.unit.intel.chunking_support import chunk_fixture, only


def test_items_become_chunks_with_methods_qualified_by_their_impl_or_trait_type() -> None:
    chunks = chunk_fixture("rust", "shapes.rs", "rust")

    found = [(c.qualified_name, c.symbol_kind, c.start_line, c.end_line) for c in chunks]

    assert found == [
        ("Point", SymbolKind.STRUCT, 10, 15),
        ("Kind", SymbolKind.ENUM, 17, 21),
        ("Registry", SymbolKind.TYPE, 23, 23),
        ("Shape", SymbolKind.TRAIT, 25, 33),
        ("Shape.name", SymbolKind.METHOD, 29, 32),
        ("Point", SymbolKind.IMPL, 35, 39),
        ("Point.fmt", SymbolKind.METHOD, 36, 38),
        ("Point", SymbolKind.IMPL, 41, 49),
        ("Point.origin", SymbolKind.METHOD, 42, 48),
        ("Point.origin.zero", SymbolKind.FUNCTION, 44, 46),
        ("pkg/shapes", SymbolKind.MODULE, 51, 51),
        ("square", SymbolKind.FUNCTION, 53, 57),
        ("tests", SymbolKind.NAMESPACE, 59, 67),
        ("tests.origin_is_zero", SymbolKind.FUNCTION, 63, 66),
    ]


def test_signatures_doc_comments_and_attributes() -> None:
    chunks = chunk_fixture("rust", "shapes.rs", "rust")
    first = {c.qualified_name: c for c in reversed(chunks)}

    point = first["Point"]
    assert point.signature == "pub struct Point<T>"
    assert point.docstring == "A point in the plane."
    assert point.text.startswith("/// A point in the plane.\n#[derive(Debug, Clone)]\npub struct Point<T> {")
    impls = [c for c in chunks if c.symbol_kind is SymbolKind.IMPL]
    assert [c.signature for c in impls] == ["impl<T: Display> Display for Point<T>", "impl Point<f64>"]
    assert first["Point.fmt"].signature == "fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result"
    assert first["Shape.name"].docstring == 'The name, by default "shape".'
    assert first["tests"].text.startswith("#[cfg(test)]\nmod tests {")


def test_a_trait_chunk_keeps_bodiless_declarations_and_default_method_headers() -> None:
    chunks = chunk_fixture("rust", "shapes.rs", "rust")
    trait = next(c for c in chunks if c.qualified_name == "Shape")

    assert "fn area(&self) -> f64;" in trait.text
    assert "fn name(&self) -> &str {" in trait.text
    assert '        "shape"' not in trait.text.split("\n")


def test_use_declarations_are_imports_and_alone_make_no_module_chunk() -> None:
    chunks = chunk_fixture("rust", "shapes.rs", "rust")

    assert chunks[0].imports == ("std::collections::HashMap", "std::fmt::{self, Display}", "alloc", "super::*")
    assert [m.text for m in only(chunks, SymbolKind.MODULE)] == ["pub const MAX: usize = 10;"]
