"""Fusion's vectors come from the index where it has them: near duplicates compare stored vectors."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from daemon.core.models import Chunk, SearchMode
from daemon.index.embedder import OnnxEmbedder
from daemon.index.workspace_index import WorkspaceIndex
from daemon.retrieval.vectors import EmbedderVectors, IndexVectors
from tests.integration.conftest import make_config


class CountingEmbedder:
    """The real model, counting which chunks it was asked to embed."""

    def __init__(self, model: OnnxEmbedder) -> None:
        self.model = model
        self.embedded: list[str] = []

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def dim(self) -> int:
        return self.model.dim

    def embed_documents(self, chunks: Sequence[Chunk]) -> list[list[float]]:
        self.embedded.extend(c.path for c in chunks)
        return self.model.embed_documents(chunks)

    def embed_query(self, text: str) -> list[float]:
        return self.model.embed_query(text)


def test_stored_vectors_are_used_and_only_chunks_not_embedded_yet_are_embedded(tmp_path: Path) -> None:
    ws_root = tmp_path / "ws"
    ws_root.mkdir()
    for name in ("first", "second"):
        (ws_root / f"{name}.py").write_text(f"def {name}_total(values):\n    return sum(values) * 2\n")
    config = make_config(ws_root, tmp_path / "state")
    with WorkspaceIndex.open(config) as ws:
        ws.index()
        assert ws.embed(limit=1) == 1  # one chunk embedded, the other not yet
        chunks = [h.chunk for h in ws.search("total values", k=5, mode=SearchMode.LEXICAL).hits]
        assert {c.path for c in chunks} == {"first.py", "second.py"}
        stored = ws.dense_by_hash(["first.py", "second.py"])
        assert len(stored) == 1
        embedder = ws.dense_embedder()
        assert isinstance(embedder, OnnxEmbedder)
        counting = CountingEmbedder(embedder)
        vectors = IndexVectors(ws.dense_by_hash, EmbedderVectors(counting)).vectors(chunks)
        assert set(vectors) == {c.chunk_hash for c in chunks}
        ((stored_hash, stored_vector),) = stored.items()
        assert vectors[stored_hash] == stored_vector
        assert len(counting.embedded) == 1 and counting.embedded[0] != next(
            c.path for c in chunks if c.chunk_hash == stored_hash
        )
        fresh = next(c for c in chunks if c.chunk_hash != stored_hash)
        assert vectors[fresh.chunk_hash] == embedder.embed_documents([fresh])[0]
