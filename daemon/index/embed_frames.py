"""The frames between the daemon and its embedding worker process (``embed_process``, ``embed_worker``).

One frame is a kind byte, a 4-byte big-endian length and that many bytes:

* ``T`` (daemon → worker): the texts to embed, a JSON list of strings;
* ``R`` (worker → daemon, once): the model is loaded; JSON ``{"dim": N}``;
* ``V`` (worker → daemon): the vectors of the last ``T``, float32 little-endian, row after row;
* ``E`` (worker → daemon): the model failed; JSON ``{"message": "..."}``, and the worker exits.

The end of the daemon's stream tells the worker to exit. Standard library only: the daemon side
imports no numpy for it (``array`` turns the float32 rows into the same Python floats numpy's
``tolist`` gives).
"""

from __future__ import annotations

import struct
from typing import IO

__all__ = ["ERROR", "READY", "TEXTS", "VECTORS", "read_frame", "write_frame"]

TEXTS = b"T"
READY = b"R"
VECTORS = b"V"
ERROR = b"E"
_HEADER = struct.Struct(">cI")


def write_frame(stream: IO[bytes], kind: bytes, payload: bytes) -> None:
    stream.write(_HEADER.pack(kind, len(payload)))
    stream.write(payload)
    stream.flush()


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    parts: list[bytes] = []
    while size:
        part = stream.read(size)
        if not part:
            return None
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def read_frame(stream: IO[bytes]) -> tuple[bytes, bytes] | None:
    """The next frame's (kind, payload); None at the end of the stream (also mid-frame)."""
    header = _read_exactly(stream, _HEADER.size)
    if header is None:
        return None
    kind, size = _HEADER.unpack(header)
    payload = _read_exactly(stream, size) if size else b""
    if payload is None:
        return None
    return kind, payload
