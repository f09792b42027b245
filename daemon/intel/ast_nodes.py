"""Tree-sitter facts about one point of a file: the node there, its ancestors, the enclosing
function and class, and the source of the definition around a position.

``SyntaxFile.parse(language, source, budget=...)`` parses once under a time and depth budget
(``daemon.intel.syntax_budget``); the queries on it descend once from the root to the point (Tree-
sitter's ``Node.parent`` costs a walk from the root per call, so walking up through ``parent`` is
quadratic in the depth) and stop with ``TooComplex`` when the point is nested deeper than the budget's
``max_depth`` or the time is spent. Lines and columns in and out are 1-based; columns count code
points, as everywhere in the code-intel results. Parsing and queries are CPU work: async callers run
them off the event loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node, Tree

from daemon.core.intel_models import AstNode, AstNodeResult, EnclosingScope, SourceRange
from daemon.errors import InvalidToolInput
from daemon.intel.parsers import has_grammar, parse
from daemon.intel.syntax_budget import DEFAULT_BUDGET, BudgetClock, SyntaxBudget

__all__ = ["CLASS_NODE_TYPES", "FUNCTION_NODE_TYPES", "SyntaxFile", "excerpt"]


FUNCTION_NODE_TYPES: frozenset[str] = frozenset(
    {
        # python, c, cpp
        "function_definition",
        # javascript, typescript, tsx, go
        "function_declaration",
        "generator_function_declaration",
        "function_expression",
        "function",
        "arrow_function",
        "method_definition",
        "method_signature",
        "abstract_method_signature",
        "function_signature",
        # go
        "method_declaration",
        "func_literal",
        # rust
        "function_item",
        "function_signature_item",
        "closure_expression",
        # java
        "constructor_declaration",
        "lambda_expression",
    }
)
"""Node types that are a function, method or lambda in one of the bundled grammars."""

CLASS_NODE_TYPES: frozenset[str] = frozenset(
    {
        "class_definition",  # python
        "class_declaration",  # js/ts/java
        "abstract_class_declaration",
        "class",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "type_spec",  # go
        "struct_item",  # rust
        "enum_item",
        "trait_item",
        "impl_item",
        "union_item",
        "class_specifier",  # c/cpp
        "struct_specifier",
        "union_specifier",
        "enum_specifier",
        "namespace_definition",
    }
)
"""Node types that are a class-like scope (class, struct, interface, trait, impl, namespace, ...)."""

_MAX_EXCERPT = 200
_MAX_ANCESTORS = 40


def excerpt(text: str, limit: int = _MAX_EXCERPT) -> str:
    """``text`` cut to ``limit`` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def _identifier_in(node: Node | None) -> Node | None:
    """The name identifier inside a (C/C++) declarator chain: ``int *(*f)(int)`` -> ``f``."""
    depth = 0
    while node is not None and depth < 12:
        if node.type in {
            "identifier",
            "field_identifier",
            "type_identifier",
            "qualified_identifier",
            "destructor_name",
            "operator_name",
            "property_identifier",
            "private_property_identifier",
        }:
            return node
        inner = node.child_by_field_name("declarator") or node.child_by_field_name("name")
        if inner is None:
            return None
        node = inner
        depth += 1
    return None


def _scope_name_node(node: Node, parent: Node | None) -> Node | None:
    """The node holding a function/class node's name (a field, a declarator or the variable it is bound to)."""
    name_node = node.child_by_field_name("name")
    if name_node is None and node.type == "impl_item":
        name_node = node.child_by_field_name("type")
    if name_node is None and node.type == "function_definition":
        name_node = _identifier_in(node.child_by_field_name("declarator"))
    anonymous = node.type in {"arrow_function", "function_expression", "function", "lambda_expression"}
    if (
        name_node is None
        and anonymous
        and parent is not None
        and parent.type in {"variable_declarator", "pair", "assignment_expression"}
    ):
        name_node = parent.child_by_field_name("name") or parent.child_by_field_name("left")
        name_node = name_node or parent.child_by_field_name("key")
    return name_node


def _scope_name(node: Node, parent: Node | None) -> str | None:
    name_node = _scope_name_node(node, parent)
    if name_node is None or name_node.text is None:
        return None
    return name_node.text.decode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class _ScopeNode:
    node: Node
    parent: Node | None
    kind: str
    name: str


