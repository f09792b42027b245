"""Go: functions, methods (``Type.Method``), and type specs (struct, interface, other types).

* Methods are qualified by their receiver's base type (``func (s *Server[T]) Start`` ->
  ``Server.Start``, ``METHOD``).
* ``type X struct`` -> ``STRUCT``, ``type X interface`` -> ``INTERFACE``, other ``type``/alias specs
  -> ``TYPE``; every spec of a grouped ``type ( … )`` is its own chunk.
* ``signature``: ``func (s *Server) Start(ctx context.Context) error``, ``type Server struct``.
* ``docstring``: the ``//`` (or ``/* */``) comment block directly above.
* ``imports``: the import paths. ``package``/``import`` lines alone never make a module chunk;
  ``const``/``var`` blocks do.
"""

from __future__ import annotations

from tree_sitter import Node

from daemon.core.models import SymbolKind
from daemon.intel.chunking._common import first_child, last_row
from daemon.intel.chunking._tree import FileState, Handler, Scope, Symbol, TreeChunker

__all__ = ["GoChunker"]

_TYPE_KINDS = {"struct_type": SymbolKind.STRUCT, "interface_type": SymbolKind.INTERFACE}


def _receiver_type(st: FileState, receiver: Node | None) -> str:
    """The base type name of a method receiver (pointers and type arguments dropped)."""
    node = first_child(receiver, named=True) if receiver is not None else None
    node = node.child_by_field_name("type") if node is not None else None
    while node is not None and node.type in ("pointer_type", "generic_type", "parenthesized_type"):
        node = node.child_by_field_name("type") if node.type == "generic_type" else first_child(node, named=True)
    return st.src.node_text(node) if node is not None else ""


def _body_start(type_node: Node | None) -> int | None:
    """Where the ``{ … }`` of a struct/interface type starts."""
    if type_node is None or type_node.type not in _TYPE_KINDS:
        return None
    for child in type_node.children:
        if child.type in ("field_declaration_list", "{"):
            return child.start_byte
    return None


class GoChunker(TreeChunker):
    containers = frozenset({"source_file"})

    def handlers(self) -> dict[str, Handler]:
        return {
            "function_declaration": self._function,
            "method_declaration": self._method,
            "type_declaration": self._types,
            "import_declaration": self._imports,
            "package_clause": self.trivial,
        }

    def _function(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        self.add_named(st, out, node, scope, kind=SymbolKind.FUNCTION, nested=False)

    def _method(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        receiver = _receiver_type(st, node.child_by_field_name("receiver"))
        owner = Scope(scope.qualify(receiver), SymbolKind.STRUCT) if receiver else scope
        self.add_named(st, out, node, owner, kind=SymbolKind.METHOD, nested=False)

    def _types(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        specs = [child for child in node.named_children if child.type in ("type_spec", "type_alias")]
        if len(specs) > 1:  # `type (` and `)` of a group are no content of their own
            st.trivial_rows.update((node.start_point.row, last_row(node)))
        for spec in specs:
            name = spec.child_by_field_name("name")
            if name is None:
                continue
            type_node = spec.child_by_field_name("type")
            grouped = len(specs) > 1
            symbol = self.add_symbol(
                st,
                out,
                outer=spec if grouped else node,
                sig_node=spec if grouped else node,
                name=st.src.node_text(name),
                kind=_TYPE_KINDS.get(type_node.type if type_node is not None else "", SymbolKind.TYPE),
                scope=scope,
                body=None,
                sig_end=_body_start(type_node),
            )
            if grouped:
                symbol.signature = "type " + symbol.signature

    def _imports(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        st.mark_trivial(node)
        for child in node.named_children:
            specs = child.named_children if child.type == "import_spec_list" else [child]
            for spec in specs:
                path = spec.child_by_field_name("path") if spec.type == "import_spec" else None
                if path is not None:
                    st.add_import(st.src.node_text(path).strip('"`'))
