"""Dense embedding behind the lexical index: embed chunks that have no vector yet, in batches."""

from __future__ import annotations

import logging
from collections.abc import Callable

from daemon.core.models import Chunk
from daemon.core.ports import DenseEmbedder, VectorStore

__all__ = ["fill_dense"]

logger = logging.getLogger(__name__)

_FLUSH_EVERY = 512

Take = Callable[[int], list[tuple[str, Chunk]]]
"""Up to N chunks without a vector, with their point ids, in the order they are to be embedded."""


def fill_dense(
    store: VectorStore,
    embedder: DenseEmbedder,
    *,
    batch_size: int,
    take: Take | None = None,
    progress: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    limit: int | None = None,
) -> int:
    """Embed missing chunks (in ``take``'s order; default: the store's) until none is left, ``limit`` is
    hit or ``should_stop``.

    Returns the number of chunks embedded. Progress receives the running count.
    """
    next_batch: Take = take if take is not None else store.missing_dense
    done = 0
    since_flush = 0
    while limit is None or done < limit:
        if should_stop is not None and should_stop():
            break
        want = batch_size if limit is None else min(batch_size, limit - done)
        batch = next_batch(want)
        if not batch:
            break
        vectors = embedder.embed_documents([chunk for _, chunk in batch])
        store.set_dense({pid: vec for (pid, _), vec in zip(batch, vectors, strict=True)})
        done += len(batch)
        since_flush += len(batch)
        if since_flush >= _FLUSH_EVERY:
            store.flush()
            since_flush = 0
        if progress is not None:
            progress(done)
    store.flush()
    if done:
        logger.info("embedded %d chunk(s) with %s", done, embedder.name)
    return done
