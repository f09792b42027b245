"""The embedding worker process: ``python -P -m daemon.index.embed_worker OWNER_PID CACHE_ROOT``.

Started by ``embed_process.EmbeddingProcess`` for one fill of dense vectors. It first ties its life
to its owner (``parent_watch.exit_with``: it dies with the daemon, whatever kills that), lowers its
priority (``EMBED_NICENESS``), reads the ``EmbeddingConfig`` as one JSON line on stdin and loads the
model's documents session. Then it answers frames (``embed_frames``): texts in, vectors out, until
its stdin ends. Its log lines go to its stderr (the daemon's).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from pathlib import Path

from daemon.config import EmbeddingConfig
from daemon.errors import EmbeddingUnavailable
from daemon.index.embed_frames import ERROR, READY, TEXTS, VECTORS, read_frame, write_frame
from daemon.index.parent_watch import exit_with

__all__ = ["EMBED_NICENESS", "main"]

logger = logging.getLogger(__name__)

EMBED_NICENESS = 10
"""Added to the worker's niceness: the daemon's searches, the index writer and the user's editor come first."""


def main() -> int:
    owner, cache_root = int(sys.argv[1]), Path(sys.argv[2])
    exit_with(owner)
    with contextlib.suppress(OSError):
        os.nice(EMBED_NICENESS)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s embed-worker %(levelname)s %(message)s")
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    config = EmbeddingConfig.model_validate_json(stdin.readline())
    from daemon.index.embedder import OnnxEmbedder  # numpy and onnxruntime: in this process only

    try:
        model = OnnxEmbedder.from_config(config, cache_root, load="documents")
    except EmbeddingUnavailable as exc:
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
