"""load_reranker: off by default, and every way a model directory can be unusable gives a clear reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from daemon.config import RerankConfig
from daemon.index.model_files import TOKENIZER_FILES, bundled_model_dir
from daemon.index.reranker import load_reranker
from tests.model_shapes import minilm_shaped_cross_encoder


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


@pytest.fixture(scope="module")
def cross_encoder_dir(embedding_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return minilm_shaped_cross_encoder(embedding_model_dir, tmp_path_factory.mktemp("cross-encoder"))


def _onnx_runtime_logits(model_dir: Path, query: str, passages: list[str], max_tokens: int) -> list[float]:
    """The model's logits for each pair, computed here with the tokenizer and onnxruntime directly."""
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tokenizer: Any = Tokenizer.from_file(str(model_dir / "tokenizer.json"))  # truncation kwargs are untyped
    tokenizer.enable_truncation(max_length=max_tokens)
    session: Any = ort.InferenceSession(str(model_dir / "model.onnx"), providers=["CPUExecutionProvider"])
    logits: list[float] = []
    for passage in passages:
        encoding = tokenizer.encode(query, passage)
        feed = {
            "input_ids": np.array([encoding.ids], dtype=np.int64),
            "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
        }
        outputs: list[Any] = session.run(["logits"], feed)
        logits.append(float(outputs[0][0][0]))
    return logits


@pytest.mark.slow
def test_a_cross_encoder_gives_each_pair_the_models_own_logit(cross_encoder_dir: Path) -> None:
    reranker, reason = load_reranker(RerankConfig(model_dir=str(cross_encoder_dir), max_tokens=64), threads=1)
    assert reason is None and reranker is not None
    assert reranker.name == f"cross-encoder:{cross_encoder_dir.name}"
    query = "load the configuration file"
    passages = [
        "def load_config(path):\n    return toml.loads(Path(path).read_text())",
        "class Cart:\n    def total(self):\n        return sum(i.price for i in self.items)",
        "# Install\n\nRun `./dev demo` to index this repository. " * 20,  # longer than 64 tokens
    ]
    scores = reranker.score(query, passages)
    assert scores == pytest.approx(_onnx_runtime_logits(cross_encoder_dir, query, passages, 64), abs=1e-5)
    assert reranker.score(query, []) == []


@pytest.mark.slow
def test_max_tokens_cuts_the_passage_and_keeps_the_query(cross_encoder_dir: Path) -> None:
    reranker, _ = load_reranker(RerankConfig(model_dir=str(cross_encoder_dir), max_tokens=32), threads=1)
    assert reranker is not None
    head = "def load_config(path): return toml.loads(Path(path).read_text()) and more words to fill"
    tails = [" " + "alpha beta gamma " * 20, " " + "delta epsilon zeta " * 20]
    first, second = reranker.score("load the configuration file", [head + tails[0], head + tails[1]])
    assert first == second  # both passages are cut before their tails differ
    other = reranker.score("sum the prices in the cart", [head + tails[0]])[0]
    assert other != first  # the query is read whole