class SyntaxFile:
    """One parsed file: source bytes, its lines and its Tree-sitter tree."""

    def __init__(self, language: str, source: bytes, tree: Tree, *, clock: BudgetClock | None = None) -> None:
        self.language = language
        self.source = source
        self.tree = tree
        self.clock = clock or DEFAULT_BUDGET.start("a syntax query")
        self._lines = source.split(b"\n")

    @classmethod
    def parse(
        cls,
        language: str,
        source: bytes,
        *,
        budget: SyntaxBudget = DEFAULT_BUDGET,
        clock: BudgetClock | None = None,
    ) -> SyntaxFile:
        """Parse ``source`` (blocking) under ``budget`` (or a ``clock`` already running), which also
        bounds the queries on the result.

        ``InvalidToolInput`` when no grammar exists for ``language``; ``TooComplex`` when the budget is spent.
        """
        if not has_grammar(language):
            raise InvalidToolInput(f"no syntax tree support for language {language!r}")
        clock = clock or budget.start(f"the syntax tree of a {language} file")
        return cls(language, source, parse(language, source, clock=clock), clock=clock)

    # -- positions ------------------------------------------------------------------------------

    @property
    def line_count(self) -> int:
        return len(self._lines)

    def line_text(self, line: int) -> str:
        """Text of 1-based ``line`` without its newline ('' past the end)."""
        if not 1 <= line <= len(self._lines):
            return ""
        return self._lines[line - 1].rstrip(b"\r").decode("utf-8", "replace")

    def check_position(self, line: int, column: int | None) -> None:
        """``InvalidToolInput`` naming the limits when (line, column) is not inside the file."""
        if line < 1 or line > len(self._lines):
            raise InvalidToolInput(f"line {line} is outside the file: it has {len(self._lines)} lines (1-based)")
        if column is not None:
            width = len(self.line_text(line))
            if column < 1 or column > width + 1:
                raise InvalidToolInput(
                    f"column {column} is outside line {line}: it has {width} characters (columns are 1-based)"
                )

    def byte_column(self, line: int, column: int) -> int:
        """Byte offset inside the line of 1-based code-point ``column``."""
        return len(self.line_text(line)[: column - 1].encode("utf-8"))

    def char_column(self, row: int, byte_col: int) -> int:
        """1-based code-point column of a 0-based (row, byte column) point."""
        raw = self._lines[row] if 0 <= row < len(self._lines) else b""
        return len(raw[:byte_col].decode("utf-8", "replace")) + 1

    def node_range(self, node: Node) -> SourceRange:
        (sr, sc), (er, ec) = node.start_point, node.end_point
        return SourceRange(
            start_line=sr + 1,
            start_column=self.char_column(sr, sc),
            end_line=er + 1,
            end_column=self.char_column(er, ec),
        )

    def text(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def first_code_column(self, line: int) -> int:
        text = self.line_text(line)
        return len(text) - len(text.lstrip()) + 1

    # -- queries --------------------------------------------------------------------------------

    def node_at(self, line: int, column: int) -> Node:
        """The smallest named node covering (line, column)."""
        row, col = line - 1, self.byte_column(line, column)
        node = self.tree.root_node.named_descendant_for_point_range((row, col), (row, col))
        return node or self.tree.root_node

    def path_to(self, node: Node) -> list[Node]:
        """The nodes from the root down to ``node`` (both included), found by one descent from the root.

        ``TooComplex`` when ``node`` is nested deeper than the budget's ``max_depth`` or time runs out.
        """
        path = [self.tree.root_node]
        current = path[0]
        while current != node:
            child = current.child_with_descendant(node)
            if child is None:
                break
            path.append(child)
            current = child
            if len(path) % 64 == 0:
                self.clock.check_depth(len(path), node.start_point[0] + 1)
                self.clock.check()
        if current != node:  # a zero-width node on a boundary the descent missed: climb instead
            return self._path_up(node)
        self.clock.check_depth(len(path), node.start_point[0] + 1)
        return path

    def _path_up(self, node: Node) -> list[Node]:
        up: list[Node] = []
        current: Node | None = node
        while current is not None:
            up.append(current)
            self.clock.check_depth(len(up), node.start_point[0] + 1)
            current = current.parent
        self.clock.check()
        return up[::-1]

    def scopes_at(self, line: int, column: int) -> list[EnclosingScope]:
        """Enclosing functions and classes at the point, innermost first."""
        return [self._scope_model(s, chain) for s, chain in self._scope_chain(self.path_to(self.node_at(line, column)))]

    def innermost_scope(self, line: int, column: int) -> EnclosingScope | None:
        scopes = self.scopes_at(line, column)
        return scopes[0] if scopes else None

    def container_of(self, line: int, column: int) -> EnclosingScope | None:
        """The function/class a *use* at the point sits in; a definition's own name belongs to the scope around it."""
        node = self.node_at(line, column)
        chain = self._scope_chain(self.path_to(node))
        if not chain:
            return None
        scope, outer = chain[0]
        name_node = _scope_name_node(scope.node, scope.parent)
        if name_node is not None and name_node.start_byte <= node.start_byte and node.end_byte <= name_node.end_byte:
            return self._scope_model(outer[0], outer[1:]) if outer else None
        return self._scope_model(scope, outer)

    def definition_at(self, line: int, column: int) -> Node | None:
        """The innermost function/class node around the point."""
        chain = self._scope_chain(self.path_to(self.node_at(line, column)))
        return chain[0][0].node if chain else None

    def describe(self, line: int, column: int | None, *, max_text: int = _MAX_EXCERPT) -> AstNodeResult:
        """The node at the point (the first code on the line when ``column`` is None) and its context."""
        self.check_position(line, column)
        col = column if column is not None else self.first_code_column(line)
        node = self.node_at(line, col)
        path = self.path_to(node)
        ancestors = [
            self._node_model(path[i], path[i - 1] if i > 0 else None, max_text)
            for i in range(len(path) - 2, max(-1, len(path) - 2 - _MAX_ANCESTORS), -1)
        ]
        function: EnclosingScope | None = None
        klass: EnclosingScope | None = None
        for scope, chain in self._scope_chain(path):
            model = self._scope_model(scope, chain)
            if function is None and scope.node.type in FUNCTION_NODE_TYPES:
                function = model
            elif klass is None and scope.node.type in CLASS_NODE_TYPES:
                klass = model
        return AstNodeResult(
            path="",
            language=self.language,
            node=self._node_model(node, path[-2] if len(path) > 1 else None, max_text),
            ancestors=tuple(ancestors),
            enclosing_function=function,
            enclosing_class=klass,
            has_errors=self.tree.root_node.has_error,
        )

    def signature_of(self, node: Node, *, max_lines: int = 8) -> str:
        """The header of a function/class node: its text up to the body, whitespace-normalised per line."""
        body = node.child_by_field_name("body")
        end = body.start_byte if body is not None else node.end_byte
        header = self.source[node.start_byte : end].decode("utf-8", "replace").rstrip().rstrip("{").rstrip()
        lines = [ln.rstrip() for ln in header.splitlines()][:max_lines]
        return "\n".join(lines).rstrip(":").rstrip() if self.language == "python" else "\n".join(lines)

    def docstring_of(self, node: Node) -> str | None:
        """Python docstring of a function/class node, or the comment block right above any node."""
        if self.language == "python":
            body = node.child_by_field_name("body")
            first = body.named_children[0] if body is not None and body.named_children else None
            if first is not None and first.type == "expression_statement" and first.named_children:
                string = first.named_children[0]
                if string.type == "string":
                    return _strip_quotes(self.text(string))
            return None
        comments: list[str] = []
        prev = node.prev_named_sibling
        row = node.start_point[0]
        while prev is not None and prev.type == "comment" and prev.end_point[0] >= row - 1:
            comments.append(self.text(prev))
            row = prev.start_point[0]
            prev = prev.prev_named_sibling
        return "\n".join(reversed(comments)) or None

    # -- internals ------------------------------------------------------------------------------

    def _scope_chain(self, path: list[Node]) -> list[tuple[_ScopeNode, list[_ScopeNode]]]:
        """(scope, its outer scopes) for every function/class on ``path`` (root first), innermost first."""
        scopes: list[_ScopeNode] = []
        for i in range(len(path) - 1, -1, -1):
            current = path[i]
            if current.type in FUNCTION_NODE_TYPES or current.type in CLASS_NODE_TYPES:
                parent = path[i - 1] if i > 0 else None
                name = _scope_name(current, parent)
                if name is not None or current.type in FUNCTION_NODE_TYPES:
                    scopes.append(_ScopeNode(current, parent, current.type, name or "<anonymous>"))
        self.clock.check()
        return [(scope, scopes[i + 1 :]) for i, scope in enumerate(scopes)]

    def _scope_model(self, scope: _ScopeNode, outer: list[_ScopeNode]) -> EnclosingScope:
        if scope.node.type in CLASS_NODE_TYPES:
            kind = scope.node.type.split("_")[0] if scope.node.type != "type_spec" else "type"
            kind = {"abstract": "class", "impl": "impl", "namespace": "namespace"}.get(kind, kind)
        elif (outer and outer[0].node.type in CLASS_NODE_TYPES) or scope.node.type in {
            "method_definition",
            "method_declaration",
            "constructor_declaration",
        }:
            kind = "method"
        elif scope.node.type in {"arrow_function", "lambda_expression", "closure_expression", "func_literal"}:
            kind = "lambda"
        else:
            kind = "function"
        names = [s.name for s in reversed(outer)] + [scope.name]
        return EnclosingScope(
            kind=kind, name=scope.name, qualified_name=".".join(names), range=self.node_range(scope.node)
        )

    def _node_model(self, node: Node, parent: Node | None, max_text: int) -> AstNode:
        field: str | None = None
        if parent is not None:
            for index, child in enumerate(parent.children):
                if child.id == node.id:
                    field = parent.field_name_for_child(index)
                    break
        return AstNode(
            type=node.type,
            range=self.node_range(node),
            text=excerpt(self.text(node), max_text),
            field=field,
            named=node.is_named,
        )


def _strip_quotes(literal: str) -> str:
    text = literal
    while text and text[0] in "rbuRBUfF":
        text = text[1:]
    for quote in ('"""', "'''", '"', "'"):
        if text.startswith(quote) and text.endswith(quote) and len(text) >= 2 * len(quote):
            text = text[len(quote) : -len(quote)]
            break
    lines = text.strip().splitlines()
    if len(lines) > 1:
        indent = min((len(ln) - len(ln.lstrip()) for ln in lines[1:] if ln.strip()), default=0)
        lines = [lines[0]] + [ln[indent:] for ln in lines[1:]]
    return "\n".join(lines).strip()
