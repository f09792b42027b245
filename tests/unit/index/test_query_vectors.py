"""RememberedQueries over the real bundled model: the same vectors, computed once, a bounded memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.index.embedder import OnnxEmbedder
from daemon.index.model_files import bundled_model_dir
from daemon.index.query_vectors import RememberedQueries

pytestmark = pytest.mark.slow


class _Counted:
    """The real model, counting the queries it embeds."""

    def __init__(self, model: OnnxEmbedder) -> None:
        self.model = model
        self.queries: list[str] = []
        self.name = model.name
        self.dim = model.dim

    def embed_documents(self, chunks: object) -> list[list[float]]:
        raise AssertionError("not asked here")

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return self.model.embed_query(text)


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> OnnxEmbedder:
    directory: Path = bundled_model_dir(tmp_path_factory.mktemp("cache"))
    return OnnxEmbedder(directory, max_tokens=32, batch_size=4, threads=1)


def test_a_remembered_query_vector_is_the_models_own_and_is_computed_once(model: OnnxEmbedder) -> None:
    counted = _Counted(model)
    remembered = RememberedQueries(lambda: counted, size=2)  # type: ignore[arg-type,return-value]
    first = remembered.embed_query("apply a discount to the order total")
    again = remembered.embed_query("apply a discount to the order total")
    assert first == again == model.embed_query("apply a discount to the order total")
    assert counted.queries == ["apply a discount to the order total"]
    again[0] += 1.0  # a caller changing its copy changes nothing remembered
    assert remembered.embed_query("apply a discount to the order total") == first
    assert (remembered.name, remembered.dim) == (model.name, model.dim)


def test_the_memory_keeps_the_most_recent_queries_only(model: OnnxEmbedder) -> None:
    counted = _Counted(model)
    remembered = RememberedQueries(lambda: counted, size=2)  # type: ignore[arg-type,return-value]
    for text in ("one query", "two query", "one query", "three query", "one query", "two query"):
        remembered.embed_query(text)
    # "two" was the least recently used when "three" came in, so it was embedded again at the end
    assert counted.queries == ["one query", "two query", "three query", "two query"]
