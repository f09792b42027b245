"""The whole index end to end: real scanner, grammars, BM25, embedding model and Qdrant store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from daemon.core.models import ChunkKind, SearchFilters, SearchMode, SkipReason
from daemon.index.model_files import bundled_model_dir
from daemon.index.reranker import load_reranker
from daemon.index.workspace_index import WorkspaceIndex
from tests.conftest import qdrant_settings
from tests.integration.conftest import make_config
from tests.model_shapes import minilm_shaped_cross_encoder


@pytest.fixture(params=["edge", "local", "server"])
def store_settings(request: pytest.FixtureRequest) -> dict[str, str]:
    """The qdrant config section: Edge, qdrant-client local mode, or the session's real Qdrant server."""
    return qdrant_settings(request, str(request.param))


def test_index_then_search_finds_code_by_identifier_and_by_meaning(
    polyglot: Path, tmp_path: Path, store_settings: dict[str, str]
) -> None:
    config = make_config(polyglot, tmp_path / "state", qdrant=dict(store_settings))
    with WorkspaceIndex.open(config) as ws:
        report = ws.index()
        assert report.files_indexed == 4
        assert ws.embed() > 0
        by_name = ws.search("retry_with_backoff", k=3, mode=SearchMode.LEXICAL)
        assert by_name.hits[0].chunk.qualified_name == "retry_with_backoff"
        by_meaning = ws.search("try again after waiting longer each time it fails", k=3)
        assert by_meaning.mode is SearchMode.HYBRID
        assert by_meaning.hits[0].chunk.qualified_name == "retry_with_backoff"
        docs = ws.search("linux installation", k=2, filters=SearchFilters(kind=ChunkKind.DOCS))
        assert docs.hits[0].chunk.qualified_name == "Guide > Install > Linux"
        ts = ws.search("add product to cart", k=5, filters=SearchFilters(language="typescript"))
        assert ts.hits and all(h.chunk.language == "typescript" for h in ts.hits)
        assert ts.hits[0].chunk.qualified_name == "ShoppingCart.addItem"
        status = ws.status()
        assert status.ready and status.embedded_fraction == 1.0
        assert status.files_indexed == 4


def test_every_bad_input_is_a_counted_skip_not_a_crash(polyglot: Path, tmp_path: Path) -> None:
    (polyglot / "latin1.py").write_bytes("name = 'caf\xe9'\n".encode("latin-1"))
    (polyglot / "blob.py").write_bytes(b"\x00\x01\x02binary" * 100)
    with (polyglot / "huge.py").open("wb") as fh:
        fh.truncate(50 * 1024 * 1024)  # 50 MB (sparse file)
    (polyglot / ".env").write_text("API_KEY=hunter2\n")
    (polyglot / "loop.py").symlink_to(polyglot / "loop.py")
    (polyglot / "outside.py").symlink_to(Path(sys.executable))
    config = make_config(polyglot, tmp_path / "state", embedding={"enabled": False})
    with WorkspaceIndex.open(config) as ws:
        report = ws.index()
        assert report.skipped[SkipReason.NOT_UTF8] == 1
        assert report.skipped[SkipReason.BINARY] == 1
        assert report.skipped[SkipReason.TOO_LARGE] == 1
        assert report.skipped[SkipReason.SECRET] == 1
        assert report.skipped[SkipReason.SYMLINK_LOOP] == 1
        assert report.skipped[SkipReason.SYMLINK_OUTSIDE] == 1
        assert report.files_indexed == 4
        assert not ws.search("hunter2", k=5, mode=SearchMode.LEXICAL).hits
        status = ws.status()
        assert status.ready
        assert status.dense_unavailable_reason is None or "enabled is false" in status.dense_unavailable_reason


