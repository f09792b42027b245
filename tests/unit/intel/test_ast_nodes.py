"""Tree-sitter facts at a point: the node, its ancestors, the enclosing function and class."""

from __future__ import annotations

import pytest

from daemon.errors import InvalidToolInput
from daemon.intel.ast_nodes import SyntaxFile

PYTHON = b'''class Cart:
    """A cart."""

    def total(self, rate: float) -> float:
        """Gross total."""
        def tax(x):
            return x * rate
        return sum(tax(p) for p in self.prices)


def helper():
    return Cart()
'''

TYPESCRIPT = b"""export class Cart {
  total(rate: number): number {
    const tax = (x: number) => x * rate;
    return tax(1);
  }
}
"""

CPP = b"""namespace geo {
struct Point { double x; };
double distance(const Point &a, const Point &b) {
  return a.x - b.x;
}
}
"""


def test_the_node_at_a_point_comes_with_ancestors_and_enclosing_method_and_class() -> None:
    result = SyntaxFile.parse("python", PYTHON).describe(8, 20)
    assert result.node.type == "identifier"
    assert result.node.text == "tax"
    assert result.node.field == "function"
    assert [a.type for a in result.ancestors][:2] == ["call", "generator_expression"]
    assert result.ancestors[-1].type == "module"
    assert result.enclosing_function is not None
    assert result.enclosing_function.qualified_name == "Cart.total"
    assert result.enclosing_function.kind == "method"
    assert result.enclosing_class is not None and result.enclosing_class.name == "Cart"
    assert not result.has_errors


def test_a_nested_function_is_qualified_by_its_outer_method() -> None:
    scope = SyntaxFile.parse("python", PYTHON).innermost_scope(7, 20)
    assert scope is not None
    assert scope.qualified_name == "Cart.total.tax"
    assert scope.range.start_line == 6


def test_without_a_column_the_first_code_on_the_line_is_described() -> None:
    result = SyntaxFile.parse("python", PYTHON).describe(12, None)
    assert result.node.type == "return_statement" or result.node.range.start_column == 5
    assert result.enclosing_function is not None and result.enclosing_function.name == "helper"
    assert result.enclosing_class is None


def test_typescript_arrow_functions_take_the_name_of_their_variable() -> None:
    scope = SyntaxFile.parse("typescript", TYPESCRIPT).innermost_scope(3, 35)
    assert scope is not None
    assert scope.qualified_name == "Cart.total.tax"
    assert scope.kind == "lambda"


def test_cpp_functions_are_named_through_their_declarator_inside_namespaces() -> None:
    syntax = SyntaxFile.parse("cpp", CPP)
    scope = syntax.innermost_scope(4, 10)
    assert scope is not None
    assert scope.qualified_name == "geo.distance"
    node = syntax.definition_at(3, 10)
    assert node is not None
    assert syntax.signature_of(node) == "double distance(const Point &a, const Point &b)"


def test_python_signature_and_docstring_come_from_the_definition_node() -> None:
    syntax = SyntaxFile.parse("python", PYTHON)
    node = syntax.definition_at(4, 9)
    assert node is not None
    assert syntax.signature_of(node) == "def total(self, rate: float) -> float"
    assert syntax.docstring_of(node) == "Gross total."


def test_columns_count_characters_not_bytes() -> None:
    source = 'name = "café"; other = name\n'.encode()
    result = SyntaxFile.parse("python", source).describe(1, 17)
    assert result.node.text == "other"
    assert result.node.range.start_column == 16


@pytest.mark.parametrize(("line", "column", "message"), [(99, None, "outside the file"), (1, 500, "outside line 1")])
def test_positions_past_the_end_are_clear_input_errors(line: int, column: int | None, message: str) -> None:
    with pytest.raises(InvalidToolInput, match=message):
        SyntaxFile.parse("python", PYTHON).describe(line, column)


def test_files_with_syntax_errors_still_answer_and_say_so() -> None:
    result = SyntaxFile.parse("python", b"def broken(:\n    return 1\n").describe(2, 12)
    assert result.has_errors


def test_a_use_on_the_same_line_as_its_function_header_belongs_to_that_function() -> None:
    syntax = SyntaxFile.parse("c", b"int add(int a, int b) { return a + b; }\nint twice(int a) { return add(a, a); }\n")
    use = syntax.container_of(2, 27)
    assert use is not None and use.name == "twice"
    assert syntax.container_of(1, 5) is None  # the definition's own name sits at file level
