"""Pydantic records kept one per JSON file: written whole, read back with its two failures told apart.

``write_record(path, record)`` writes ``record`` as indented JSON through a temporary file renamed over
``path``, so a reader sees the old file or the new one, never half of one. ``read_record(path, model,
missing=..., unreadable=...)`` reads it back: a file that is not there raises ``missing()``, one that
cannot be read or does not hold a ``model`` raises ``unreadable(exc)``; each store words its own errors.
``RecordDir`` is the base of a store that keeps such records in one folder, ``<key>.json`` a key.
"""

from __future__ import annotations

import logging
import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

__all__ = ["RecordDir", "read_record", "write_record"]

logger = logging.getLogger(__name__)

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


class RecordDir(ABC, Generic[M]):
    """A store of ``model`` records kept in ``folder``, ``<key>.json`` each, written and read as above.

    The store says which keys are file names (``_checked``) and words the two failures of ``_read``;
    ``what`` names a file in the warning ``_read_all`` logs for each one it skips.
    """

    def __init__(self, folder: Path, model: type[M], *, what: str) -> None:
        self._folder = folder
        self._model = model
        self._what = what

    @abstractmethod
    def _checked(self, key: str) -> str:
        """``key``, or an error when it is not a safe file name."""

    @abstractmethod
    def _missing(self, key: str) -> Exception: ...

    @abstractmethod
    def _unreadable(self, key: str, path: Path, exc: Exception) -> Exception: ...

    def _record_path(self, key: str) -> Path:
        return self._folder / f"{self._checked(key)}.json"

    def _write(self, key: str, record: M) -> None:
        write_record(self._record_path(key), record)

    def _read(self, key: str) -> M:
        path = self._record_path(key)
        return read_record(
            path,
            self._model,
            missing=lambda: self._missing(key),
            unreadable=lambda exc: self._unreadable(key, path, exc),
        )

    def _read_all(self) -> list[M]:
        """Every readable record, by file name; an unreadable file is skipped with a warning."""
        if not self._folder.is_dir():
            return []
        records: list[M] = []
        for path in sorted(self._folder.glob("*.json")):
            try:
                records.append(self._model.model_validate_json(path.read_bytes()))
            except (OSError, ValidationError):
                logger.warning("skipped an unreadable %s %s", self._what, path)
        return records
