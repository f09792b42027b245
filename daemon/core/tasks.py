"""Ending background tasks: cancel them and wait until each has ended.

:func:`cancel_and_wait` is how a component closes the tasks it started: every task is cancelled first,
then awaited; what a task raised on its way out (its cancellation included) is swallowed, since the
component is closing either way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

__all__ = ["cancel_and_wait"]


async def cancel_and_wait(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Cancel ``tasks`` and wait until each has ended (see the module docstring)."""
    pending = list(tasks)
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
