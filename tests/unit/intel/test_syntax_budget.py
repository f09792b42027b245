"""A request's Tree-sitter work has a time and a depth budget, and a spent budget is ``too_complex``."""

from __future__ import annotations

import time

import pytest

from daemon.errors import ErrorCode, TooComplex
from daemon.intel.ast_nodes import SyntaxFile
from daemon.intel.parsers import parse
from daemon.intel.syntax_budget import BudgetClock, SyntaxBudget

DEEP = b"x = " + b"[" * 100_000 + b"1" + b"]" * 100_000 + b"\n"


def test_a_point_nested_deeper_than_the_limit_is_too_complex_not_a_long_walk() -> None:
    syntax = SyntaxFile.parse("python", DEEP, budget=SyntaxBudget(max_depth=2000, seconds=60))
    with pytest.raises(TooComplex) as caught:
        syntax.describe(1, 50_000)
    assert caught.value.code == ErrorCode.TOO_COMPLEX
    assert "2000 levels" in caught.value.message and "intel.syntax_max_depth" in caught.value.message


def test_a_shallow_point_in_a_deep_file_is_still_described() -> None:
    syntax = SyntaxFile.parse("python", DEEP, budget=SyntaxBudget(max_depth=2000, seconds=60))
    result = syntax.describe(1, 1)
    assert result.node.type == "identifier" and result.node.text == "x"
    assert [a.type for a in result.ancestors] == ["assignment", "expression_statement", "module"]


def test_nesting_within_the_limit_gives_ancestors_and_scopes_from_one_descent() -> None:
    depth = 600
    source = b"def outer():\n    return " + b"[" * depth + b"1" + b"]" * depth + b"\n"
    syntax = SyntaxFile.parse("python", source, budget=SyntaxBudget(max_depth=2000, seconds=60))
    result = syntax.describe(2, 12 + depth)  # the `1` in the middle
    assert result.node.type == "integer"
    assert len(result.ancestors) == 40 and {a.type for a in result.ancestors} == {"list"}
    assert result.enclosing_function is not None and result.enclosing_function.name == "outer"


def test_a_walk_past_its_deadline_is_too_complex() -> None:
    syntax = SyntaxFile.parse("python", DEEP, budget=SyntaxBudget(max_depth=1_000_000, seconds=60))
    syntax.clock.deadline = time.monotonic() - 1  # the budget is spent before the walk
    with pytest.raises(TooComplex, match=r"intel\.syntax_timeout_seconds"):
        syntax.describe(1, 50_000)


class _SpentAfter(BudgetClock):
    """A clock whose budget is spent after ``calls`` looks: the parse's progress callback asks it."""

    def __init__(self, calls: int) -> None:
        super().__init__(SyntaxBudget(seconds=60), "parsing big.py")
        self.calls = calls

    def expired(self) -> bool:
        self.calls -= 1
        return self.calls < 0


def test_a_parse_stopped_at_its_deadline_is_too_complex_and_the_parser_serves_the_next_file() -> None:
    big = b"".join(b"def f%d(a, b):\n    return [a, b, (a + b) * %d]\n" % (i, i) for i in range(60_000))
    clock = _SpentAfter(4)
    with pytest.raises(TooComplex, match=r"parsing big\.py"):
        parse("python", big, clock=clock)
    assert clock.calls < 0  # stopped by the progress callback, mid-parse
    tree = parse("python", b"def g():\n    return 1\n", clock=SyntaxBudget().start("small"))
    assert not tree.root_node.has_error and tree.root_node.children[0].type == "function_definition"
    assert tree.root_node.end_point == (2, 0)
