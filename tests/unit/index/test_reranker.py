"""load_reranker: off by default, and every way a model directory can be unusable gives a clear reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.config import RerankConfig
from daemon.index.model_files import TOKENIZER_FILES, bundled_model_dir
from daemon.index.reranker import load_reranker


@pytest.fixture(scope="module")
def embedding_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bundled_model_dir(tmp_path_factory.mktemp("cache"))


def test_rerank_is_off_by_default_with_its_reason() -> None:
    assert load_reranker(RerankConfig()) == (None, "rerank.model_dir not set")


def test_a_model_dir_that_does_not_exist_is_named(tmp_path: Path) -> None:
    reranker, reason = load_reranker(RerankConfig(model_dir=str(tmp_path / "nope")))
    assert reranker is None
    assert reason == f"rerank.model_dir {tmp_path / 'nope'} is not a directory"


def test_a_model_dir_missing_files_names_them(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text("{}")
    reranker, reason = load_reranker(RerankConfig(model_dir=str(tmp_path)))
    assert reranker is None
    assert reason is not None
    assert "lacks model.onnx, tokenizer_config.json" in reason


def test_a_corrupt_onnx_file_gives_a_load_failure_reason(tmp_path: Path, embedding_model_dir: Path) -> None:
    for name in TOKENIZER_FILES:
        (tmp_path / name).write_bytes((embedding_model_dir / name).read_bytes())
    (tmp_path / "model.onnx").write_bytes(b"\x00not a protobuf")
    reranker, reason = load_reranker(RerankConfig(model_dir=str(tmp_path)))
    assert reranker is None
    assert reason is not None
    assert reason.startswith(f"cannot load cross-encoder from {tmp_path}: ")


@pytest.mark.slow
def test_an_embedding_model_is_refused_as_a_cross_encoder(embedding_model_dir: Path) -> None:
    reranker, reason = load_reranker(RerankConfig(model_dir=str(embedding_model_dir)), threads=1)
    assert reranker is None
    assert reason is not None
    assert "is not a cross-encoder" in reason