def test_reindex_touches_only_what_changed_and_reembeds_only_changed_chunks(polyglot: Path, tmp_path: Path) -> None:
    config = make_config(polyglot, tmp_path / "state")
    with WorkspaceIndex.open(config) as ws:
        ws.index()
        ws.embed()
        unchanged = ws.index()
        assert (unchanged.files_indexed, unchanged.files_unchanged, unchanged.chunks_written) == (0, 4, 0)

        geometry = polyglot / "src" / "geometry.py"
        geometry.write_text(geometry.read_text() + "\n\ndef cube_volume(side: float) -> float:\n    return side**3\n")
        edited = ws.index()
        assert edited.files_indexed == 1
        assert ws.pending_embeddings() == 1  # only the new function; the file's other chunks keep their vectors
        ws.embed()

        (polyglot / "src" / "retry.py").rename(polyglot / "src" / "backoff.py")
        (polyglot / "web" / "cart.ts").unlink()
        moved = ws.index()
        assert moved.files_removed == 2
        assert moved.files_indexed == 1
        hit = ws.search("retry_with_backoff", k=1, mode=SearchMode.LEXICAL).hits[0]
        assert hit.chunk.path == "src/backoff.py"
        assert not ws.search(
            "ShoppingCart", k=5, mode=SearchMode.LEXICAL, filters=SearchFilters(language="typescript")
        ).hits
        assert ws.search("cube_volume", k=1, mode=SearchMode.LEXICAL).hits[0].chunk.name == "cube_volume"


def test_update_paths_reindexes_one_saved_file_without_a_scan(polyglot: Path, tmp_path: Path) -> None:
    config = make_config(polyglot, tmp_path / "state", embedding={"enabled": False})
    with WorkspaceIndex.open(config) as ws:
        ws.index()
        (polyglot / "src" / "fresh.py").write_text("def brand_new_helper():\n    return 42\n")
        report = ws.update_paths(["src/fresh.py"])
        assert report.files_indexed == 1
        assert ws.search("brand_new_helper", k=1, mode=SearchMode.LEXICAL).hits[0].chunk.path == "src/fresh.py"
        (polyglot / "src" / "fresh.py").unlink()
        assert ws.update_paths(["src/fresh.py"]).files_removed == 1
        remaining = ws.search("brand_new_helper", k=10, mode=SearchMode.LEXICAL).hits
        assert all(h.chunk.path != "src/fresh.py" for h in remaining)


def test_a_directory_event_stands_for_its_whole_subtree(polyglot: Path, tmp_path: Path) -> None:
    # A branch switch or `cp -r` can reach the watcher as one event for a new directory alone.
    config = make_config(polyglot, tmp_path / "state", embedding={"enabled": False})
    with WorkspaceIndex.open(config) as ws:
        ws.index()
        before = ws.status().files_indexed
        pkg = polyglot / "gen" / "pkg"
        pkg.mkdir(parents=True)
        for i in range(3):
            (pkg / f"mod_{i}.py").write_text(f"def generated_in_dir_{i}():\n    return {i}\n")
        (polyglot / "gen" / ".gitignore").write_text("skipped/\n")
        (polyglot / "gen" / "skipped").mkdir()
        (polyglot / "gen" / "skipped" / "hidden.py").write_text("def must_not_be_indexed():\n    pass\n")
        report = ws.update_paths(["gen"])
        assert report.files_indexed == 4  # the three modules and gen/.gitignore, as a full scan would
        assert report.skipped[SkipReason.IGNORED] == 1
        assert ws.status().files_indexed == before + 4
        hit = ws.search("generated_in_dir_2", k=1, mode=SearchMode.LEXICAL).hits[0]
        assert hit.chunk.path == "gen/pkg/mod_2.py"
        assert not ws.search("must_not_be_indexed", k=5, mode=SearchMode.LEXICAL).hits
        assert ws.update_paths(["gen"]).files_unchanged == 4  # nothing re-read when nothing changed
        (pkg / "mod_0.py").unlink()
        assert ws.update_paths(["gen/pkg"]).files_removed == 1
        (polyglot / "gen").rename(tmp_path / "moved-away")  # one event for the directory, none per file
        assert ws.update_paths(["gen"]).files_removed == 3
        assert ws.status().files_indexed == before
        assert not ws.search("generated_in_dir_2", k=5, mode=SearchMode.LEXICAL).hits


def test_a_second_process_on_the_same_workspace_gets_a_clear_error(polyglot: Path, tmp_path: Path) -> None:
    from daemon.errors import ErrorCode, WorkspaceBusy

    config = make_config(polyglot, tmp_path / "state", embedding={"enabled": False})
    with WorkspaceIndex.open(config, holder="ided index"), pytest.raises(WorkspaceBusy) as caught:
        WorkspaceIndex.open(config)
    assert caught.value.code is ErrorCode.WORKSPACE_BUSY
    assert caught.value.holder == "ided index"
    assert "wait for it to finish" in str(caught.value)  # not "`ided stop`", which stops only a daemon


