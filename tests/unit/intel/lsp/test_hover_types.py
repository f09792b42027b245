"""The type a hover's declaration line states, in the words of each language server ided runs."""

from __future__ import annotations

import pytest

from daemon.intel.lsp.hover_types import hover_type


@pytest.mark.parametrize(
    ("declaration", "kind", "name", "typed", "returns"),
    [
        # basedpyright / pyright
        ("(variable) first: Point", "variable", "first", "Point", None),
        ("(variable) points: list[Point]", "variable", "points", "list[Point]", None),
        ("(parameter) other: Point", "parameter", "other", "Point", None),
        (
            "(method) def distance_to(other: Point) -> float",
            "method",
            "distance_to",
            "(other: Point) -> float",
            "float",
        ),
        (
            "(function) def centroid(points: list[Point]) -> Point",
            "function",
            "centroid",
            "(points: list[Point]) -> Point",
            "Point",
        ),
        ("(constant) LIMIT: int = 3", "constant", "LIMIT", "int", None),
        ("(variable) f: (x: int) -> str", "variable", "f", "(x: int) -> str", None),
        ("class Reporter(title: str)", "class", "Reporter", "Reporter", None),
        # typescript-language-server
        ("const cart: Cart", "variable", "cart", "Cart", None),
        ("(property) Cart.items: LineItem[]", "property", "Cart.items", "LineItem[]", None),
        (
            "(alias) checkout(cart: Cart, taxRate: number): number",
            "alias",
            "checkout",
            "(cart: Cart, taxRate: number) -> number",
            "number",
        ),
        (
            "(method) Array<LineItem>.push(...items: LineItem[]): number",
            "method",
            "Array<LineItem>.push",
            "(...items: LineItem[]) -> number",
            "number",
        ),
        (
            "function priceWithTax(net: number, rate: number): number",
            "function",
            "priceWithTax",
            "(net: number, rate: number) -> number",
            "number",
        ),
        ("interface LineItem", "interface", "LineItem", "LineItem", None),
        # gopls, rust-analyzer
        ("var total int", "variable", "total", "int", None),
        ("let x: i32", "variable", "x", "i32", None),
    ],
)
def test_a_declaration_line_gives_the_kind_name_and_type(
    declaration: str, kind: str, name: str, typed: str, returns: str | None
) -> None:
    found = hover_type(declaration)
    assert (found.kind, found.name, found.type, found.returns) == (kind, name, typed, returns)


def test_a_hover_that_shows_an_assignment_states_no_type() -> None:
    # jedi shows a variable's assignment: the caller asks the type definition instead
    found = hover_type("first = points[0]")
    assert found.name == "first" and found.type is None


def test_only_the_first_line_of_a_hover_block_is_read() -> None:
    found = hover_type("(alias) checkout(cart: Cart): number\nimport checkout")
    assert found.type == "(cart: Cart) -> number" and found.declaration == "(alias) checkout(cart: Cart): number"
