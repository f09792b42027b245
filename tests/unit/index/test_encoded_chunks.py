"""EncodedChunks: what the parsing workers hand to the store writer, written by both real stores."""

from __future__ import annotations

import pickle  # noqa: TID251 - what multiprocessing does to a worker's answer, checked
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from daemon.config import Config, QdrantConfig
from daemon.core.models import Chunk, ChunkKind, SymbolKind, chunk_point_id
from daemon.core.ports import ScoredChunk, StoredPoint, StoreQuery, VectorStore
from daemon.index._payload import CHUNK_HASH, EMBEDDED, EMBEDDED_NO, chunk_from_payload, chunk_to_payload
from daemon.index.encoded_chunks import EncodedChunks, EncodedChunkWriter, write_encoded
from daemon.index.file_worker import encode_chunks
from daemon.index.sparse import CodeBm25Encoder
from daemon.index.store_factory import open_store
from tests.conftest import qdrant_settings
from tests.qdrant_server_support import drop_collections

DIM = 8


def _chunks(path: str) -> list[Chunk]:
    return [
        Chunk(
            path=path,
            kind=ChunkKind.CODE,
            symbol_kind=SymbolKind.METHOD,
            language="python",
            text="def parse_header(self, raw):\n    return decode_frame(raw)",
            start_line=3,
            end_line=4,
            name="parse_header",
            qualified_name="Reader.parse_header",
            signature="def parse_header(self, raw)",
            docstring="Parse one header.",
            imports=("os", "struct", "zlib"),
            part=2,
            parts=3,
        ),
        Chunk(
            path=path,
            kind=ChunkKind.CODE,
            symbol_kind=SymbolKind.FUNCTION,
            language="python",
            text="def checksum(data):\n    return zlib.crc32(data)",
            start_line=8,
            end_line=9,
            name="checksum",
        ),
    ]


class _PlainStore:
    """A real store seen only through the VectorStore protocol (no upsert_encoded)."""

    def __init__(self, inner: VectorStore) -> None:
        self._inner = inner

    @property
    def name(self) -> str:
        return self._inner.name

    def upsert(self, points: Sequence[StoredPoint]) -> None:
        self._inner.upsert(points)

    def delete_paths(self, paths: Iterable[str]) -> None:
        self._inner.delete_paths(paths)

    def dense_by_hash(self, paths: Iterable[str]) -> dict[str, list[float]]:
        return self._inner.dense_by_hash(paths)

    def set_dense(self, vectors: Mapping[str, list[float]]) -> None:
        self._inner.set_dense(vectors)

    def missing_dense(self, limit: int, paths: Sequence[str] | None = None) -> list[tuple[str, Chunk]]:
        return self._inner.missing_dense(limit, paths)

    def query(self, request: StoreQuery) -> list[ScoredChunk]:
        return self._inner.query(request)

    def count(self, *, embedded_only: bool = False) -> int:
        return self._inner.count(embedded_only=embedded_only)

    def counts_by_path(self) -> dict[str, int]:
        return self._inner.counts_by_path()

    def counts_by_kind(self) -> dict[str, int]:
        return self._inner.counts_by_kind()

    def flush(self) -> None:
        self._inner.flush()

    def close(self) -> None:
        self._inner.close()


