"""Java: classes, interfaces, enums, records, annotation types, methods and constructors.

* Nested types are qualified through their outer types (``Outer.Inner.method``); methods and
  constructors (``Outer.Outer``) are ``METHOD``; records are ``CLASS``, annotation types ``INTERFACE``.
  Abstract and interface methods without a body stay in their type's chunk.
* ``signature``: the declaration up to its body with annotations left out
  (``public String toString()``, ``public final class A<T> extends B implements C``).
* ``docstring``: the ``/** … */`` (or ``//``) comment block directly above; annotations are part
  of the declaration, so the range starts at that comment.
* ``imports``: ``java.util.List``, ``java.util.Map.*`` (``static`` dropped). ``package``/``import``
  lines alone never make a module chunk.
"""

from __future__ import annotations

from tree_sitter import Node

from daemon.core.models import SymbolKind
from daemon.intel.chunking._common import first_child
from daemon.intel.chunking._tree import FileState, Handler, Scope, Symbol, TreeChunker

__all__ = ["JavaChunker"]

_TYPE_KINDS = {
    "class_declaration": SymbolKind.CLASS,
    "record_declaration": SymbolKind.CLASS,
    "interface_declaration": SymbolKind.INTERFACE,
    "annotation_type_declaration": SymbolKind.INTERFACE,
    "enum_declaration": SymbolKind.ENUM,
}
_ANNOTATIONS = frozenset({"marker_annotation", "annotation"})


def _signature_start(node: Node) -> Node:
    """The first token of a declaration that is not an annotation."""
    first = first_child(node)
    if first is None or first.type != "modifiers":
        return node
    for child in first.children:
        if child.type not in _ANNOTATIONS:
            return child
    return first.next_sibling or node


class JavaChunker(TreeChunker):
    comment_types = frozenset({"line_comment", "block_comment"})
    containers = frozenset({"program", "enum_body", "enum_body_declarations"})
    nested_markers = (b"class ", b"interface ", b"enum ", b"record ")

    def handlers(self) -> dict[str, Handler]:
        table: dict[str, Handler] = dict.fromkeys(_TYPE_KINDS, self._type)
        table.update(
            {
                "method_declaration": self._method,
                "constructor_declaration": self._method,
                "compact_constructor_declaration": self._method,
                "import_declaration": self._import,
                "package_declaration": self.trivial,
            }
        )
        return table

    def _type(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        self.add_named(st, out, node, scope, kind=_TYPE_KINDS[node.type], sig_node=_signature_start(node))

    def _method(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        # the body is walked for the local classes declared in it
        self.add_named(st, out, node, scope, kind=SymbolKind.METHOD, sig_node=_signature_start(node), require_body=True)

    def _import(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        st.mark_trivial(node)
        parts = [st.src.node_text(c) for c in node.named_children if c.type in ("scoped_identifier", "identifier")]
        if parts:
            wildcard = any(c.type == "asterisk" for c in node.named_children)
            st.add_import(parts[0] + (".*" if wildcard else ""))
