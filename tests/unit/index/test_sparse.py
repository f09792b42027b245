"""CodeBm25Encoder: code-aware tokens, stable ids, BM25 term-frequency weights."""

from __future__ import annotations

import subprocess
import sys

import pytest

from daemon.core.models import Chunk, ChunkKind, SymbolKind
from daemon.index import sparse
from daemon.index.sparse import (
    CodeBm25Encoder,
    blake2b_term_id,
    mmh3_term_id,
    split_identifier,
)


@pytest.fixture(scope="module")
def encoder() -> CodeBm25Encoder:
    return CodeBm25Encoder()


def _chunk(text: str, *, name: str | None = None, path: str = "pkg/mod.py") -> Chunk:
    return Chunk(
        path=path,
        kind=ChunkKind.CODE,
        symbol_kind=SymbolKind.FUNCTION,
        language="python",
        text=text,
        start_line=1,
        end_line=max(1, text.count("\n") + 1),
        name=name,
        qualified_name=name,
    )


def _weights(encoder: CodeBm25Encoder, chunk: Chunk) -> dict[int, float]:
    vector = encoder.encode_document(chunk)
    return dict(zip(vector.indices, vector.values, strict=True))


@pytest.mark.parametrize(
    ("identifier", "parts"),
    [
        ("getHTTPResponse", ["get", "http", "response"]),
        ("parse_file_v2", ["parse", "file", "v2"]),
        ("XMLHttpRequest", ["xml", "http", "request"]),
        ("HTTP2Server", ["http2", "server"]),
        ("x86_64", ["x86", "64"]),
        ("utf8Decode", ["utf8", "decode"]),
        ("MAX_SIZE", ["max", "size"]),
        ("__init__", ["init"]),
    ],
)
def test_identifiers_split_at_case_underscore_and_digit_boundaries(identifier: str, parts: list[str]) -> None:
    assert split_identifier(identifier) == parts


def test_camel_case_identifier_is_kept_whole_and_split_into_stemmed_subwords(encoder: CodeBm25Encoder) -> None:
    assert encoder.tokenize("getHTTPResponse") == ["gethttpresponse", "get", "http", "respons"]


def test_snake_case_identifier_is_kept_whole_unstemmed(encoder: CodeBm25Encoder) -> None:
    assert encoder.tokenize("parse_file_v2") == ["parse_file_v2", "pars", "file", "v2"]


def test_prose_drops_stop_words_and_punctuation_and_stems(encoder: CodeBm25Encoder) -> None:
    assert encoder.tokenize("The parsing of files, is done (by the parser)!") == ["pars", "file", "done", "parser"]


def test_stop_words_inside_identifiers_are_kept(encoder: CodeBm25Encoder) -> None:
    assert encoder.tokenize("is_valid") == ["is_valid", "is", "valid"]


def test_single_character_tokens_are_dropped(encoder: CodeBm25Encoder) -> None:
    assert encoder.tokenize("x = y + i") == []


def test_query_words_meet_identifier_subwords(encoder: CodeBm25Encoder) -> None:
    query = set(encoder.encode_query("parsing files").indices)
    document = set(encoder.encode_document(_chunk("def parse_file(p):\n    pass\n")).indices)
    assert query <= document


def test_non_ascii_words_are_kept_lowercased(encoder: CodeBm25Encoder) -> None:
    assert encoder.tokenize("Café naïve") == ["café", "naïve"]


def test_term_ids_are_pinned_31_bit_hashes() -> None:
    # Hard-coded: a change here silently invalidates every stored sparse vector.
    assert mmh3_term_id("parse") == 1353244412
    assert mmh3_term_id("gethttpresponse") == 512039896
    assert blake2b_term_id("parse") == 701153990
    assert blake2b_term_id("gethttpresponse") == 921057735
    assert all(0 <= mmh3_term_id(t) < 2**31 for t in ("a", "zz", "été", "x" * 100))


