"""Pydantic records kept one per JSON file: written whole, read back with its two failures told apart.

``write_record(path, record)`` writes ``record`` as indented JSON through a temporary file renamed over
``path``, so a reader sees the old file or the new one, never half of one. ``read_record(path, model,
missing=..., unreadable=...)`` reads it back: a file that is not there raises ``missing()``, one that
cannot be read or does not hold a ``model`` raises ``unreadable(exc)``; each store words its own errors.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

__all__ = ["read_record", "write_record"]

M = TypeVar("M", bound=BaseModel)


def write_record(path: Path, record: BaseModel) -> None:
    """Write ``record`` as ``path`` at once (see the module docstring)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(record.model_dump_json(indent=2), encoding="utf-8")
    os.replace(tmp, path)


def read_record(
    path: Path,
    model: type[M],
    *,
    missing: Callable[[], Exception],
    unreadable: Callable[[Exception], Exception],
) -> M:
    """The ``model`` stored as ``path`` (see the module docstring for its errors)."""
    try:
        return model.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise missing() from None
    except (OSError, ValidationError) as exc:
        raise unreadable(exc) from exc
