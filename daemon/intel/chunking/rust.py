"""Rust: fn, struct, enum, union, trait, impl, mod, type alias, macro_rules.

* Functions in an ``impl``/``trait`` are ``METHOD``s qualified by the type: ``impl Display for
  Point<T> { fn fmt }`` -> ``Point.fmt``. The ``impl`` chunk itself is ``IMPL`` named after the
  type (``Point``), its signature the full header (``impl<T: Clone> fmt::Display for Point<T>``).
* ``mod name { … }`` is a ``NAMESPACE``: ``tests.it_works``. Trait method declarations without a
  body stay in the trait's chunk.
* ``docstring``: the ``///`` / ``/** */`` (or ``//``) comment block directly above; ``#[…]``
  attributes between it and the item are part of the range.
* ``imports``: ``use`` arguments as written (``std::collections::{HashMap, HashSet}``) and
  ``extern crate`` names. ``use``, ``mod x;`` and ``#![…]`` lines alone never make a module chunk.
"""

from __future__ import annotations

from tree_sitter import Node

from daemon.core.models import SymbolKind
from daemon.intel.chunking._tree import FileState, Handler, Scope, Symbol, TreeChunker

__all__ = ["RustChunker"]

_ITEM_KINDS = {
    "struct_item": SymbolKind.STRUCT,
    "union_item": SymbolKind.STRUCT,
    "enum_item": SymbolKind.ENUM,
    "type_item": SymbolKind.TYPE,
    "macro_definition": SymbolKind.FUNCTION,
}


def _type_name(st: FileState, node: Node | None) -> str:
    """``Point`` for ``Point<T>``, ``fmt::Formatter<'_>``, ``&mut Point`` and the like."""
    while node is not None:
        kind = node.type
        if kind in ("type_identifier", "primitive_type", "identifier"):
            return st.src.node_text(node)
        if kind in ("generic_type", "reference_type", "pointer_type"):
            node = node.child_by_field_name("type")
        elif kind == "scoped_type_identifier":
            node = node.child_by_field_name("name")
        else:
            return " ".join(st.src.node_text(node).split())
    return ""


class RustChunker(TreeChunker):
    comment_types = frozenset({"line_comment", "block_comment"})
    attach_types = frozenset({"attribute_item"})
    containers = frozenset({"source_file"})

    def handlers(self) -> dict[str, Handler]:
        table: dict[str, Handler] = dict.fromkeys(_ITEM_KINDS, self._item)
        table.update(
            {
                "function_item": self._function,
                "trait_item": self._container,
                "impl_item": self._impl,
                "mod_item": self._module,
                "use_declaration": self.import_of("argument"),
                "extern_crate_declaration": self.import_of("name"),
                "inner_attribute_item": self.trivial,
            }
        )
        return table

    def _function(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        # the body is walked for the items declared in it: `fn helper()` in a fn
        self.add_named(st, out, node, scope, kind=scope.function_kind())

    def _item(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        name = node.child_by_field_name("name")
        if name is None:
            return
        kind = _ITEM_KINDS[node.type]
        body = node.child_by_field_name("body") if kind is not SymbolKind.TYPE else None
        self.add_symbol(st, out, outer=node, name=st.src.node_text(name), kind=kind, scope=scope, body=body)

    def _container(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        self.add_named(st, out, node, scope, kind=SymbolKind.TRAIT)

    def _impl(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        body = node.child_by_field_name("body")
        name = _type_name(st, node.child_by_field_name("type")) or "impl"
        symbol = self.add_symbol(st, out, outer=node, name=name, kind=SymbolKind.IMPL, scope=scope, body=body)
        self.descend(st, body, symbol)

    def _module(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        if self.add_named(st, out, node, scope, kind=SymbolKind.NAMESPACE, require_body=True) is None:
            st.mark_trivial(node)  # `mod foo;` declares a file module
