"""Read one candidate file and decide whether its content can be indexed.

Only a regular file is opened, without blocking (:func:`daemon.core.regular_files.read_regular`):
a path that has become a FIFO, socket or device since the scan is skipped as ``special_file``, one
that has become a hard link (or moved to another file system) as the scan would skip it. Content that
holds a credential (:func:`daemon.core.secret_rules.secret_content`) is skipped as ``secret`` unless
``include_secrets`` is on, so it is never chunked, stored or returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from daemon.core.models import SkipReason, content_hash
from daemon.core.regular_files import NotRegularFile, boundary_problem, read_regular_stat
from daemon.core.secret_rules import secret_content

__all__ = ["FileContent", "read_file"]

_SNIFF_BYTES = 8192


@dataclass(frozen=True, slots=True)
class FileContent:
    data: bytes
    hash: str


def read_file(
    path: Path, max_bytes: int, *, include_secrets: bool = False, root_device: int | None = None
) -> FileContent | SkipReason:
    """The file's bytes and hash, or why it is skipped (vanished, unreadable, too large, binary, not UTF-8, secret,
    special file, hard link; on another file system than ``root_device``, the workspace root's ``st_dev``)."""
    try:
        data, st = read_regular_stat(path, max_bytes + 1)
    except FileNotFoundError:
        return SkipReason.VANISHED
    except NotRegularFile as exc:
        return SkipReason.UNSUPPORTED if exc.kind == "directory" else SkipReason.SPECIAL_FILE
    except IsADirectoryError:
        return SkipReason.UNSUPPORTED
    except OSError:
        return SkipReason.UNREADABLE
    problem = boundary_problem(st, root_device)
    if problem is not None:
        return problem
    if len(data) > max_bytes:
        return SkipReason.TOO_LARGE
    if b"\x00" in data[:_SNIFF_BYTES]:
        return SkipReason.BINARY
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return SkipReason.NOT_UTF8
    if not include_secrets and secret_content(data) is not None:
        return SkipReason.SECRET
    return FileContent(data=data, hash=content_hash(data))
