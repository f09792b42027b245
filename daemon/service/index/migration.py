"""``ided index --migrate-to URL``: copy a workspace's index into a Qdrant server, vectors and all.

Opens the store the configuration names now (Qdrant Edge by default) as the source and this
workspace's collection on the server at ``URL`` as the target (same name as ``qdrant.url = URL``
would open, see ``store_factory``), copies every point as it is stored (id, payload, lexical and
dense vectors: nothing is parsed or embedded again), then deletes from the target the files the
source does not hold, so the target ends equal to the source. The workspace's manifest (which
files, at which hashes, are indexed) stays valid, so after switching ``qdrant.url`` to ``URL`` the
next index pass only picks up what changed since. Running it twice is safe; the source is only
read. The source must not be open elsewhere (stop the daemon first: Qdrant Edge refuses a second
opener with ``store_failed``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from daemon.config import Config, QdrantConfig
from daemon.errors import ConfigError, StoreError
from daemon.index._store_base import PointStoreBase
from daemon.index.store_factory import collection_name, open_store

__all__ = ["IndexCopyReport", "migrate_workspace_index"]


@dataclass(frozen=True, slots=True)
class IndexCopyReport:
    """What a migration did: points copied, stale files removed from the target, where from and to."""

    copied: int
    removed_paths: int
    embedded: int
    source: str
    target: str
    collection: str


def migrate_workspace_index(
    config: Config, to_url: str, progress: Callable[[int], None] | None = None
) -> IndexCopyReport:
    """Copy this workspace's index into the Qdrant server at ``to_url`` (see the module doc)."""
    if not to_url.startswith(("http://", "https://")):
        raise ConfigError(f"--migrate-to {to_url!r}: must be a Qdrant server's http:// or https:// URL")
    if config.qdrant.mode == "server" and config.qdrant.url == to_url:
        raise ConfigError(f"the index is on {to_url} already (qdrant.url); nothing to migrate")
    target_qdrant = QdrantConfig.model_validate({**config.qdrant.model_dump(), "mode": "server", "url": to_url})
    target_config = config.model_copy(update={"qdrant": target_qdrant})
    dim, model = config.embedding.dim, config.embedding.model_name
    source = open_store(config, dense_dim=dim, dense_model=model)
    try:
        target = open_store(target_config, dense_dim=dim, dense_model=model)
        try:
            if not isinstance(source, PointStoreBase) or not isinstance(target, PointStoreBase):
                raise StoreError(f"{source.name} cannot be copied into {target.name}")
            copied = source.copy_into(target, progress)
            stale = set(target.counts_by_path()) - set(source.counts_by_path())
            target.delete_paths(stale)
            if target.count() != source.count():
                raise StoreError(
                    f"after the copy {to_url} holds {target.count()} points and the source {source.count()}; "
                    "is something else writing to either? Run the migration again"
                )
            embedded = target.count(embedded_only=True)
        finally:
            target.close()
    finally:
        source.close()
    return IndexCopyReport(
        copied=copied,
        removed_paths=len(stale),
        embedded=embedded,
        source=source.name,
        target=to_url,
        collection=collection_name(target_config),
    )
