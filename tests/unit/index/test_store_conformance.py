"""Conformance of the VectorStore adapters on real engines: Qdrant Edge, qdrant-client local mode, and
qdrant-client against a real Qdrant server on loopback (built by scripts/build-qdrant-server.sh; the
server cases skip, saying so, when it was not built).

The corpus is 30 hand-made chunks in 10 files. Sparse vectors are built by hand: token 1 is in
every chunk, token 500+f in every chunk of file f, token 1000+i only in chunk i. Dense vectors
are standard basis vectors (chunk i -> e_i), so every ranking below is known in advance.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from daemon.config import Config, QdrantConfig
from daemon.core.models import Chunk, ChunkKind, SearchFilters, SymbolKind, chunk_point_id
from daemon.core.ports import ScoredChunk, SparseVector, StoredPoint, StoreQuery, VectorStore
from daemon.errors import StoreError
from daemon.index._store_base import PointStoreBase
from daemon.index.store_factory import collection_name, open_store
from tests.conftest import qdrant_settings
from tests.qdrant_server_support import BUILD_SCRIPT, drop_collections, qdrant_binary, running_qdrant

DIM = 32
MODEL = "test/basis-32"
FILES: list[tuple[str, ChunkKind, str]] = [
    ("src/app/a.py", ChunkKind.CODE, "python"),
    ("src/app/b.py", ChunkKind.CODE, "python"),
    ("src/lib/c.py", ChunkKind.CODE, "python"),
    ("src/lib/d_test.py", ChunkKind.CODE, "python"),
    ("cmd/main.go", ChunkKind.CODE, "go"),
    ("cmd/util_test.go", ChunkKind.CODE, "go"),
    ("web/view.ts", ChunkKind.CODE, "typescript"),
    ("docs/guide.md", ChunkKind.DOCS, "markdown"),
    ("docs/api.md", ChunkKind.DOCS, "markdown"),
    ("README.md", ChunkKind.DOCS, "markdown"),
]
PER_FILE = 3
N = len(FILES) * PER_FILE

OpenStore = Callable[..., VectorStore]


def make_chunk(i: int) -> Chunk:
    path, kind, language = FILES[i // PER_FILE]
    symbol = SymbolKind.FUNCTION if kind is ChunkKind.CODE else SymbolKind.SECTION
    return Chunk(
        path=path,
        kind=kind,
        symbol_kind=symbol,
        language=language,
        text=f"body of chunk {i}\nuses token_{i}",
        start_line=1 + 10 * (i % PER_FILE),
        end_line=9 + 10 * (i % PER_FILE),
        name=f"item_{i}",
        qualified_name=f"Mod.item_{i}",
    )


def basis(i: int, weight: float = 1.0) -> list[float]:
    vec = [0.0] * DIM
    vec[i] = weight
    return vec


def point(i: int, *, dense: bool = False, rare_weight: float = 1.0, chunk: Chunk | None = None) -> StoredPoint:
    chunk = chunk or make_chunk(i)
    sparse = SparseVector(indices=[1, 500 + i // PER_FILE, 1000 + i], values=[1.0, 1.0, rare_weight])
    return StoredPoint(
        id=chunk_point_id(chunk.path, i, chunk.chunk_hash),
        chunk=chunk,
        sparse=sparse,
        dense=basis(i) if dense else None,
    )


def pid(i: int) -> str:
    return point(i).id


def lexical(*tokens: int) -> SparseVector:
    return SparseVector(indices=list(tokens), values=[1.0] * len(tokens))


def store_config(request: pytest.FixtureRequest, mode: str, workspace: Path, state: Path) -> Config:
    """The Config of one workspace whose index lives in ``mode`` (edge, local or server)."""
    qdrant = QdrantConfig.model_validate(qdrant_settings(request, mode))
    return Config(workspace=str(workspace), state_dir=str(state), qdrant=qdrant)


@pytest.fixture(params=["edge", "local", "server"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenStore]:
    """Opens the store of one workspace state dir through ``open_store``; closes what it opened."""
    opened: list[VectorStore] = []
    config = store_config(request, str(request.param), tmp_path, tmp_path / "state")

    def _open(*, dim: int = DIM, model: str = MODEL) -> VectorStore:
        store = open_store(config, dense_dim=dim, dense_model=model)
        opened.append(store)
        return store

    yield _open
    for store in opened:
        store.close()
    drop_collections(config)


@pytest.fixture
def store(opener: OpenStore) -> VectorStore:
    s = opener()
    s.upsert([point(i) for i in range(N)])
    return s


def ranked_ids(hits: list[ScoredChunk]) -> list[str]:
    return [h.id for h in hits]


# -- writes ---------------------------------------------------------------------------------------


def test_upserting_the_same_points_twice_keeps_one_copy_of_each(store: VectorStore) -> None:
    store.upsert([point(i) for i in range(N)])
    assert store.count() == N
    assert sum(store.counts_by_path().values()) == N


def test_upsert_replaces_a_point_so_writing_it_without_dense_drops_the_old_vector(store: VectorStore) -> None:
    store.upsert([point(0, dense=True)])
    assert store.count(embedded_only=True) == 1
    store.upsert([point(0)])
    assert store.count(embedded_only=True) == 0
    assert store.count() == N


def test_a_chunk_rewritten_under_the_same_id_reads_back_as_rewritten_after_it_was_read(store: VectorStore) -> None:
    before = store.query(StoreQuery(sparse=lexical(1004), limit=3, prefetch_limit=3))
    assert before[0].chunk == make_chunk(4)
    moved = make_chunk(4).model_copy(update={"start_line": 101, "end_line": 109, "name": "renamed"})
    assert point(4, chunk=moved).id == pid(4)  # the lines and the name are not in the id
    store.upsert([point(4, chunk=moved)])
    after = store.query(StoreQuery(sparse=lexical(1004), limit=3, prefetch_limit=3))
    assert after[0].id == pid(4) and after[0].chunk == moved
    store.set_dense({pid(4): basis(4)})
    fused = store.query(StoreQuery(sparse=lexical(1004), dense=basis(4), limit=3, prefetch_limit=3))
    assert fused[0].chunk == moved


def test_delete_paths_removes_every_chunk_of_those_files_and_ignores_unknown_paths(store: VectorStore) -> None:
    store.delete_paths(["src/app/a.py", "docs/api.md", "no/such/file.py"])
    counts = store.counts_by_path()
    assert "src/app/a.py" not in counts and "docs/api.md" not in counts
    assert store.count() == N - 2 * PER_FILE
    hits = store.query(StoreQuery(sparse=lexical(1000), limit=5, prefetch_limit=10))
    assert pid(0) not in ranked_ids(hits)


# -- dense lifecycle ------------------------------------------------------------------------------


def test_points_start_without_dense_and_set_dense_moves_them_out_of_missing(store: VectorStore) -> None:
    assert store.count(embedded_only=True) == 0
    assert len(store.missing_dense(100)) == N
    assert len(store.missing_dense(5)) == 5
    store.set_dense({pid(i): basis(i) for i in (0, 1, 2)})
    assert store.count(embedded_only=True) == 3
    missing = {point_id for point_id, _ in store.missing_dense(100)}
    assert len(missing) == N - 3 and not missing & {pid(0), pid(1), pid(2)}


def test_missing_dense_restricted_to_paths_returns_only_chunks_of_those_paths(store: VectorStore) -> None:
    store.set_dense({pid(12): basis(12)})
    batch = store.missing_dense(100, ["cmd/util_test.go", "cmd/main.go"])
    assert sorted(point_id for point_id, _ in batch) == sorted(pid(i) for i in (13, 14, 15, 16, 17))
    assert {chunk.path for _, chunk in batch} == {"cmd/util_test.go", "cmd/main.go"}
    assert store.missing_dense(100, []) == []


def test_set_dense_skips_ids_that_no_longer_exist(store: VectorStore) -> None:
    store.delete_paths(["src/app/a.py"])
    store.set_dense({pid(0): basis(0), pid(3): basis(3)})
    assert store.count() == N - PER_FILE
    assert store.count(embedded_only=True) == 1


def test_dense_by_hash_returns_the_stored_vectors_of_embedded_chunks_of_the_paths(store: VectorStore) -> None:
    store.set_dense({pid(i): basis(i, 1.0) for i in (3, 4, 6)})
    got = store.dense_by_hash(["src/app/b.py", "src/lib/c.py"])
    assert set(got) == {make_chunk(i).chunk_hash for i in (3, 4, 6)}
    assert got[make_chunk(4).chunk_hash] == pytest.approx(basis(4))
    assert store.dense_by_hash([]) == {}


# -- queries --------------------------------------------------------------------------------------


def test_lexical_query_ranks_the_chunk_with_the_rare_token_first(store: VectorStore) -> None:
    hits = store.query(StoreQuery(sparse=lexical(1017), limit=5, prefetch_limit=20))
    assert hits[0].id == pid(17) and hits[0].chunk == make_chunk(17)
    assert hits[0].sources == ("lexical",)


def test_lexical_scores_apply_idf_so_a_rare_token_beats_a_frequent_one(opener: OpenStore) -> None:
    s = opener()
    s.upsert([point(i) for i in range(N)])
    heavy = point(5)  # token 1 (in all 30 chunks) five times as heavy: wins without IDF
    s.upsert([StoredPoint(id=heavy.id, chunk=heavy.chunk, sparse=SparseVector([1, 1005], [5.0, 0.01]))])
    hits = s.query(StoreQuery(sparse=lexical(1, 1020), limit=3, prefetch_limit=10))
    assert hits[0].id == pid(20)


def test_dense_query_ranks_the_nearest_embedded_chunk_first(store: VectorStore) -> None:
    store.set_dense({pid(i): basis(i) for i in range(N)})
    hits = store.query(StoreQuery(dense=basis(11), limit=3, prefetch_limit=10))
    assert hits[0].id == pid(11) and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert hits[0].sources == ("dense",)


def test_hybrid_query_fuses_with_rrf_and_says_which_rankers_found_each_hit(store: VectorStore) -> None:
    store.set_dense({pid(i): basis(i) for i in range(N)})
    store.upsert([point(7, dense=True, rare_weight=3.0)])  # lexical alone ranks 7 above 8
    dense = [0.0] * DIM
    dense[8], dense[9] = 2 / math.sqrt(5), 1 / math.sqrt(5)  # dense alone: 8, then 9
    lex_only = store.query(StoreQuery(sparse=lexical(1007, 1008), limit=2, prefetch_limit=10))
    assert ranked_ids(lex_only) == [pid(7), pid(8)]
    hits = store.query(StoreQuery(sparse=lexical(1007, 1008), dense=dense, limit=3, prefetch_limit=10))
    by_id = {h.id: h for h in hits}
    assert hits[0].id == pid(8)  # second lexically, first densely: 1/61 + 1/60 beats 1/60 + at most 1/62
    assert hits[0].sources == ("lexical", "dense")
    assert hits[0].score == pytest.approx(1 / 61 + 1 / 60)
    assert by_id[pid(9)].sources == ("dense",)


def test_hybrid_query_still_finds_chunks_that_have_no_dense_vector_yet(store: VectorStore) -> None:
    store.set_dense({pid(i): basis(i) for i in range(10)})
    hits = store.query(StoreQuery(sparse=lexical(1025), dense=basis(3), limit=5, prefetch_limit=10))
    assert pid(25) in ranked_ids(hits)
    assert next(h for h in hits if h.id == pid(25)).sources == ("lexical",)


def test_query_without_any_usable_vector_returns_nothing(store: VectorStore) -> None:
    assert store.query(StoreQuery(limit=5, prefetch_limit=10)) == []
    assert store.query(StoreQuery(sparse=lexical(), limit=5, prefetch_limit=10)) == []


@pytest.mark.parametrize(
    ("filters", "expected_paths"),
    [
        (SearchFilters(kind=ChunkKind.DOCS), {"docs/guide.md", "docs/api.md", "README.md"}),
        (SearchFilters(language="go"), {"cmd/main.go", "cmd/util_test.go"}),
        (SearchFilters(path_glob="src/app/a.py"), {"src/app/a.py"}),
        (SearchFilters(path_glob="src/*"), {"src/app/a.py", "src/app/b.py", "src/lib/c.py", "src/lib/d_test.py"}),
        (SearchFilters(path_glob="*_test.*"), {"src/lib/d_test.py", "cmd/util_test.go"}),
        (SearchFilters(path_glob="src/*_test.py"), {"src/lib/d_test.py"}),
        (SearchFilters(path_glob="*.md", kind=ChunkKind.DOCS), {"docs/guide.md", "docs/api.md", "README.md"}),
        (SearchFilters(path_glob="docs/*", language="python"), set[str]()),
        (SearchFilters(path_glob="nowhere/*.py"), set[str]()),
        (SearchFilters(path_glob="*.rs"), set[str]()),
    ],
)
def test_filters_return_every_matching_chunk_and_nothing_else(
    store: VectorStore, filters: SearchFilters, expected_paths: set[str]
) -> None:
    store.set_dense({pid(i): basis(i) for i in range(N)})
    for sparse, dense in ((lexical(1), None), (None, basis(0)), (lexical(1), basis(0))):
        hits = store.query(StoreQuery(sparse=sparse, dense=dense, filters=filters, limit=N, prefetch_limit=N))
        assert {h.chunk.path for h in hits} == expected_paths
        assert len(hits) == PER_FILE * len(expected_paths)


@pytest.mark.parametrize(
    ("paths", "filters", "expected_paths"),
    [
        (("src/app/a.py", "docs/api.md"), None, {"src/app/a.py", "docs/api.md"}),
        (("src/app/a.py", "docs/api.md"), SearchFilters(kind=ChunkKind.DOCS), {"docs/api.md"}),
        (("src/app/a.py", "src/lib/c.py"), SearchFilters(path_glob="src/lib/*"), {"src/lib/c.py"}),
        (("src/[ab].py",), None, set[str]()),  # exact paths: no glob syntax
        (("nowhere.py",), None, set[str]()),
    ],
)
def test_paths_restrict_every_ranker_to_those_files_within_the_filters(
    store: VectorStore, paths: tuple[str, ...], filters: SearchFilters | None, expected_paths: set[str]
) -> None:
    store.set_dense({pid(i): basis(i) for i in range(N)})
    for sparse, dense in ((lexical(1), None), (None, basis(0)), (lexical(1), basis(0))):
        hits = store.query(
            StoreQuery(sparse=sparse, dense=dense, filters=filters, paths=paths, limit=N, prefetch_limit=N)
        )
        assert {h.chunk.path for h in hits} == expected_paths
        assert len(hits) == PER_FILE * len(expected_paths)


@pytest.mark.parametrize("opener", ["local"], indirect=True)
def test_without_prefix_matching_a_prefix_glob_still_returns_exactly_its_files(store: VectorStore) -> None:
    # what the adapter does on a Qdrant server before 1.19, which has no keyword prefix match
    setattr(store, "_prefix_match", False)  # noqa: B010 - the engine capability the server reports
    store.set_dense({pid(i): basis(i) for i in range(N)})
    cases = {
        "src/*": {"src/app/a.py", "src/app/b.py", "src/lib/c.py", "src/lib/d_test.py"},
        "src/lib/*": {"src/lib/c.py", "src/lib/d_test.py"},
        "nowhere/*": set[str](),
        "*": {path for path, _, _ in FILES},
    }
    for glob, expected in cases.items():
        for sparse, dense in ((lexical(1), None), (None, basis(0)), (lexical(1), basis(0))):
            hits = store.query(
                StoreQuery(sparse=sparse, dense=dense, filters=SearchFilters(path_glob=glob), limit=N, prefetch_limit=N)
            )
            assert {h.chunk.path for h in hits} == expected and len(hits) == PER_FILE * len(expected)


def test_a_selective_glob_finds_its_chunks_even_when_they_rank_last(store: VectorStore) -> None:
    # the code chunks 0..20 outrank every docs chunk; the glob keeps only the docs files
    query = lexical(1, *range(1000, 1021))
    glob = SearchFilters(path_glob="*.m?")
    hits = store.query(StoreQuery(sparse=query, filters=glob, limit=3, prefetch_limit=3))
    assert len(hits) == 3 and all(h.chunk.path.endswith(".md") for h in hits)
    everything = store.query(StoreQuery(sparse=query, filters=glob, limit=N, prefetch_limit=N))
    assert sorted(h.id for h in everything) == sorted(pid(i) for i in range(21, 30))


def test_a_glob_and_the_counts_see_the_files_written_and_deleted_since_they_were_last_asked(store: VectorStore) -> None:
    glob = SearchFilters(path_glob="*_test.*")
    before = store.query(StoreQuery(sparse=lexical(1), filters=glob, limit=N, prefetch_limit=N))
    assert {h.chunk.path for h in before} == {"src/lib/d_test.py", "cmd/util_test.go"}
    assert store.count() == N and store.counts_by_path()["cmd/util_test.go"] == PER_FILE
    added = make_chunk(0).model_copy(update={"path": "web/view_test.ts"})
    store.upsert([point(0, chunk=added)])
    store.delete_paths(["cmd/util_test.go"])
    after = store.query(StoreQuery(sparse=lexical(1), filters=glob, limit=N, prefetch_limit=N))
    assert {h.chunk.path for h in after} == {"src/lib/d_test.py", "web/view_test.ts"}
    assert store.count() == N - PER_FILE + 1 and "cmd/util_test.go" not in store.counts_by_path()


# -- counts, round trip, lifecycle ----------------------------------------------------------------


def test_counts_by_path_and_kind_count_every_point(store: VectorStore) -> None:
    assert store.counts_by_path() == {path: PER_FILE for path, _, _ in FILES}
    assert store.counts_by_kind() == {"code": 21, "docs": 9}


def test_a_chunk_with_every_field_set_round_trips_exactly(opener: OpenStore) -> None:
    s = opener()
    chunk = Chunk(
        path="pkg/ünï cödé/ß.py",
        kind=ChunkKind.CODE,
        symbol_kind=SymbolKind.METHOD,
        language="python",
        text='def f(x):\n    """Ω ≈ 1"""\n    return "\\t" + x  # 🐍\n',
        start_line=3,
        end_line=5,
        name="f",
        qualified_name="Outer.Inner.f",
        signature="def f(x: str) -> str",
        docstring="Ω ≈ 1",
        imports=("os", "typing.Any"),
        part=2,
        parts=3,
    )
    s.upsert([point(0, chunk=chunk)])
    (hit,) = s.query(StoreQuery(sparse=lexical(1000), limit=1, prefetch_limit=1))
    assert hit.chunk == chunk and hit.chunk.chunk_hash == chunk.chunk_hash
    assert s.missing_dense(1) == [(point(0, chunk=chunk).id, chunk)]


def test_close_then_reopen_keeps_points_vectors_and_flags(opener: OpenStore) -> None:
    s = opener()
    s.upsert([point(i) for i in range(N)])
    s.set_dense({pid(i): basis(i) for i in range(0, N, 2)})
    s.flush()
    s.close()
    s.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        s.count()
    again = opener()
    assert again.count() == N and again.count(embedded_only=True) == N // 2
    assert again.counts_by_path() == {path: PER_FILE for path, _, _ in FILES}
    assert again.query(StoreQuery(dense=basis(4), limit=1, prefetch_limit=5))[0].id == pid(4)
    assert again.query(StoreQuery(sparse=lexical(1029), limit=1, prefetch_limit=5))[0].id == pid(29)


def test_reopening_with_another_dense_model_forgets_dense_vectors_but_keeps_points(opener: OpenStore) -> None:
    s = opener()
    s.upsert([point(i, dense=True) for i in range(N)])
    s.close()
    again = opener(model="test/another-model")
    assert again.count() == N and again.count(embedded_only=True) == 0
    assert len(again.missing_dense(100)) == N
    assert again.query(StoreQuery(sparse=lexical(1003), limit=1, prefetch_limit=5))[0].id == pid(3)


def test_copy_into_another_store_carries_every_point_with_its_vectors_and_flag(
    opener: OpenStore, tmp_path: Path
) -> None:
    source = opener()
    source.upsert([point(i) for i in range(N)])
    source.set_dense({pid(i): basis(i) for i in range(0, N, 2)})
    local = QdrantConfig(mode="local")
    target = open_store(
        Config(workspace=str(tmp_path), state_dir=str(tmp_path / "copy"), qdrant=local),
        dense_dim=DIM,
        dense_model=MODEL,
    )
    try:
        assert isinstance(source, PointStoreBase) and isinstance(target, PointStoreBase)
        assert source.copy_into(target) == N
        assert target.count() == N and target.count(embedded_only=True) == N // 2
        assert target.counts_by_path() == source.counts_by_path()
        assert sorted(p for p, _ in target.missing_dense(N)) == sorted(p for p, _ in source.missing_dense(N))
        for sparse, dense in ((lexical(1, 1007), None), (None, basis(4)), (lexical(1004), basis(4))):
            want = source.query(StoreQuery(sparse=sparse, dense=dense, limit=1, prefetch_limit=2))
            got = target.query(StoreQuery(sparse=sparse, dense=dense, limit=1, prefetch_limit=2))
            assert [(h.id, h.chunk) for h in got] == [(h.id, h.chunk) for h in want]  # below the first: ties
            assert got[0].score == pytest.approx(want[0].score, abs=1e-4)
    finally:
        target.close()


def test_engine_failures_surface_as_store_errors_with_the_cause(store: VectorStore) -> None:
    with pytest.raises(StoreError) as info:
        store.query(StoreQuery(dense=[1.0, 0.0], limit=3, prefetch_limit=5))
    assert info.value.cause is not None


@pytest.mark.parametrize("opener", ["edge", "local"], indirect=True)
def test_a_second_open_of_the_same_state_dir_is_refused_while_the_first_is_open(opener: OpenStore) -> None:
    opener()
    with pytest.raises(StoreError, match="another process"):
        opener()


# -- factory --------------------------------------------------------------------------------------


def test_collection_names_differ_between_state_dirs_and_are_stable(tmp_path: Path) -> None:
    def name(state: Path) -> str:
        return collection_name(Config(workspace=str(tmp_path), state_dir=str(state)))

    assert name(tmp_path / "a" / "ws-1") == name(tmp_path / "a" / "ws-1")
    assert name(tmp_path / "a" / "ws-1") != name(tmp_path / "b" / "ws-1")
    assert name(tmp_path / "a" / "w s/ü").replace("-", "").replace("_", "").isalnum()


def test_a_configured_collection_name_is_used_as_is_and_must_be_a_plain_name(tmp_path: Path) -> None:
    named = Config(workspace=str(tmp_path), qdrant=QdrantConfig(collection="acme-api"))
    assert collection_name(named) == "acme-api"
    for bad in ("../elsewhere", "a b", ""):
        with pytest.raises(ValueError, match="collection"):
            QdrantConfig(collection=bad)


def test_server_mode_against_an_unreachable_url_raises_a_store_error(tmp_path: Path) -> None:
    config = Config(workspace=str(tmp_path), qdrant=QdrantConfig(mode="server", url="http://127.0.0.1:9"))
    with pytest.raises(StoreError, match=r"127\.0\.0\.1:9"):
        open_store(config, dense_dim=DIM, dense_model=MODEL)


# -- engine-specific: dimension change, crash safety, damage -------------------------------------


@pytest.mark.parametrize("opener", ["edge"], indirect=True)
def test_edge_reopened_with_another_dimension_recreates_the_dense_slot(opener: OpenStore) -> None:
    s = opener()
    s.upsert([point(i, dense=True) for i in range(N)])
    s.close()
    again = opener(dim=DIM // 2)
    assert again.count() == N and again.count(embedded_only=True) == 0
    again.set_dense({pid(3): basis(3)[: DIM // 2]})
    assert again.query(StoreQuery(dense=basis(3)[: DIM // 2], limit=1, prefetch_limit=5))[0].id == pid(3)


@pytest.mark.parametrize("opener", ["local", "server"], indirect=True)
def test_qdrant_client_store_reopened_with_another_dimension_asks_for_a_rebuild(opener: OpenStore) -> None:
    opener().close()
    with pytest.raises(StoreError, match=r"ided index --rebuild"):
        opener(dim=DIM // 2)


_CHILD = textwrap.dedent(
    """
    import sys
    from daemon.config import Config, QdrantConfig
    from daemon.index.store_factory import open_store
    from tests.unit.index.test_store_conformance import DIM, MODEL, N, basis, pid, point

    state, mode, url = sys.argv[1], sys.argv[2], sys.argv[3]
    qdrant = QdrantConfig(mode="server", url=url) if url else QdrantConfig()
    store = open_store(Config(workspace=state, state_dir=state, qdrant=qdrant), dense_dim=DIM, dense_model=MODEL)
    store.upsert([point(i) for i in range(N)])
    store.flush()
    if mode == "unflushed":
        store.set_dense({pid(i): basis(i) for i in range(0, N, 3)})
        store.delete_paths(["README.md"])
    print("written", flush=True)
    sys.stdin.read()
    """
)


def _write_then_sigkill(state: Path, mode: str, url: str) -> None:
    """A child process writes through its own store, says so, and is SIGKILLed before it closes it."""
    repo = Path(__file__).resolve().parents[3]
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(state), mode, url],
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "written"
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=60) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                stream.close()


def _assert_consistent(store: VectorStore) -> None:
    total, embedded = store.count(), store.count(embedded_only=True)
    assert sum(store.counts_by_path().values()) == total
    assert len(store.missing_dense(10 * N)) == total - embedded
    assert len(store.dense_by_hash(store.counts_by_path())) == embedded


def _server_url(request: pytest.FixtureRequest) -> str:
    """The session server's URL when this test runs on the server store, else ""."""
    mode = str(request.node.callspec.params["opener"])  # pyright: ignore[reportUnknownMemberType]
    return qdrant_settings(request, mode).get("url", "")