@pytest.fixture(params=["edge", "local", "server"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    qdrant = QdrantConfig.model_validate(qdrant_settings(request, str(request.param)))
    config = Config(workspace=str(tmp_path), state_dir=str(tmp_path / "state"), qdrant=qdrant)
    opened = open_store(config, dense_dim=DIM, dense_model="test/dim-8")
    yield opened
    opened.close()
    drop_collections(config)


def _query_all(store: VectorStore, token: str) -> list[Chunk]:
    vector = CodeBm25Encoder().encode_query(token)
    return [h.chunk for h in store.query(StoreQuery(sparse=vector, limit=10, prefetch_limit=10))]


def test_encode_chunks_gives_the_point_ids_vectors_and_json_of_each_chunk() -> None:
    chunks = _chunks("pkg/reader.py")
    encoded = encode_chunks("pkg/reader.py", chunks)
    encoder = CodeBm25Encoder()
    assert len(encoded) == 2
    assert list(encoded.ids) == [chunk_point_id("pkg/reader.py", i, c.chunk_hash) for i, c in enumerate(chunks)]
    assert list(encoded.hashes) == [c.chunk_hash for c in chunks]
    assert [Chunk.model_validate_json(j) for j in encoded.chunk_json] == chunks
    for i, chunk in enumerate(chunks):
        expected = encoder.encode_document(chunk)
        assert (encoded.sparse_indices[i], encoded.sparse_values[i]) == (expected.indices, expected.values)


def test_encoded_chunks_survive_pickling_between_processes_unchanged() -> None:
    encoded = encode_chunks("pkg/reader.py", _chunks("pkg/reader.py"))
    assert pickle.loads(pickle.dumps(encoded)) == encoded


def test_both_stores_write_encoded_chunks_directly_and_read_back_the_same_chunks(store: VectorStore) -> None:
    chunks = _chunks("pkg/reader.py")
    assert isinstance(store, EncodedChunkWriter)
    write_encoded(store, [encode_chunks("pkg/reader.py", chunks)], {})
    assert store.counts_by_path() == {"pkg/reader.py": 2}
    assert _query_all(store, "checksum") == [chunks[1]]
    assert _query_all(store, "parse header")[0] == chunks[0]
    assert sorted(c.start_line for _, c in store.missing_dense(10)) == [3, 8]


def test_a_store_without_the_fast_path_gets_the_same_points_as_stored_points(store: VectorStore) -> None:
    chunks = _chunks("pkg/reader.py")
    plain = _PlainStore(store)
    assert not isinstance(plain, EncodedChunkWriter)
    write_encoded(plain, [encode_chunks("pkg/reader.py", chunks)], {chunks[1].chunk_hash: [1.0] + [0.0] * (DIM - 1)})
    assert store.counts_by_path() == {"pkg/reader.py": 2}
    assert _query_all(store, "checksum") == [chunks[1]]
    assert store.count(embedded_only=True) == 1


def test_a_reused_dense_vector_is_written_with_its_chunk_and_flags_it_embedded(store: VectorStore) -> None:
    chunks = _chunks("pkg/reader.py")
    vector = [0.0, 1.0] + [0.0] * (DIM - 2)
    write_encoded(store, [encode_chunks("pkg/reader.py", chunks)], {chunks[0].chunk_hash: vector})
    assert store.count(embedded_only=True) == 1
    assert [c for _, c in store.missing_dense(10)] == [chunks[1]]
    assert store.dense_by_hash(["pkg/reader.py"]) == {chunks[0].chunk_hash: pytest.approx(vector)}


def test_the_payload_holds_filter_fields_and_the_chunk_as_one_json_string() -> None:
    chunk = _chunks("pkg/reader.py")[0]
    payload = chunk_to_payload(chunk, embedded=False)
    assert set(payload) == {"path", "kind", "language", "chunk_hash", "embedded", "chunk"}
    assert isinstance(payload["chunk"], str)
    assert chunk_from_payload(payload) == chunk


def test_a_payload_in_the_earlier_one_key_per_field_layout_is_still_read() -> None:
    chunk = _chunks("pkg/reader.py")[0]
    legacy = chunk.model_dump(mode="json") | {CHUNK_HASH: chunk.chunk_hash, EMBEDDED: EMBEDDED_NO}
    assert chunk_from_payload(legacy) == chunk


def test_empty_encoded_chunks_write_nothing(store: VectorStore) -> None:
    empty = EncodedChunks(
        path="empty.py",
        ids=(),
        hashes=(),
        kinds=(),
        languages=(),
        chunk_json=(),
        sparse_indices=(),
        sparse_values=(),
    )
    write_encoded(store, [empty], {})
    assert store.count() == 0
