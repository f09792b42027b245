"""File-system watching: bursts of changes become batches of workspace-relative paths.

watchfiles (Rust notify) groups events: a batch is yielded once the tree has been quiet for
``debounce_ms`` (bounded at 1.6 s), so a save yields one small batch and a branch switch one
large one. Whether a path is indexable is decided later by the scanner's rules.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path

from watchfiles import Change, awatch  # pyright: ignore[reportUnknownVariableType]

from daemon.index.scanner import BUILTIN_EXCLUDED_DIRS

__all__ = ["watch_batches", "with_directory_contents"]

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
        rels = with_directory_contents(root, {Path(p).relative_to(root).as_posix() for _, p in changes})
        if rels:
            logger.debug("%d path(s) changed", len(rels))
            yield rels


_DIRECTORY_WALK_LIMIT = 20_000
"""Paths a batch takes from inside the directories it names; past that the batch is large enough
that the daemon runs a full pass anyway."""


def with_directory_contents(root: Path, rels: set[str]) -> list[str]:
    """``rels`` sorted, plus the paths inside each directory among them.

    The watcher adds its watch on a new directory only once it has seen the directory appear, so a
    file written into it before that (an unpacked archive, a checkout, a script that makes a folder
    and fills it at once) raises no event of its own; naming the directory's contents here keeps such
    a file from being missed. Links are named, never followed.
    """
    out = set(rels)
    budget = _DIRECTORY_WALK_LIMIT
    for rel in sorted(rels):
        folder = root / rel
        if budget <= 0 or folder.is_symlink() or not folder.is_dir():
            continue
        for current, dirs, files in os.walk(folder):
            dirs[:] = [d for d in dirs if d not in BUILTIN_EXCLUDED_DIRS]
            base = Path(current).relative_to(root)
            named = [*files, *(d for d in dirs if (Path(current) / d).is_symlink())]
            out.update((base / name).as_posix() for name in named)
            budget -= len(named)
            if budget <= 0:
                break
    return sorted(out)
