"""Python: functions, methods, classes (decorators included), docstrings, imports.

* ``signature``: ``def``/``async def``/``class`` line(s) up to the colon, decorators excluded,
  whitespace normalized (``def area(self, scale: float = 1.0) -> float``).
* ``docstring``: the body's leading string literal, ``inspect.cleandoc``-ed (escapes as written).
* ``imports``: ``import a.b`` -> ``a.b``; ``from .x import y`` -> ``.x``; ``from __future__ ...``
  -> ``__future__``; every import statement of the file, nested ones too.
* Definitions inside top-level ``if``/``try``/``with`` blocks (``if TYPE_CHECKING:``) are found;
  functions inside functions are ``outer.inner``; functions in a class are methods.
* The module docstring is the ``docstring`` of the MODULE chunk that contains it.
"""

from __future__ import annotations

from tree_sitter import Node

from daemon.core.models import SymbolKind
from daemon.intel.chunking._common import first_child, python_string_value
from daemon.intel.chunking._tree import FileState, Handler, Scope, Symbol, TreeChunker

__all__ = ["PythonChunker"]

_CONTAINERS = frozenset(
    {
        "block",
        "if_statement",
        "elif_clause",
        "else_clause",
        "try_statement",
        "except_clause",
        "except_group_clause",
        "finally_clause",
        "with_statement",
        "for_statement",
        "while_statement",
        "match_statement",
        "case_clause",
    }
)


def _docstring_node(body: Node | None) -> Node | None:
    """The string literal that opens ``body`` (a block or the module), if any."""
    stmt = first_child(body, named=True) if body is not None else None
    while stmt is not None and stmt.type == "comment":
        stmt = stmt.next_named_sibling
    if stmt is None or stmt.type != "expression_statement" or stmt.child_count != 1:
        return None
    string = stmt.child(0)
    return string if string.type == "string" else None


def _docstring(st: FileState, body: Node | None) -> str | None:
    string = _docstring_node(body)
    if string is None:
        return None
    return python_string_value(st.src.node_text(string), string.start_point.column)


def _colon_before(data: bytes, node: Node, body: Node | None) -> int | None:
    """Byte offset of the ``:`` that opens ``body`` (comments may sit between the two)."""
    if body is None:
        return None
    colon = data.rfind(b":", node.start_byte, body.start_byte)
    if colon >= 0 and (colon + 1 == body.start_byte or data[colon + 1 : body.start_byte].isspace()):
        return colon
    prev = body.prev_sibling
    while prev is not None and prev.type != ":":
        prev = prev.prev_sibling
    return prev.start_byte if prev is not None else None


class PythonChunker(TreeChunker):
    comment_prefix = "#"
    containers = _CONTAINERS
    doc_from_comments = False
    signature_strip = " :"
    comment_line_prefixes = ("#",)
    lead_line_prefixes = ("#",)
    nested_markers = (b"def ", b"class ")  # `def\tf()` is legal but not worth a third scan

    def handlers(self) -> dict[str, Handler]:
        return {
            "function_definition": self._function,
            "class_definition": self._class,
            "decorated_definition": self._decorated,
            "import_statement": self._import,
            "import_from_statement": self.import_of("module_name"),
            "future_import_statement": self._future,
        }

    def _definition(self, st: FileState, node: Node, outer: Node, scope: Scope, out: list[Symbol]) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        body = node.child_by_field_name("body")
        is_class = node.type == "class_definition"
        symbol = self.add_symbol(
            st,
            out,
            outer=outer,
            sig_node=node,
            name=st.src.node_text(name_node),
            kind=SymbolKind.CLASS if is_class else scope.function_kind(),
            scope=scope,
            body=body,
            sig_end=_colon_before(st.src.data, node, body),
            docstring=_docstring(st, body),
        )
        self.descend(st, body, symbol)

    def _function(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        self._definition(st, node, node, scope, out)

    _class = _function

    def _decorated(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        inner = node.child_by_field_name("definition")
        if inner is not None and inner.type in ("function_definition", "class_definition"):
            self._definition(st, inner, node, scope, out)

    def _import(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        st.mark_trivial(node)
        for child in node.named_children:
            if child.type == "dotted_name":
                st.add_import(st.src.node_text(child))
            elif child.type == "aliased_import":
                st.add_import(st.src.node_text(child.child_by_field_name("name")))

    def _future(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        st.mark_trivial(node)
        st.add_import("__future__")

    def prepare(self, st: FileState, root: Node) -> None:
        """The module docstring: a string statement before any other statement of the module."""
        string = _docstring_node(root)
        doc = python_string_value(st.src.node_text(string), string.start_point.column) if string is not None else None
        if string is not None and doc:
            st.module_doc = (string.start_point.row, doc)
