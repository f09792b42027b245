"""Open the configured VectorStore for a workspace: Qdrant Edge, qdrant-client local mode or a server.

Where the data lives:

- ``edge``   -> ``<state>/qdrant-edge/<collection>/`` (plus ``<collection>.json``, the model record);
- ``local``  -> ``<state>/qdrant-local/`` holding collection ``<collection>``;
- ``server`` -> collection ``<collection>`` on ``qdrant.url``.

``<collection>`` is ``qdrant.collection`` when set (so clones of one repository on several machines can
share one collection on a server), else ``<collection_prefix>_<state dir name>_<hash of the state dir path>``. The state
dir name is readable (by default ``<workspace>-<hash of the workspace path>``); the path hash keeps
two workspaces apart on a shared server even when their state dirs are configured with the same
name.
"""

from __future__ import annotations

import hashlib
import logging
import re

from daemon.config import Config
from daemon.core.ports import VectorStore
from daemon.errors import StoreError
from daemon.index.store_edge import EdgeVectorStore

__all__ = ["collection_name", "open_store"]

logger = logging.getLogger(__name__)

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_MAX_NAME = 120


def collection_name(config: Config) -> str:
    """The collection (Edge: shard) name of this workspace: ``qdrant.collection`` when set, else derived
    from the state dir (stable for a given state dir)."""
    if config.qdrant.collection:
        return config.qdrant.collection
    state = config.state_path.expanduser().resolve()
    digest = hashlib.blake2b(str(state).encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
    readable = _UNSAFE.sub("-", f"{config.qdrant.collection_prefix}_{state.name or 'root'}").strip("-")
    return f"{readable[:_MAX_NAME]}_{digest}"


def open_store(config: Config, *, dense_dim: int, dense_model: str) -> VectorStore:
    """Open (creating when absent) the store ``config.qdrant.mode`` names; StoreError if it cannot be."""
    qdrant = config.qdrant
    name = collection_name(config)
    state = config.state_path.expanduser()
    if qdrant.mode == "edge":
        store: VectorStore = EdgeVectorStore.open(
            state / "qdrant-edge" / name, dense_dim=dense_dim, dense_model=dense_model
        )
    elif qdrant.mode == "local":
        from daemon.index.store_qdrant import QdrantClientStore  # qdrant-client: ~0.5 s to import, only when used

        store = QdrantClientStore.open_local(state / "qdrant-local", name, dense_dim=dense_dim, dense_model=dense_model)
    else:
        if not qdrant.url:
            raise StoreError("qdrant.mode is 'server' but qdrant.url is not set")
        from daemon.index.store_qdrant import QdrantClientStore

        store = QdrantClientStore.open_server(
            qdrant.url, name, api_key=qdrant.api_key, dense_dim=dense_dim, dense_model=dense_model
        )
    logger.info("vector store: %s, collection %s", store.name, name)
    return store
