"""JavaScript, TypeScript and TSX (one chunker, three grammars).

Symbols: function declarations (generators too), classes (``class X``, ``abstract class``,
``const X = class {}``), class methods, getters/setters and arrow-function fields (``METHOD``),
functions and arrow functions assigned to a ``const``/``let``/``var`` (``const foo = () => …``
is ``foo``), CommonJS assignments of functions (``exports.run = function`` -> ``run`` qualified
``exports.run``; ``Foo.prototype.bar = …`` -> method ``Foo.bar``), TS interfaces (``INTERFACE``),
type aliases (``TYPE``), enums (``ENUM``), namespaces and ``declare module`` (``NAMESPACE``), and
top-level ``declare``/overload ``function`` signatures. ``export``, ``export default`` and
``declare`` wrappers belong to the symbol's range; ``export default`` of an anonymous function or
class is named ``default``.

* ``signature``: the declaration up to its body, without ``export`` and decorators
  (``async run(a: T): Promise<void>``, ``const add = (a: number, b: number): number =>``).
* ``docstring``: the comment block (``/** … */`` or ``//`` lines) directly above, decorators between allowed.
* ``imports``: ``import … from "x"``, ``export … from "x"``, ``import x = require("x")`` and
  ``require("x")`` assigned to a variable -> ``x``.
* Bodiless members (interface members, abstract methods, overload signatures in a class) stay in
  their parent's chunk.
"""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from daemon.core.models import SymbolKind
from daemon.intel.chunking._common import first_child
from daemon.intel.chunking._tree import FileState, Handler, Scope, Symbol, TreeChunker

__all__ = ["EcmaScriptChunker"]

_CONTAINERS = frozenset(
    {
        "program",
        "statement_block",
        "if_statement",
        "else_clause",
        "try_statement",
        "catch_clause",
        "finally_clause",
        "for_statement",
        "for_in_statement",
        "while_statement",
        "do_statement",
        "labeled_statement",
    }
)
_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function", "generator_function_declaration"}
)
_CLASS_VALUES = frozenset({"class", "class_expression"})

Definition = Callable[[FileState, Node, Node, Scope, list[Symbol]], None]


def _string_value(st: FileState, node: Node | None) -> str:
    text = st.src.node_text(node)
    return text[1:-1] if len(text) >= 2 and text[0] in "\"'`" else text


def _after_decorators(node: Node) -> Node:
    """The first child of ``node`` that is not a decorator (signatures leave decorators out)."""
    first = first_child(node)
    while first is not None and first.type == "decorator":
        first = first.next_sibling
    return first if first is not None else node


