"""The workspace index as one object: the store, the manifest, the encoders and the passes over them.

This is what every front uses (the CLI today; the daemon, MCP and LSP fronts later). It owns the
workspace lock for as long as it is open, so exactly one process writes a workspace's store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Self

from daemon.config import Config, default_cache_root
from daemon.core.models import (
    Chunk,
    IndexReport,
    IndexStatus,
    SearchFilters,
    SearchMode,
    SearchResult,
)
from daemon.core.ports import DenseEmbedder, Reranker, VectorStore
from daemon.core.secret_rules import RULES_VERSION
from daemon.errors import EmbeddingUnavailable
from daemon.index.dense_fill import fill_dense
from daemon.index.embed_order import EmbedQueue
from daemon.index.file_worker import WorkerSettings
from daemon.index.indexer import Indexer, IndexProgress
from daemon.index.manifest import MANIFEST_NAME, Manifest
from daemon.index.query_vectors import RememberedQueries
from daemon.index.reranker import load_reranker
from daemon.index.scanner import Scanner
from daemon.index.searcher import HybridSearcher
from daemon.index.sparse import CodeBm25Encoder
from daemon.index.state_files import check_free_space, ensure_state_dir
from daemon.index.store_factory import open_store
from daemon.index.workspace_lock import WorkspaceLock

if TYPE_CHECKING:
    from daemon.index.learned_ranker import LearnedRanker

__all__ = ["WorkspaceIndex"]

logger = logging.getLogger(__name__)

INDEX_FORMAT = "1"
HOT_FROM_SEARCH = 10
"""A search's first this many hits make their files hot (embedded next) while vectors are incomplete."""


