"""Tree-sitter work for requests, off the event loop and within a time budget.

A few dedicated threads (``SYNTAX_THREADS``): hostile requests queue here instead of taking every
thread. The work checks its ``BudgetClock`` itself and stops with ``TooComplex``; ``run``'s wait is a
backstop with a grace period for a work item that cannot check (one long call into Tree-sitter).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from daemon.intel.syntax_budget import BudgetClock

__all__ = ["SYNTAX_THREADS", "SyntaxWorker"]

T = TypeVar("T")

SYNTAX_THREADS = 2


class SyntaxWorker:
    """See the module docstring."""

    def __init__(self) -> None:
        self._threads = ThreadPoolExecutor(max_workers=SYNTAX_THREADS, thread_name_prefix="ided-syntax")

    async def run(self, work: Callable[[], T], clock: BudgetClock) -> T:
        """``work`` on the syntax threads within ``clock``'s budget (``clock.timed_out()`` past it)."""
        future = asyncio.get_running_loop().run_in_executor(self._threads, work)
        grace = max(1.0, clock.budget.seconds)
        try:
            return await asyncio.wait_for(future, max(0.0, clock.deadline - time.monotonic()) + grace)
        except TimeoutError:
            raise clock.timed_out() from None

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)