@pytest.mark.parametrize("opener", ["edge", "server"], indirect=True)
def test_a_store_reopens_with_flushed_writes_after_the_writer_was_sigkilled(
    opener: OpenStore, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    _write_then_sigkill(tmp_path / "state", "flushed", _server_url(request))
    store = opener()
    assert store.count() == N
    _assert_consistent(store)
    store.upsert([point(0, dense=True)])
    assert store.count(embedded_only=True) == 1


@pytest.mark.parametrize("opener", ["edge", "server"], indirect=True)
def test_a_store_reopens_consistent_after_sigkill_with_unflushed_writes(
    opener: OpenStore, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    _write_then_sigkill(tmp_path / "state", "unflushed", _server_url(request))
    store = opener()
    _assert_consistent(store)
    # the WAL made every acknowledged write durable, flushed or not
    assert store.count() == N - PER_FILE and store.count(embedded_only=True) == N // 3 - 1
    store.delete_paths(["docs/api.md"])
    assert store.count() == N - 2 * PER_FILE


@pytest.mark.parametrize("opener", ["edge"], indirect=True)
def test_a_damaged_edge_shard_fails_to_open_with_its_directory_and_the_rebuild_command(
    opener: OpenStore, tmp_path: Path
) -> None:
    s = opener()
    s.upsert([point(i) for i in range(N)])
    s.close()
    (config_file,) = (tmp_path / "state" / "qdrant-edge").glob("*/edge_config.json")
    config_file.write_text("{not json")
    with pytest.raises(StoreError, match=r"ided index --rebuild") as info:
        opener()
    assert str(config_file.parent) in str(info.value)


# -- a shared server: workspaces apart, clients of one workspace together -------------------------


@pytest.fixture
def server_configs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Config, Config]]:
    """Two workspaces (their own state dirs) that use the same session server."""
    first = store_config(request, "server", tmp_path / "ws-a", tmp_path / "ws-a" / ".state")
    second = store_config(request, "server", tmp_path / "ws-b", tmp_path / "ws-b" / ".state")
    yield first, second
    drop_collections(first)
    drop_collections(second)


