"""The time and depth budget of one request's Tree-sitter work on one file.

A request that parses or walks a file (the AST node at a point, the scopes around a reference)
gets a :class:`SyntaxBudget`; :meth:`SyntaxBudget.start` turns it into a :class:`BudgetClock` whose
deadline the parse (through Tree-sitter's progress callback) and every walk check. A spent budget
raises ``TooComplex`` (error code ``too_complex``) naming what ran out and the setting that sets
it, so a hostile or pathological file costs at most the budget and never an unbounded walk.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from daemon.errors import TooComplex

__all__ = ["DEFAULT_BUDGET", "BudgetClock", "SyntaxBudget"]


@dataclass(frozen=True, kw_only=True)
class SyntaxBudget:
    """Limits of one request's work on one file (``intel.syntax_timeout_seconds``, ``intel.syntax_max_depth``)."""

    seconds: float = 5.0
    max_depth: int = 2000

    def start(self, what: str) -> BudgetClock:
        """A clock for ``what`` (named in the error), running from now."""
        return BudgetClock(self, what)


DEFAULT_BUDGET = SyntaxBudget()


class BudgetClock:
    """A running budget: ``check`` and ``check_depth`` raise ``TooComplex`` once it is spent."""

    def __init__(self, budget: SyntaxBudget, what: str) -> None:
        self.budget = budget
        self.what = what
        self.deadline = time.monotonic() + budget.seconds

    def expired(self) -> bool:
        return time.monotonic() > self.deadline

    def check(self) -> None:
        if self.expired():
            raise self.timed_out()

    def timed_out(self) -> TooComplex:
        return TooComplex(
            f"{self.what} took more than its {self.budget.seconds:g} s budget: the file is too complex "
            "(intel.syntax_timeout_seconds sets the budget)"
        )

    def check_depth(self, depth: int, line: int) -> None:
        if depth > self.budget.max_depth:
            raise TooComplex(
                f"{self.what}: the syntax tree at line {line} is nested more than {self.budget.max_depth} levels "
                "deep (intel.syntax_max_depth sets the limit)"
            )