def test_term_ids_are_the_same_in_a_fresh_process(encoder: CodeBm25Encoder) -> None:
    code = (
        "from daemon.index.sparse import CodeBm25Encoder; "
        "print(CodeBm25Encoder().encode_query('getHTTPResponse').indices)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == str(encoder.encode_query("getHTTPResponse").indices)


def test_encoder_name_records_stemmer_and_hash(encoder: CodeBm25Encoder) -> None:
    assert encoder.name == "code-bm25-v1+snowball-en+mmh3"
    assert CodeBm25Encoder(stem=False).name == "code-bm25-v1+nostem+mmh3"


def test_query_vector_weighs_each_unique_token_once(encoder: CodeBm25Encoder) -> None:
    vector = encoder.encode_query("parse parse parse config")
    assert len(vector.indices) == 2
    assert vector.values == [1.0, 1.0]
    assert vector.indices == sorted(set(vector.indices))


def test_repeated_terms_saturate(encoder: CodeBm25Encoder) -> None:
    pid = encoder.term_id("pars")

    def weight(times: int) -> float:  # same document length, more repeats of "parse"
        words = ["parse"] * times + [f"word{i}" for i in range(40 - times)]
        return _weights(encoder, _chunk(" ".join(words), path="a.py"))[pid]

    w = [weight(t) for t in (1, 2, 3, 4, 16)]
    assert w[0] < w[1] < w[2] < w[3] < w[4] < 2.2  # grows, bounded by k1 + 1
    assert w[1] - w[0] > w[2] - w[1] > w[3] - w[2]  # each repeat adds less
    assert w[4] < 4 * w[0]


def test_longer_documents_weigh_a_term_less(encoder: CodeBm25Encoder) -> None:
    pid = encoder.term_id("pars")
    short = _weights(encoder, _chunk("parse tokens quickly", path="a.py"))[pid]
    long = _weights(encoder, _chunk("parse " + " ".join(f"word{i}" for i in range(400)), path="a.py"))[pid]
    assert long < short


def test_name_and_path_tokens_weigh_more_than_body_tokens(encoder: CodeBm25Encoder) -> None:
    chunk = _chunk("def load_config(path):\n    return render(path)\n", name="load_config", path="app/settings.py")
    weights = _weights(encoder, chunk)
    assert weights[encoder.term_id("load_config")] > weights[encoder.term_id("render")]
    assert weights[encoder.term_id("set")] > weights[encoder.term_id("render")]  # "settings" from the path


def test_document_vector_ids_are_unique_and_sorted(encoder: CodeBm25Encoder) -> None:
    vector = encoder.encode_document(_chunk("def a_b(a_b):\n    return a_b + a_b\n", name="a_b"))
    assert vector.indices == sorted(set(vector.indices))
    assert all(v > 0 for v in vector.values)


def test_empty_text_gives_empty_query_vector(encoder: CodeBm25Encoder) -> None:
    vector = encoder.encode_query("  ... ,,, ")
    assert vector.indices == []
    assert vector.values == []


def test_each_chunk_gets_its_own_path_tokens_when_paths_alternate(encoder: CodeBm25Encoder) -> None:
    first = _weights(encoder, _chunk("return value", path="alpha/loader.py"))
    second = _weights(encoder, _chunk("return value", path="beta/writer.py"))
    assert encoder.term_id("alpha") in first
    assert encoder.term_id("alpha") not in second
    assert encoder.term_id("beta") in second


def test_vectors_are_unchanged_when_the_term_cache_overflows(monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = [
        _chunk(f"def handler_{i}(requestBody):\n    return parse_{i}(requestBody)", name=f"handler_{i}")
        for i in range(30)
    ]
    expected = [CodeBm25Encoder().encode_document(c) for c in chunks]
    monkeypatch.setattr(sparse, "_CACHE_LIMIT", 5)
    small = CodeBm25Encoder()
    assert [small.encode_document(c) for c in chunks] == expected
    assert [small.encode_document(c) for c in chunks] == expected
    assert len(small._ids_cache) < 40  # cleared on the way, not grown without bound