class WorkspaceIndex:
    """Open with ``with WorkspaceIndex.open(config) as ws:``; closing flushes and releases the lock."""

    def __init__(self, config: Config, *, holder: str = "ided", lock_wait_s: float = 0.0) -> None:
        """Take the workspace (``holder`` names this process to others; wait up to ``lock_wait_s`` for it)."""
        self.config = config
        self.state_dir = config.state_path
        ensure_state_dir(self.state_dir)
        self._lock = WorkspaceLock(self.state_dir)
        self._lock.acquire(holder=holder, wait_s=lock_wait_s)
        try:
            self._check_space()
            self._sparse = CodeBm25Encoder()
            self._manifest = Manifest(self.state_dir / MANIFEST_NAME)
            self._store: VectorStore = open_store(
                config, dense_dim=config.embedding.dim, dense_model=config.embedding.model_name
            )
            self._check_format()
        except BaseException:
            self._lock.release()
            raise
        self._embedder: DenseEmbedder | None = None
        self._embedder_reason: str | None = None
        self._embedder_tried = False
        self._remembered: RememberedQueries | None = None
        self._embed_queue = EmbedQueue(lambda: self._manifest.all().values())
        self._reranker: Reranker | None
        self._reranker, self._reranker_reason = load_reranker(config.rerank)
        self._ranker_loaded = False
        self._ranker: LearnedRanker | None = None
        self._ranker_note: str | None = None
        scanner = Scanner.for_workspace(
            config.workspace_path, config.index, include_secrets=config.index.include_secrets
        )
        self._indexer = Indexer(
            scanner=scanner,
            store=self._store,
            manifest=self._manifest,
            settings=WorkerSettings(
                max_file_bytes=config.index.max_file_bytes,
                max_chunk_lines=config.index.max_chunk_lines,
                text_window_lines=config.index.text_window_lines,
                include_secrets=config.index.include_secrets,
                root_device=scanner.device,
            ),
            before_write=self._check_space,
        )

    @classmethod
    def open(cls, config: Config, *, holder: str = "ided", lock_wait_s: float = 0.0) -> Self:
        return cls(config, holder=holder, lock_wait_s=lock_wait_s)

    def _check_space(self) -> None:
        check_free_space(self.state_dir, self.config.index.min_free_disk_mb * 2**20)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        try:
            self._store.flush()
            self._store.close()
            self._manifest.close()
        finally:
            self._lock.release()

    # -- passes -------------------------------------------------------------------------------

    def index(self, progress: IndexProgress | None = None) -> IndexReport:
        """Scan and (re-)index what changed; lexically searchable when this returns."""
        try:
            return self._indexer.run(progress) if progress else self._indexer.run()
        finally:
            self._embed_queue.invalidate()

    def update_paths(self, rel_paths: Iterable[str]) -> IndexReport:
        """Re-index these files (changed on disk): their chunks are embedded before the rest."""
        paths = list(rel_paths)
        try:
            return self._indexer.update_paths(paths)
        finally:
            self._embed_queue.invalidate()
            self._embed_queue.prefer(paths)

    def rebuild(self) -> None:
        """Forget everything indexed so the next pass starts from scratch."""
        paths = list(self._store.counts_by_path())
        if paths:
            self._store.delete_paths(paths)
            self._store.flush()
        self._manifest.clear()
        self._manifest.set_meta(self._format_meta())

    def embed(self, progress: Callable[[int], None] | None = None, limit: int | None = None) -> int:
        """Fill in dense vectors for chunks that lack them, the likeliest to be asked about first
        (``embed_order``); 0 when no dense model is available."""
        embedder = self.dense_embedder()
        if embedder is None:
            return 0
        return fill_dense(
            self._store,
            embedder,
            batch_size=self.config.embedding.batch_size,
            take=self.missing_dense,
            progress=progress,
            limit=limit,
        )

    def flush(self) -> None:
        """Write what the store holds in memory to disk (less to replay on the next open)."""
        self._store.flush()

    def missing_dense(self, limit: int) -> list[tuple[str, Chunk]]:
        """Up to ``limit`` chunks without a dense vector, with their point ids (for an embedder elsewhere),
        the likeliest to be asked about first (``embed_order``)."""
        return self._embed_queue.take(self._store, limit)

    def prefer(self, paths: Iterable[str]) -> None:
        """Embed these files' chunks before the rest (files a search answered with, or one a code-intel
        request was about)."""
        self._embed_queue.prefer(paths)

    def set_dense(self, vectors: Mapping[str, list[float]]) -> None:
        """Attach dense vectors made elsewhere (ids gone meanwhile are skipped)."""
        self._store.set_dense(vectors)

    def dense_by_hash(self, paths: Iterable[str]) -> dict[str, list[float]]:
        """The stored dense vectors of these files' chunks, by chunk hash (chunks not embedded yet are absent)."""
        return self._store.dense_by_hash(paths)

    def pending_embeddings(self) -> int:
        return self._store.count() - self._store.count(embedded_only=True)

    # -- queries ------------------------------------------------------------------------------

    def _learned_ranker(self) -> LearnedRanker | None:
        """The learned ranker ``search.ranker`` asks for, loaded at the first search (numpy and the
        model file are not what opening the index, ``ided status``, needs); None: the formula."""
        if not self._ranker_loaded:
            from daemon.index.learned_ranker import learned_ranker  # numpy: on the first search

            self._ranker, self._ranker_note = learned_ranker(self.config)
            self._ranker_loaded = True
        return self._ranker

    def search(
        self,
        query: str,
        *,
        k: int | None = None,
        filters: SearchFilters | None = None,
        mode: SearchMode = SearchMode.HYBRID,
        rerank: bool = True,
    ) -> SearchResult:
        """``rerank=False``: no cross-encoder pass even when one is configured (symbol lookups)."""
        ranker = self._learned_ranker()
        searcher = HybridSearcher(
            store=self._store,
            sparse=self._sparse,
            embedder=self._query_embedder() if mode is not SearchMode.LEXICAL else None,
            reranker=self._reranker,
            prefetch=self.config.search.prefetch,
            rerank_top_n=self.config.rerank.top_n,
            ranker=ranker,
            ranker_scope="questions" if self.config.search.ranker == "auto" else "all",
            ranker_note=self._ranker_note,
        )
        k = self.config.search.default_k if k is None else k
        result = searcher.search(query, k=k, filters=filters, mode=mode, rerank=rerank)
        if result.embedded_fraction < 1.0 and self.config.embedding.enabled:
            # near the queries being asked: their answers' files are embedded next (embed_order)
            self._embed_queue.prefer(h.chunk.path for h in result.hits[:HOT_FROM_SEARCH])
        return result

    def status(self) -> IndexStatus:
        chunks = self._store.count()
        embedded = self._store.count(embedded_only=True)
        files = self._manifest.count()
        last_update = self._manifest.get_meta("last_update")
        raw_report = self._manifest.get_meta("last_report")
        report = IndexReport.model_validate_json(raw_report) if raw_report else None
        ready, reason = True, None
        if last_update is None:
            ready, reason = False, "not indexed yet: run `ided index`"
        elif chunks == 0 and report is not None and report.files_seen > sum(report.skipped.values()):
            ready, reason = False, "the last pass found indexable files but stored no chunks"
        if ready and self._embedder_reason:
            reason = f"lexical only: {self._embedder_reason}"
        return IndexStatus(
            workspace=str(self.config.workspace_path),
            state_dir=str(self.state_dir),
            store=self._store.name,
            ready=ready,
            reason=reason,
            files_indexed=files,
            chunks=chunks,
            chunks_by_kind=self._store.counts_by_kind(),
            embedded=embedded,
            embedded_fraction=1.0 if chunks == 0 else embedded / chunks,
            dense_model=self.config.embedding.model_name if self.config.embedding.enabled else None,
            dense_unavailable_reason=self._embedder_reason,
            rerank_model=self.config.rerank.model_dir if self._reranker is not None else None,
            rerank_unavailable_reason=self._reranker_reason,
            last_update=last_update,
            last_report=report,
        )

    # -- adapters -----------------------------------------------------------------------------

    def _query_embedder(self) -> DenseEmbedder | None:
        """The dense model remembering recent query vectors (the same question under several filters),
        loaded by the first search that uses it; None when embedding is off or the model failed to load."""
        if not self.config.embedding.enabled or (self._embedder_tried and self._embedder is None):
            return None
        if self._remembered is None:
            self._remembered = RememberedQueries(self._required_embedder)
        return self._remembered

    def _required_embedder(self) -> DenseEmbedder:
        model = self.dense_embedder()
        if model is None:
            raise EmbeddingUnavailable(self._embedder_reason or "the dense model is not available")
        return model

    def dense_embedder(self) -> DenseEmbedder | None:
        """The dense model, loaded on first use; None (with ``status().dense_unavailable_reason``) if it cannot."""
        if not self._embedder_tried:
            self._embedder_tried = True
            if not self.config.embedding.enabled:
                self._embedder_reason = "embedding.enabled is false"
            else:
                # numpy, tokenizers and onnxruntime load only with the model: `ided status` needs none of them
                from daemon.index.embedder import OnnxEmbedder

                try:
                    self._embedder = OnnxEmbedder.from_config(self.config.embedding, default_cache_root())
                except EmbeddingUnavailable as exc:
                    self._embedder_reason = str(exc)
                    logger.warning("dense embeddings unavailable, search is lexical only: %s", exc)
        return self._embedder

    def _format_meta(self) -> dict[str, str]:
        return {
            "index_format": INDEX_FORMAT,
            "sparse_encoder": self._sparse.name,
            "dense_model": self.config.embedding.model_name,
        }

    def _check_format(self) -> None:
        """A different encoder or model makes old vectors meaningless: start over, loudly."""
        want = self._format_meta()
        have = {key: self._manifest.get_meta(key) for key in want}
        if all(v is None for v in have.values()):
            self._manifest.set_meta({**want, "secret_rules": RULES_VERSION})
            return
        if have != want:
            logger.warning("index format changed (%s -> %s): rebuilding the index", have, want)
            self.rebuild()
        if self._manifest.get_meta("secret_rules") != RULES_VERSION:
            # files indexed under other secret rules are read again; a secret among them is removed
            self._manifest.forget_stats()
            self._manifest.set_meta({"secret_rules": RULES_VERSION})
