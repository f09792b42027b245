"""Dense embedding in a worker process, so the daemon's own memory and GIL stay free.

``EmbeddingProcess`` starts ``embed_worker`` (a child process at low priority, see there) for one
fill of dense vectors: ``start()`` waits until the model is loaded, ``embed_documents`` sends the
chunks' document texts and returns their vectors, ``close()`` ends the worker. The daemon's index
host starts one when chunks lack vectors and closes it once none do, so the model's documents
session (~160 MB folded weights, plus every batch's activations) never lives in the daemon; the
daemon's thread that waits for a batch waits on a pipe, without the GIL.

The worker dies with its owner, whatever kills the owner (``parent_watch``); closing its stdin ends
it; ``close()`` kills it if it has not ended within a few seconds.
"""

from __future__ import annotations

import array
import contextlib
import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from daemon.errors import EmbeddingUnavailable
from daemon.index.embed_frames import ERROR, READY, TEXTS, VECTORS, read_frame, write_frame
from daemon.index.embed_text import document_text

if TYPE_CHECKING:
    from daemon.config import EmbeddingConfig
    from daemon.core.models import Chunk

__all__ = ["EmbeddingProcess"]

logger = logging.getLogger(__name__)

_EXIT_WAIT_S = 5.0


class EmbeddingProcess:
    """The model's documents session in a child process (``embed_documents`` like a ``DenseEmbedder``'s).

    Args:
        config: the embedding settings (model, dim, max_tokens, batch size, threads, arena).
        cache_root: where the bundled model directory is assembled.
        text_of: what text of a chunk to embed (default ``embed_text.document_text``).
    """

    def __init__(
        self, config: EmbeddingConfig, cache_root: Path, *, text_of: Callable[[Chunk], str] = document_text
    ) -> None:
        self._config = config
        self._cache_root = cache_root
        self._text_of = text_of
        self._proc: subprocess.Popen[bytes] | None = None
        self._dim = config.dim

    @property
    def pid(self) -> int | None:
        """The worker's pid while it runs."""
        return self._proc.pid if self._proc is not None else None

    def start(self) -> None:
        """Start the worker and wait until its model is loaded.

        Raises:
            EmbeddingUnavailable: the model cannot be loaded (the worker's reason), or the worker died.
        """
        if self._proc is not None:
            return
        argv = [sys.executable, "-P", "-m", "daemon.index.embed_worker", str(os.getpid()), str(self._cache_root)]
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        stdin = self._pipe(self._proc.stdin)
        stdin.write(self._config.model_dump_json().encode() + b"\n")
        stdin.flush()
        kind, payload = self._answer()
        if kind != READY:
            self.close()
            raise EmbeddingUnavailable(f"the embedding worker did not load the model: {payload.decode()}")
        self._dim = int(json.loads(payload)["dim"])
        logger.info("embedding worker pid %d loaded the model", self._proc.pid)

    def embed_documents(self, chunks: Sequence[Chunk]) -> list[list[float]]:
        """Vectors of the chunks' document texts, in input order, embedded in the worker.

        Raises:
            EmbeddingUnavailable: the worker failed on them or died (it is closed then).
        """
        if not chunks:
            return []
        self.start()
        assert self._proc is not None
        try:
            write_frame(self._pipe(self._proc.stdin), TEXTS, json.dumps([self._text_of(c) for c in chunks]).encode())
        except OSError as exc:
            self.close()
            raise EmbeddingUnavailable("the embedding worker is gone", cause=exc) from exc
        kind, payload = self._answer()
        if kind != VECTORS:
            self.close()
            raise EmbeddingUnavailable(f"the embedding worker failed: {payload.decode()}")
        flat = array.array("f")
        flat.frombytes(payload)
        if sys.byteorder != "little":
            flat.byteswap()
        values = flat.tolist()
        return [values[i : i + self._dim] for i in range(0, len(values), self._dim)]

    def close(self, grace_s: float = _EXIT_WAIT_S) -> None:
        """End the worker: its stdin closes, and it is killed if it has not exited after ``grace_s``."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        try:
            proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        logger.info("embedding worker pid %d exited (%s)", proc.pid, proc.returncode)

    def _answer(self) -> tuple[bytes, bytes]:
        assert self._proc is not None
        frame = read_frame(self._pipe(self._proc.stdout))
        if frame is None:
            code = self._proc.poll()
            self.close()
            raise EmbeddingUnavailable(f"the embedding worker exited (code {code})")
        kind, payload = frame
        if kind == ERROR:
            return kind, json.loads(payload)["message"].encode()
        return kind, payload

    @staticmethod
    def _pipe(stream: IO[bytes] | None) -> IO[bytes]:
        if stream is None:
            raise EmbeddingUnavailable("the embedding worker has no pipe")
        return stream
