"""OnnxEmbedder over the real bundled MiniLM int8 model: fastembed's vectors, dims, similarity, truncation, order."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from daemon.config import EmbeddingConfig
from daemon.core.languages import language_for_path
from daemon.core.models import Chunk, ChunkKind, SymbolKind
from daemon.errors import EmbeddingUnavailable
from daemon.index.embed_text import compact_text, document_text, whole_text
from daemon.index.embedder import OnnxEmbedder
from daemon.index.fastembed_tokens import limit_tokens
from daemon.index.model_files import bundled_model_dir
from daemon.intel.chunking import chunk_source
from tests.unit.index.chunk_support import python_function

MAX_TOKENS = 32

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bundled_model_dir(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def embedder(model_dir: Path) -> OnnxEmbedder:
    return OnnxEmbedder(model_dir, max_tokens=MAX_TOKENS, batch_size=4, threads=1)


REPO = Path(__file__).resolve().parents[3]
REAL_FILES = (
    "daemon/index/scanner.py",
    "daemon/intel/lsp/client.py",
    "docs/indexing.md",
    "editors/vscode/src/extension.ts",
)


@pytest.fixture(scope="module")
def real_chunks() -> list[Chunk]:
    """Chunks of real files of this repository, as the index makes them (short and past 256 tokens)."""
    chunks: list[Chunk] = []
    for rel in REAL_FILES:
        language = language_for_path(rel)
        assert language is not None, rel
        chunks += chunk_source(rel, (REPO / rel).read_bytes(), language)[:12]
    return chunks


@pytest.fixture(scope="module")
def fastembed_model(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The reference: fastembed's own pipeline over the same directory, as ided used it before."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    key = "ided/all-MiniLM-L6-v2-qint8@reference-384d"
    if key.lower() not in {str(m["model"]).lower() for m in TextEmbedding.list_supported_models()}:
        TextEmbedding.add_custom_model(
            model=key, pooling=PoolingType.MEAN, normalization=True, sources=ModelSource(hf=key), dim=384,
            model_file="model.onnx",
        )  # fmt: skip
    model = TextEmbedding(
        model_name=key,
        cache_dir=str(tmp_path_factory.mktemp("fastembed")),
        specific_model_path=str(model_dir),
        local_files_only=True,
        threads=1,
        enable_cpu_mem_arena=False,
    )
    limit_tokens(model, 256)
    return model


def _fastembed(model: Any, texts: list[str]) -> np.ndarray:
    return np.asarray([np.asarray(v, dtype=np.float32) for t in texts for v in model.embed([t])])


def test_document_vectors_are_fastembeds_on_real_chunks(
    model_dir: Path, real_chunks: list[Chunk], fastembed_model: Any
) -> None:
    ours = OnnxEmbedder(model_dir, batch_size=8, threads=1, load="documents")
    texts = [document_text(c) for c in real_chunks]
    assert len(texts) >= 30 and max(ours.count_tokens_batch(texts)) > 256  # truncation is exercised
    got = np.asarray(ours.embed_documents(real_chunks), dtype=np.float32)
    assert got.shape == (len(texts), 384)
    assert float(np.abs(got - _fastembed(fastembed_model, texts)).max()) < 1e-5


def test_query_vectors_from_the_light_session_are_fastembeds(
    model_dir: Path, real_chunks: list[Chunk], fastembed_model: Any
) -> None:
    ours = OnnxEmbedder(model_dir, threads=1)
    assert ours.sessions == ("query",)  # nothing heavy loaded for a search
    texts = ["how are redirects followed", "x", *[document_text(c) for c in real_chunks[::3]]]
    got = np.asarray([ours.embed_query(t) for t in texts], dtype=np.float32)
    assert ours.sessions == ("query",)
    assert float(np.abs(got - _fastembed(fastembed_model, texts)).max()) < 1e-5


def test_embedding_documents_replaces_the_query_session(model_dir: Path) -> None:
    ours = OnnxEmbedder(model_dir, max_tokens=MAX_TOKENS, threads=1)
    light = ours.embed_query("read a file")
    ours.embed_texts(["def read(path): return open(path).read()"])
    assert ours.sessions == ("documents",)
    assert ours.embed_query("read a file") == pytest.approx(light, abs=1e-5)


def _cos(a: list[float], b: list[float]) -> float:
    return float(np.dot(np.asarray(a), np.asarray(b)))


def test_vectors_have_the_configured_dim_and_unit_length(embedder: OnnxEmbedder) -> None:
    vector = embedder.embed_query("read a configuration file")
    assert embedder.dim == len(vector) == 384
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


def test_related_texts_score_higher_than_unrelated_ones(embedder: OnnxEmbedder) -> None:
    query = embedder.embed_query("parse a JSON configuration file")
    close, far = embedder.embed_texts(
        ["def load_config(path):\n    return json.load(open(path))", "the weather in Paris is sunny today"]
    )
    assert _cos(query, close) > _cos(query, far) + 0.2


def test_text_beyond_max_tokens_does_not_change_the_vector(embedder: OnnxEmbedder) -> None:
    words = [f"item{i}" for i in range(1000)]
    long_text = " ".join(words)
    assert embedder.count_tokens(long_text) > 2000
    # Cut the text where the tokenizer reaches max_tokens (minus [CLS] and [SEP]).
    prefix = ""
    for n in range(1, len(words)):
        candidate = " ".join(words[:n])
        if embedder.count_tokens(candidate) > MAX_TOKENS - 2:
            break
        prefix = candidate
    shorter = " ".join(prefix.split()[:-3])
    v_long, v_prefix, v_shorter = embedder.embed_texts([long_text, prefix, shorter])
    assert _cos(v_long, v_prefix) > 0.9999
    assert _cos(v_long, v_shorter) < 0.999  # within the window every token still counts


def test_max_tokens_is_configurable_per_embedder(model_dir: Path, embedder: OnnxEmbedder) -> None:
    wider = OnnxEmbedder(model_dir, max_tokens=128, threads=1)
    text = " ".join(f"item{i}" for i in range(60))  # beyond 32 tokens, well within the model's 512
    tail_changed = text + " completely different ending about databases"
    assert _cos(*embedder.embed_texts([text, tail_changed])) > 0.9999
    a, b = wider.embed_texts([" ".join(text.split()[:20]), " ".join(text.split()[:40])])
    assert _cos(a, b) < 0.999


def test_a_texts_vector_does_not_depend_on_the_texts_embedded_with_it(embedder: OnnxEmbedder) -> None:
    # The graph quantizes activations per run: texts run together would move each other's vectors.
    texts = ["x " * n + f"text number {n}" for n in (30, 1, 12, 5, 22, 3, 9, 17, 2)]
    batched = embedder.embed_texts(texts)  # batches of 4 (the fixture's batch_size)
    assert batched == [embedder.embed_texts([t])[0] for t in texts]  # bit for bit, in input order
    assert batched == [embedder.embed_query(t) for t in texts]  # a query's vector is its document vector
    assert embedder.embed_texts(list(reversed(texts))) == list(reversed(batched))


def test_documents_are_embedded_from_their_document_text(embedder: OnnxEmbedder) -> None:
    chunk = python_function("def add(a, b):\n    return a + b\n", "add", docstring="Sum two numbers.")
    (vector,) = embedder.embed_documents([chunk])
    assert _cos(vector, embedder.embed_query(document_text(chunk))) > 0.9999


def test_empty_input_gives_no_vectors(embedder: OnnxEmbedder) -> None:
    assert embedder.embed_documents([]) == []


def test_token_count_uses_the_model_tokenizer_without_truncation(embedder: OnnxEmbedder) -> None:
    assert embedder.count_tokens("hello world") == 2
    assert embedder.count_tokens("getHTTPResponse") > 1  # word pieces
    assert embedder.count_tokens(" ".join(["hello"] * 600)) == 600
    assert embedder.count_tokens_batch(["hello world", "hello"]) == [2, 1]


def test_a_wrong_dim_is_refused_with_the_actual_dim(model_dir: Path) -> None:
    with pytest.raises(EmbeddingUnavailable, match=r"outputs 384 dimensions, but embedding\.dim is 256"):
        OnnxEmbedder(model_dir, dim=256, threads=1)


def test_a_broken_model_file_raises_embedding_unavailable_with_its_cause(tmp_path: Path, model_dir: Path) -> None:
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
        (tmp_path / name).write_bytes((model_dir / name).read_bytes())
    (tmp_path / "model.onnx").write_bytes(b"not an onnx model")
    with pytest.raises(EmbeddingUnavailable, match="cannot load dense model") as info:
        OnnxEmbedder(tmp_path, threads=1)
    assert info.value.cause is not None


def test_from_config_loads_the_bundled_model(tmp_path: Path) -> None:
    config = EmbeddingConfig(max_tokens=64, batch_size=8, threads=1)
    embedder = OnnxEmbedder.from_config(config, tmp_path)
    assert embedder.name == config.model_name
    assert embedder.max_tokens == 64
    assert embedder.model_dir == tmp_path / "models" / "all-MiniLM-L6-v2-qint8"
    assert len(embedder.embed_query("hello")) == 384


def test_from_config_refuses_when_disabled(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingUnavailable, match="disabled"):
        OnnxEmbedder.from_config(EmbeddingConfig(enabled=False), tmp_path)


def test_whole_text_leads_with_path_and_name_and_keeps_the_body() -> None:
    chunk = python_function("def load(path):\n    return read(path)\n", "load", docstring="Load a file.")
    text = whole_text(chunk)
    assert text.startswith("pkg/load.py\nload\nLoad a file.\ndef load(path):")
    assert text.endswith("return read(path)\n")


def test_compact_text_has_name_words_signature_docstring_and_body_identifiers() -> None:
    chunk = python_function(
        "def loadUserConfig(path):\n    data = read_json_file(path)\n    return data\n",
        "loadUserConfig",
        docstring="Load the user's settings.",
    )
    lines = compact_text(chunk).splitlines()
    assert lines[0] == "load user config"
    assert lines[1] == "def loadUserConfig(path):"
    assert lines[2] == "Load the user's settings."
    assert lines[3] == "data read json file"  # 'path' is in the signature, 'return' is a keyword


def test_docs_sections_embed_their_heading_path_and_text_in_either_variant() -> None:
    section = Chunk(
        path="docs/guide.md",
        kind=ChunkKind.DOCS,
        symbol_kind=SymbolKind.SECTION,
        language="markdown",
        text="## Install\n\nRun the installer twice.\n",
        start_line=1,
        end_line=3,
        qualified_name="Guide > Install",
    )
    assert (
        compact_text(section)
        == whole_text(section)
        == "docs/guide.md\nGuide > Install\n## Install\n\nRun the installer twice.\n"
    )


def _session_arena(embedder: OnnxEmbedder) -> bool:
    embedder.embed_texts(["load the documents session"])
    session = cast(Any, embedder)._sessions["documents"]
    return bool(session.get_session_options().enable_cpu_mem_arena)


def test_the_memory_arena_is_on_unless_configured_off(model_dir: Path, embedder: OnnxEmbedder) -> None:
    assert _session_arena(embedder) is True  # the default: it grows to one text of max_tokens
    returned = OnnxEmbedder(model_dir, max_tokens=MAX_TOKENS, batch_size=4, threads=1, memory_arena=False)
    assert _session_arena(returned) is False
    assert returned.embed_query("read a file") == pytest.approx(embedder.embed_query("read a file"), abs=1e-5)


def test_each_text_runs_alone_at_its_own_length(model_dir: Path) -> None:
    texts = [f"def handler_{i}(request):\n    return {'x' * (i * 7)!r} + request.path\n" for i in range(9)]
    ours = OnnxEmbedder(model_dir, max_tokens=MAX_TOKENS, batch_size=9, threads=1)
    runs: list[tuple[int, ...]] = []
    session = cast(Any, ours)._session("documents")
    original = session.run

    def counted(outputs: Any, feed: dict[str, Any]) -> Any:
        runs.append(tuple(feed["input_ids"].shape))
        return original(outputs, feed)

    session.run = counted
    ours.embed_texts(texts)
    lengths = [min(n + 2, MAX_TOKENS) for n in ours.count_tokens_batch(texts)]  # [CLS] ... [SEP]
    assert runs == [(1, n) for n in lengths]  # one run per text, no padding
    assert len(set(lengths)) > 1