_KILL_MID_INDEX = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    import daemon.index.indexer as indexer
    from daemon.config import load_config
    from daemon.index.workspace_index import WorkspaceIndex

    ws_root, state = Path(sys.argv[1]), Path(sys.argv[2])
    config = load_config(ws_root, env={"HOME": str(state)}, overrides={"state_dir": str(state),
                         "embedding": {"enabled": False}})
    indexer._FLUSH_EVERY_FILES = 100  # commit a few batches before the kill
    def progress(phase, done, total):
        if phase == "parse" and done >= 150:
            os.kill(os.getpid(), signal.SIGKILL)
    with WorkspaceIndex.open(config) as ws:
        ws.index(progress)
    """
)


def test_a_pass_killed_midway_is_repaired_without_duplicates_or_a_full_rebuild(tmp_path: Path) -> None:
    root = tmp_path / "many"
    for i in range(400):
        pkg = root / f"pkg{i % 10}"
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / f"mod{i}.py").write_text(f"def function_{i}(x):\n    return x + {i}\n\n\nclass Thing{i}:\n    pass\n")
    state = tmp_path / "state"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    proc = subprocess.run(
        [sys.executable, "-c", _KILL_MID_INDEX, str(root), str(state)], env=env, timeout=120, check=False
    )
    assert proc.returncode == -9
    config = make_config(root, state, embedding={"enabled": False})
    with WorkspaceIndex.open(config) as ws:
        report = ws.index()
        assert report.files_unchanged + report.files_indexed == 400
        assert report.files_unchanged >= 100  # what was committed before the kill is not redone
        status = ws.status()
        assert status.files_indexed == 400
        assert status.chunks == 800  # one function + one class per file, no duplicates
        hits = ws.search("function_123", k=3, mode=SearchMode.LEXICAL).hits
        assert [h.chunk.name for h in hits].count("function_123") == 1


_SEARCH_BEFORE_AND_AFTER_VECTORS = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from daemon.config import load_config
    from daemon.index.workspace_index import WorkspaceIndex

    ws_root, state = Path(sys.argv[1]), Path(sys.argv[2])
    config = load_config(ws_root, env={"HOME": str(state / "home")}, overrides={"state_dir": str(state)})
    out = {}
    with WorkspaceIndex.open(config) as ws:
        ws.index()
        before = ws.search("try again after waiting longer each time it fails", k=3)
        out["before"] = [before.mode.value, list(before.notes), "onnxruntime" in sys.modules]
        ws.embed()
        after = ws.search("try again after waiting longer each time it fails", k=3)
        out["after"] = [after.mode.value, after.hits[0].chunk.qualified_name]
    print(json.dumps(out))
    """
)


@pytest.mark.slow
def test_a_search_before_the_vectors_ranks_lexically_without_loading_the_query_model(
    polyglot: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    proc = subprocess.run(
        [sys.executable, "-c", _SEARCH_BEFORE_AND_AFTER_VECTORS, str(polyglot), str(tmp_path / "state")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    mode, notes, model_loaded = out["before"]
    assert mode == "lexical" and any("no dense vectors" in n for n in notes)
    assert not model_loaded  # onnxruntime stays out of the process until a search can use a vector
    assert out["after"] == ["hybrid", "retry_with_backoff"]


@pytest.mark.slow
def test_a_cross_encoder_reorders_the_hybrid_top_by_its_own_scores(polyglot: Path, tmp_path: Path) -> None:
    model_dir = minilm_shaped_cross_encoder(bundled_model_dir(tmp_path / "models"), tmp_path / "cross-encoder")
    config = make_config(polyglot, tmp_path / "state", rerank={"model_dir": str(model_dir), "top_n": 6})
    reranker, reason = load_reranker(config.rerank, threads=1)
    assert reason is None and reranker is not None
    with WorkspaceIndex.open(config) as ws:
        ws.index()
        ws.embed()
        status = ws.status()
        assert status.rerank_model == str(model_dir) and status.rerank_unavailable_reason is None
        query = "try again after waiting longer each time it fails"
        result = ws.search(query, k=6)
    assert result.reranked and len(result.hits) == 6
    assert all("rerank" in h.sources for h in result.hits)
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)
    # each score is the model's own for that chunk's text, computed here by a separate instance
    assert scores == pytest.approx(reranker.score(query, [h.chunk.text for h in result.hits]), abs=1e-5)