def test_two_workspaces_on_one_server_never_see_each_others_points(server_configs: tuple[Config, Config]) -> None:
    first_config, second_config = server_configs
    first = open_store(first_config, dense_dim=DIM, dense_model=MODEL)
    second = open_store(second_config, dense_dim=DIM, dense_model=MODEL)
    try:
        first.upsert([point(i, dense=True) for i in range(N)])
        other = [point(i, chunk=make_chunk(i).model_copy(update={"path": f"other/{i}.py"})) for i in range(5)]
        second.upsert(other)
        assert first.count() == N and second.count() == 5
        assert set(second.counts_by_path()) == {f"other/{i}.py" for i in range(5)}
        assert second.count(embedded_only=True) == 0 and second.dense_by_hash(first.counts_by_path()) == {}
        assert {c.path for _, c in second.missing_dense(100)} == {f"other/{i}.py" for i in range(5)}
        # the same tokens and vectors: each workspace finds only its own chunks
        hits = second.query(StoreQuery(sparse=lexical(1, 1000), dense=basis(0), limit=N, prefetch_limit=N))
        assert {h.chunk.path for h in hits} == {f"other/{i}.py" for i in range(5)}
        second.delete_paths(["src/app/a.py"])  # a path only the first workspace has
        assert first.count() == N
    finally:
        first.close()
        second.close()