class EcmaScriptChunker(TreeChunker):
    containers = _CONTAINERS
    attach_types = frozenset({"decorator"})
    signature_strip = " ;{="

    def __init__(self, language: str) -> None:
        self._definitions: dict[str, Definition] = {
            "function_declaration": self._function,
            "generator_function_declaration": self._function,
            "function_signature": self._function,
            "class_declaration": self._class,
            "abstract_class_declaration": self._class,
            "class": self._class,
            "interface_declaration": self._simple(SymbolKind.INTERFACE),
            "type_alias_declaration": self._simple(SymbolKind.TYPE),
            "enum_declaration": self._simple(SymbolKind.ENUM),
            "lexical_declaration": self._variables,
            "variable_declaration": self._variables,
            "internal_module": self._namespace,
            "module": self._namespace,
        }
        super().__init__(language)

    def is_trivial_line(self, stripped: str) -> bool:
        return stripped.strip("'\";") == "use strict" or super().is_trivial_line(stripped)

    def handlers(self) -> dict[str, Handler]:
        table: dict[str, Handler] = {kind: self._direct(define) for kind, define in self._definitions.items()}
        table.update(
            {
                "method_definition": self._method,
                "public_field_definition": self._field,
                "field_definition": self._field,
                "export_statement": self._wrapper,
                "ambient_declaration": self._wrapper,
                "expression_statement": self._expression,
                "import_statement": self._import,
            }
        )
        return table

    @staticmethod
    def _direct(define: Definition) -> Handler:
        def handle(st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
            define(st, node, node, scope, out)

        return handle

    # -- definitions (node = the declaration, outer = the node whose range the symbol covers) --

    def _function(self, st: FileState, node: Node, outer: Node, scope: Scope, out: list[Symbol]) -> None:
        kind = scope.function_kind()
        self.add_named(st, out, node, scope, kind=kind, outer=outer, sig_node=node, default_name="default")

    def _class(self, st: FileState, node: Node, outer: Node, scope: Scope, out: list[Symbol]) -> None:
        sig_node = _after_decorators(node)
        self.add_named(
            st, out, node, scope, kind=SymbolKind.CLASS, outer=outer, sig_node=sig_node, default_name="default"
        )

    def _simple(self, kind: SymbolKind) -> Definition:
        def define(st: FileState, node: Node, outer: Node, scope: Scope, out: list[Symbol]) -> None:
            name = node.child_by_field_name("name")
            if name is None:
                return
            body = node.child_by_field_name("body")
            value = node.child_by_field_name("value") if body is None else None
            self.add_symbol(
                st,
                out,
                outer=outer,
                sig_node=node,
                name=st.src.node_text(name),
                kind=kind,
                scope=scope,
                body=body,
                sig_end=value.start_byte if value is not None else None,
            )

        return define

    def _namespace(self, st: FileState, node: Node, outer: Node, scope: Scope, out: list[Symbol]) -> None:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name is None or body is None:
            return
        symbol = self.add_symbol(
            st,
            out,
            outer=outer,
            sig_node=node,
            name=_string_value(st, name),
            kind=SymbolKind.NAMESPACE,
            scope=scope,
            body=body,
        )
        self.descend(st, body, symbol)

    def _variables(self, st: FileState, node: Node, outer: Node, scope: Scope, out: list[Symbol]) -> None:
        declarators = [child for child in node.named_children if child.type == "variable_declarator"]
        for declarator in declarators:
            value = declarator.child_by_field_name("value")
            if value is None:
                continue
            if value.type == "call_expression":
                self._require(st, node, value)
                continue
            is_function = value.type in _FUNCTION_VALUES
            if not is_function and value.type not in _CLASS_VALUES:
                continue
            name = declarator.child_by_field_name("name")
            body = value.child_by_field_name("body")
            symbol = self.add_symbol(
                st,
                out,
                outer=outer if len(declarators) == 1 else declarator,
                sig_node=node if len(declarators) == 1 else declarator,
                name=st.src.node_text(name),
                kind=scope.function_kind() if is_function else SymbolKind.CLASS,
                scope=scope,
                body=body,
            )
            if body is not None and (body.type == "statement_block" or not is_function):
                self.descend(st, body, symbol)

    def _require(self, st: FileState, statement: Node, call: Node) -> None:
        function = call.child_by_field_name("function")
        arguments = call.child_by_field_name("arguments")
        if function is None or arguments is None or st.src.node_text(function) != "require":
            return
        first = first_child(arguments, named=True)
        if first is not None and first.type == "string":
            st.add_import(_string_value(st, first))
            st.mark_trivial(statement)

    # -- handlers ------------------------------------------------------------------------------

    def _method(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        self.add_named(
            st, out, node, scope, kind=SymbolKind.METHOD, sig_node=_after_decorators(node), require_body=True
        )

    def _field(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        """A class field holding a function: ``handler = (e) => { … }``."""
        value = node.child_by_field_name("value")
        name = node.child_by_field_name("name") or node.child_by_field_name("property")
        if value is None or name is None or value.type not in _FUNCTION_VALUES:
            return
        body = value.child_by_field_name("body")
        symbol = self.add_symbol(
            st,
            out,
            outer=node,
            sig_node=_after_decorators(node),
            name=st.src.node_text(name),
            kind=SymbolKind.METHOD,
            scope=scope,
            body=body,
        )
        if body is not None and body.type == "statement_block":
            self.descend(st, body, symbol)

    def _wrapper(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        """``export …``, ``export default …``, ``declare …``: the symbol covers the wrapper."""
        source = node.child_by_field_name("source")
        if source is not None:  # export … from "x"
            st.add_import(_string_value(st, source))
            st.mark_trivial(node)
            return
        inner = node.child_by_field_name("declaration") or node.child_by_field_name("value")
        if inner is None:
            inner = next((c for c in node.named_children if c.type in self._definitions), None)
        if inner is None:
            return
        define = self._definitions.get(inner.type)
        if define is not None:
            define(st, inner, node, scope, out)
        elif inner.type in _FUNCTION_VALUES:
            self._function(st, inner, node, scope, out)

    def _expression(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        first = first_child(node, named=True)
        if first is None:
            return
        if first.type == "internal_module":
            self._namespace(st, first, node, scope, out)
        elif first.type == "assignment_expression":
            self._assignment(st, first, node, scope, out)

    def _assignment(self, st: FileState, node: Node, outer: Node, scope: Scope, out: list[Symbol]) -> None:
        """``exports.run = function …``, ``Foo.prototype.bar = () => …``, ``module.exports = class X``."""
        if scope.kind not in (None, SymbolKind.NAMESPACE):
            return  # `this.onDrain = () => …` inside a function is a closure, not a symbol
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        if left is None or right is None:
            return
        if right.type in _CLASS_VALUES:
            self._class(st, right, outer, scope, out)  # module.exports = class Foo { … }
            return
        if right.type not in _FUNCTION_VALUES:
            return
        target = st.src.node_text(left)
        path = target.replace(".prototype.", ".")
        if left.type != "member_expression" or not path.replace(".", "").isidentifier():
            return
        owner, _, name = path.rpartition(".")
        body = right.child_by_field_name("body")
        symbol = self.add_symbol(
            st,
            out,
            outer=outer,
            name=name,
            kind=SymbolKind.METHOD if ".prototype." in target else scope.function_kind(),
            scope=Scope(scope.qualify(owner), scope.kind),
            body=body,
        )
        if body is not None and body.type == "statement_block":
            self.descend(st, body, symbol)

    def _import(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        st.mark_trivial(node)
        source = node.child_by_field_name("source")
        if source is None:  # import x = require("x")
            clause = next((c for c in node.named_children if c.type == "import_require_clause"), None)
            source = clause.child_by_field_name("source") if clause is not None else None
        if source is not None:
            st.add_import(_string_value(st, source))
