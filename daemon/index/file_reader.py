"""Read one candidate file and decide whether its content can be indexed.

Content that holds a credential (:func:`daemon.core.secret_rules.secret_content`) is skipped as
``secret`` unless ``include_secrets`` is on, so it is never chunked, stored or returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from daemon.core.models import SkipReason, content_hash
from daemon.core.secret_rules import secret_content

__all__ = ["FileContent", "read_file"]

_SNIFF_BYTES = 8192


@dataclass(frozen=True, slots=True)
class FileContent:
    data: bytes
    hash: str


def read_file(path: Path, max_bytes: int, *, include_secrets: bool = False) -> FileContent | SkipReason:
    """The file's bytes and hash, or why it is skipped (vanished, unreadable, too large, binary, not UTF-8, secret)."""
    try:
        with path.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except FileNotFoundError:
        return SkipReason.VANISHED
    except IsADirectoryError:
        return SkipReason.UNSUPPORTED
    except OSError:
        return SkipReason.UNREADABLE
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