def test_clones_that_name_the_same_collection_share_one_index_on_the_server(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    # two machines' clones of one repository: different state dirs, the same qdrant.collection
    settings = {**qdrant_settings(request, "server"), "collection": f"team-{tmp_path.name}"[:200]}
    configs = [
        Config(
            workspace=str(tmp_path / m),
            state_dir=str(tmp_path / m / ".state"),
            qdrant=QdrantConfig.model_validate(settings),
        )
        for m in ("machine-a", "machine-b")
    ]
    writer = open_store(configs[0], dense_dim=DIM, dense_model=MODEL)
    reader = open_store(configs[1], dense_dim=DIM, dense_model=MODEL)
    try:
        writer.upsert([point(i) for i in range(N)])
        assert reader.count() == N
        writer.set_dense({pid(4): basis(4)})
        assert reader.query(StoreQuery(dense=basis(4), limit=1, prefetch_limit=5))[0].id == pid(4)
    finally:
        writer.close()
        reader.close()
        drop_collections(configs[0])


def test_clients_that_open_one_new_collection_at_the_same_time_all_get_it(
    server_configs: tuple[Config, Config],
) -> None:
    config, _ = server_configs
    opened: list[VectorStore] = []
    failures: list[BaseException] = []
    lock = threading.Lock()

    def open_one() -> None:
        try:
            store = open_store(config, dense_dim=DIM, dense_model=MODEL)
        except BaseException as exc:
            failures.append(exc)
            return
        with lock:
            opened.append(store)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert failures == [] and len(opened) == 4
        opened[0].upsert([point(i) for i in range(N)])
        assert all(store.count() == N for store in opened)
    finally:
        for store in opened:
            store.close()


def test_a_server_killed_mid_work_restarts_with_every_acknowledged_write(tmp_path: Path) -> None:
    if os.environ.get("IDED_TEST_QDRANT_URL") or (binary := qdrant_binary()) is None:
        pytest.skip(f"needs a Qdrant server binary of our own to kill: build it with {BUILD_SCRIPT.name}")
    storage = tmp_path / "server"
    with running_qdrant(binary, storage) as server:
        assert server.url is not None and server.pid is not None
        config = Config(workspace=str(tmp_path), qdrant=QdrantConfig(mode="server", url=server.url))
        store = open_store(config, dense_dim=DIM, dense_model=MODEL)
        store.upsert([point(i) for i in range(N)])
        store.set_dense({pid(i): basis(i) for i in range(0, N, 3)})
        store.delete_paths(["README.md"])
        os.kill(server.pid, signal.SIGKILL)  # no flush, no shutdown: only the WAL is left
        with pytest.raises(StoreError):
            store.count()
        store.close()
    with running_qdrant(binary, storage) as again:
        config = Config(workspace=str(tmp_path), qdrant=QdrantConfig(mode="server", url=again.url))
        store = open_store(config, dense_dim=DIM, dense_model=MODEL)
        try:
            _assert_consistent(store)
            assert store.count() == N - PER_FILE and store.count(embedded_only=True) == N // 3 - 1
            assert store.query(StoreQuery(sparse=lexical(1009), limit=1, prefetch_limit=5))[0].id == pid(9)
        finally:
            store.close()
