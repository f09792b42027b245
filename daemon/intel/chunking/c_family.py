"""C and C++: functions, structs/unions/enums, C++ classes, namespaces, templates, macros.

* Names are joined with ``.`` everywhere: ``ns.Box.get`` for a method defined in its class inside
  ``namespace ns``, and out-of-line definitions keep their written scope (``void a::Box<int>::set()``
  -> ``set``, qualified ``a.Box.set``, ``METHOD``: a definition with a written scope is taken for a
  member function). Anonymous namespaces add no name.
* ``struct``/``union`` -> ``STRUCT``, C++ ``class`` -> ``CLASS``, ``enum`` -> ``ENUM``, whether
  written alone, in a ``typedef`` (named after the tag, else the typedef name) or in a declaration.
  Class-likes keep member declarations and the signatures of inline member functions.
* ``template <…>`` belongs to the symbol and its signature; ``#define NAME(args)`` macros are
  ``FUNCTION``s. Prototypes (declarations without a body) are not symbols: they stay in their
  class's chunk or in a module chunk.
* ``docstring``: the comment block directly above. ``imports``: the ``#include`` paths.
  Preprocessor lines other than ``#define``, and ``extern "C" {`` wrappers, alone never make a
  module chunk.
"""

from __future__ import annotations

from tree_sitter import Node

from daemon.core.models import SymbolKind
from daemon.intel.chunking._common import first_child, last_row
from daemon.intel.chunking._tree import FileState, Handler, Scope, Symbol, TreeChunker

__all__ = ["CChunker", "CppChunker"]

_RECORD_KINDS = {
    "struct_specifier": SymbolKind.STRUCT,
    "union_specifier": SymbolKind.STRUCT,
    "class_specifier": SymbolKind.CLASS,
    "enum_specifier": SymbolKind.ENUM,
}
_DECLARATOR_WRAPPERS = frozenset(
    {
        "function_declarator",
        "pointer_declarator",
        "reference_declarator",
        "parenthesized_declarator",
        "attributed_declarator",
    }
)
_CONTAINERS = frozenset(
    {
        "translation_unit",
        "preproc_if",
        "preproc_ifdef",
        "preproc_else",
        "preproc_elif",
        "preproc_elifdef",
        "declaration_list",
    }
)


def _declarator_name(st: FileState, declarator: Node | None) -> tuple[list[str], str]:
    """``(written scope, name)`` of a function declarator: ``a::Box<int>::set`` -> ``(["a", "Box"], "set")``."""
    node = declarator
    while node is not None and node.type in _DECLARATOR_WRAPPERS:
        inner = node.child_by_field_name("declarator")
        if inner is None:  # parenthesized/attributed declarators keep it as a plain child
            inner = first_child(node, named=True)
        node = inner
    scope: list[str] = []
    while node is not None and node.type == "qualified_identifier":
        written = node.child_by_field_name("scope")
        if written is not None:
            if written.type == "template_type":
                written = written.child_by_field_name("name")
            scope.append(st.src.node_text(written))
        node = node.child_by_field_name("name")
    if node is not None and node.type == "template_function":
        node = node.child_by_field_name("name")
    return scope, st.src.node_text(node)


def _mark_brackets(st: FileState, node: Node) -> None:
    """The opening and closing lines of a multi-line wrapper (``namespace {``, ``extern "C" {``)."""
    first, last = node.start_point.row, last_row(node)
    if last > first:
        st.trivial_rows.update((first, last))


