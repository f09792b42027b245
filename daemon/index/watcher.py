"""File-system watching: bursts of changes become batches of workspace-relative paths.

watchfiles (Rust notify) groups events: a batch is yielded once the tree has been quiet for
``debounce_ms`` (bounded at 1.6 s), so a save yields one small batch and a branch switch one
large one. Whether a path is indexable is decided later by the scanner's rules.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

from watchfiles import Change, awatch  # pyright: ignore[reportUnknownVariableType]

from daemon.index.scanner import BUILTIN_EXCLUDED_DIRS

__all__ = ["watch_batches"]

logger = logging.getLogger(__name__)


def _relevant(root: Path, change: Change, path: str) -> bool:
    try:
        rel = Path(path).relative_to(root)
    except ValueError:
        return False
    return not any(part in BUILTIN_EXCLUDED_DIRS for part in rel.parts[:-1])


async def watch_batches(root: Path, *, debounce_ms: int, stop: asyncio.Event) -> AsyncIterator[list[str]]:
    """Yield sorted, de-duplicated batches of changed relative paths until ``stop`` is set.

    ``root`` must already be resolved (symlinks would make event paths fail to relativize).
    """
    async for changes in awatch(
        root,
        watch_filter=lambda change, path: _relevant(root, change, path),
        debounce=1600,
        step=max(1, debounce_ms),
        stop_event=stop,
        recursive=True,
        ignore_permission_denied=True,
    ):
        rels = sorted({Path(p).relative_to(root).as_posix() for _, p in changes})
        if rels:
            logger.debug("%d path(s) changed", len(rels))
            yield rels
