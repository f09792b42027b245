"""The embedding worker process: ``python -P -m daemon.index.embed_worker OWNER_PID CACHE_ROOT``.

Started by ``embed_process.EmbeddingProcess`` for one fill of dense vectors. It first ties its life
to its owner (``parent_watch.exit_with``: it dies with the daemon, whatever kills that), lowers its
priority (``EMBED_NICENESS``), reads the ``EmbeddingConfig`` as one JSON line on stdin and loads the
model's documents session. Then it answers frames (``embed_frames``): texts in, vectors out, until
its stdin ends. Its log lines go to its stderr (the daemon's).

The worker imports neither pydantic nor the configuration: they would hold ~23 MB of its ~150 for
the whole fill. The line is the daemon's already validated ``EmbeddingConfig``; ``WorkerSettings``
reads the fields the model needs and checks their types, so a line the daemon did not write fails
with a message naming the field.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, cast, get_args, get_type_hints

from daemon.errors import EmbeddingUnavailable
from daemon.index.embed_frames import ERROR, READY, TEXTS, VECTORS, read_frame, write_frame
from daemon.index.parent_watch import exit_with

__all__ = ["EMBED_NICENESS", "WorkerSettings", "main"]

logger = logging.getLogger(__name__)

EMBED_NICENESS = 10
"""Added to the worker's niceness: the daemon's searches, the index writer and the user's editor come first."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerSettings:
    """The fields of ``EmbeddingConfig`` the model needs (``embedder.EmbeddingSettings``)."""

    enabled: bool
    model_dir: str | None
    model_name: str
    dim: int
    max_tokens: int
    batch_size: int
    threads: int | None
    memory_arena: bool

    @classmethod
    def from_json(cls, line: bytes) -> WorkerSettings:
        """Read the daemon's ``EmbeddingConfig`` line.

        Raises:
            ValueError: not a JSON object, or a field is missing or of the wrong type (named).
        """
        data: object = json.loads(line)
        if not isinstance(data, dict):
            raise ValueError("the embedding settings are not a JSON object")
        given = cast("dict[str, Any]", data)
        hints = get_type_hints(cls)
        values: dict[str, Any] = {}
        for field in fields(cls):
            types = get_args(hints[field.name]) or (hints[field.name],)  # `int | None` -> (int, NoneType)
            value = given.get(field.name, ...)
            numeric_bool = isinstance(value, bool) and bool not in types
            if value is ... or not isinstance(value, types) or numeric_bool:
                wanted = " or ".join(t.__name__ for t in types)
                raise ValueError(f"embedding setting {field.name!r} is missing or not {wanted}")
            values[field.name] = value
        return cls(**values)


def main() -> int:
    owner, cache_root = int(sys.argv[1]), Path(sys.argv[2])
    exit_with(owner)
    with contextlib.suppress(OSError):
        os.nice(EMBED_NICENESS)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s embed-worker %(levelname)s %(message)s")  # noqa: TID251 - its own process (an embedding worker), started without the daemon's logging
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    from daemon.index.embedder import OnnxEmbedder  # numpy and onnxruntime: in this process only

    try:
        model = OnnxEmbedder.from_config(WorkerSettings.from_json(stdin.readline()), cache_root, load="documents")
    except (EmbeddingUnavailable, ValueError) as exc:
        write_frame(stdout, ERROR, json.dumps({"message": str(exc)}).encode())
        return 1
    write_frame(stdout, READY, json.dumps({"dim": model.dim}).encode())
    import numpy as np

    while (frame := read_frame(stdin)) is not None:
        kind, payload = frame
        if kind != TEXTS:
            write_frame(stdout, ERROR, json.dumps({"message": f"unexpected frame {kind!r}"}).encode())
            return 1
        try:
            vectors = model.embed_texts(json.loads(payload))
        except EmbeddingUnavailable as exc:
            write_frame(stdout, ERROR, json.dumps({"message": str(exc)}).encode())
            return 1
        write_frame(stdout, VECTORS, np.asarray(vectors, dtype="<f4").tobytes())
    return 0


if __name__ == "__main__":
    sys.exit(main())
