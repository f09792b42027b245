"""Which run the code running now belongs to: a context variable the runtime sets for each run's work.

``PipelineRuntime`` sets it while it prepares a run (selection) and in the task that executes the run, a
resumption or a follow-up (``run_task``); everything awaited from there sees it (the agents, the model
calls). The replay provider keeps each run's used-up script entries apart with it, so a long-lived daemon
serves every run the script as written.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine, Generator
from contextlib import contextmanager
from typing import Any, TypeVar

__all__ = ["CURRENT_RUN", "run_task", "within_run"]

T = TypeVar("T")

CURRENT_RUN: contextvars.ContextVar[str | None] = contextvars.ContextVar("ided_current_run", default=None)
"""The run id of the work running now (None outside a run)."""


@contextmanager
def within_run(run_id: str) -> Generator[None]:
    """``CURRENT_RUN`` is ``run_id`` inside the block."""
    token = CURRENT_RUN.set(run_id)
    try:
        yield
    finally:
        CURRENT_RUN.reset(token)


def run_task(coro: Coroutine[Any, Any, T], run_id: str, *, name: str) -> asyncio.Task[T]:
    """A task for ``coro`` in which ``CURRENT_RUN`` is ``run_id`` (the caller's context is left as it was)."""
    context = contextvars.copy_context()
    context.run(CURRENT_RUN.set, run_id)
    return asyncio.create_task(coro, name=name, context=context)