class CChunker(TreeChunker):
    containers = _CONTAINERS

    def handlers(self) -> dict[str, Handler]:
        table: dict[str, Handler] = dict.fromkeys(_RECORD_KINDS, self._record_alone)
        table.update(
            {
                "function_definition": self._function_alone,
                "type_definition": self._declaration,
                "declaration": self._declaration,
                "field_declaration": self._declaration,
                "preproc_function_def": self._macro,
                "preproc_include": self._include,
                "linkage_specification": self._linkage,
            }
        )
        return table

    def is_trivial_line(self, stripped: str) -> bool:
        if stripped.startswith("#"):
            return not stripped.startswith("#define")
        return stripped.startswith('extern "C"') or super().is_trivial_line(stripped)

    # -- definitions --------------------------------------------------------------------------

    def _function(self, st: FileState, node: Node, outer: Node, scope: Scope, out: list[Symbol]) -> None:
        written, name = _declarator_name(st, node.child_by_field_name("declarator"))
        if not name:
            return
        kind = scope.function_kind()
        if written:
            scope = Scope(scope.qualify(".".join(written)), SymbolKind.CLASS)
            kind = SymbolKind.METHOD
        body = node.child_by_field_name("body")
        self.add_symbol(st, out, outer=outer, name=name, kind=kind, scope=scope, body=body)

    def _record(
        self, st: FileState, node: Node, outer: Node, scope: Scope, out: list[Symbol], alias: Node | None = None
    ) -> None:
        body = node.child_by_field_name("body")
        if body is None:
            return
        name = node.child_by_field_name("name") or alias
        symbol = self.add_symbol(
            st,
            out,
            outer=outer,
            sig_node=outer if outer.type == "template_declaration" else node,
            name=st.src.node_text(name) if name is not None else "(anonymous)",
            kind=_RECORD_KINDS[node.type],
            scope=scope,
            body=body,
        )
        if name is alias and alias is not None:  # typedef struct { … } T;
            symbol.signature = f"typedef {symbol.signature} {symbol.name}"
        if node.type != "enum_specifier":
            self.descend(st, body, symbol)

    # -- handlers -------------------------------------------------------------------------------

    def _function_alone(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        self._function(st, node, node, scope, out)

    def _record_alone(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        self._record(st, node, node, scope, out)

    def _declaration(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        """``typedef struct {…} T;``, ``struct s {…} x;``, a nested class inside a class body."""
        spec = node.child_by_field_name("type")
        if spec is not None and spec.type in _RECORD_KINDS:
            alias = node.child_by_field_name("declarator") if node.type == "type_definition" else None
            self._record(st, spec, node, scope, out, alias)

    def _macro(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        name = node.child_by_field_name("name")
        if name is not None:
            self.add_symbol(
                st, out, outer=node, name=st.src.node_text(name), kind=SymbolKind.FUNCTION, scope=scope, body=None
            )

    def _include(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        path = st.src.node_text(node.child_by_field_name("path")).strip()
        st.add_import(path[1:-1] if len(path) >= 2 and path[0] in '"<' else path)

    def _linkage(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        """``extern "C" { … }`` or ``extern "C" int f() {…}``: the members are file-level names."""
        body = node.child_by_field_name("body")
        if body is not None and body.type == "declaration_list":
            _mark_brackets(st, node)
            self.walk(st, body, scope, out)
        elif body is not None:
            self.walk(st, node, scope, out)


class CppChunker(CChunker):
    def handlers(self) -> dict[str, Handler]:
        table = super().handlers()
        table.update({"namespace_definition": self._namespace, "template_declaration": self._template})
        return table

    def _namespace(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        body = node.child_by_field_name("body")
        name = node.child_by_field_name("name")
        if body is None:
            return
        if name is None:  # anonymous namespace: its members are file-level names
            _mark_brackets(st, node)
            self.walk(st, body, scope, out)
            return
        symbol = self.add_symbol(
            st,
            out,
            outer=node,
            name=st.src.node_text(name).replace("::", ".").replace(" ", ""),
            kind=SymbolKind.NAMESPACE,
            scope=scope,
            body=body,
        )
        self.descend(st, body, symbol)

    def _template(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        inner = node.named_children[-1] if node.named_child_count else None
        if inner is None:
            return
        kind = inner.type
        if kind == "function_definition":
            self._function(st, inner, node, scope, out)
        elif kind in _RECORD_KINDS:
            self._record(st, inner, node, scope, out)
        elif kind in ("declaration", "type_definition", "field_declaration"):
            spec = inner.child_by_field_name("type")
            if spec is not None and spec.type in _RECORD_KINDS:
                self._record(st, spec, node, scope, out)
        elif kind == "template_declaration":
            self._template(st, inner, scope, out)
