"""The shared pieces: splitting long texts, signatures, comments, docstrings, and ``chunk_source`` itself."""

from __future__ import annotations

import inspect
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.core.languages import ALL_LANGUAGES
from daemon.core.models import Chunk, ChunkKind, SymbolKind
from daemon.intel.chunking import chunk_source
from daemon.intel.chunking._common import clean_comment, dedent_doc, normalize_signature, split_rows
from tests.unit.intel.chunking_support import FIXTURES


@given(total=st.integers(0, 2_000), max_lines=st.integers(2, 300), header=st.sampled_from([0, 1]))
def test_split_rows_makes_the_fewest_balanced_pieces_that_fit(total: int, max_lines: int, header: int) -> None:
    rows = list(range(total))

    pieces = split_rows(rows, max_lines, header)

    assert [row for piece in pieces for row in piece] == rows
    texts = [len(piece) + (header if index else 0) for index, piece in enumerate(pieces)]
    assert all(size <= max_lines for size in texts)
    if total > max_lines:
        room = max_lines - header
        assert max_lines + (len(pieces) - 2) * room < total  # one piece fewer could not hold it
        assert max(texts) - min(texts) <= 1


def test_signatures_lose_the_padding_of_multi_line_parameter_lists() -> None:
    raw = "def f(\n    a: int,\n    b: list[\n        str\n    ],\n) -> None"

    assert normalize_signature(raw) == "def f(a: int, b: list[str]) -> None"
    assert normalize_signature("func (s *Server) Start()  error") == "func (s *Server) Start() error"


def test_doc_comments_lose_their_markers_in_every_style() -> None:
    assert clean_comment(["/**\n * Adds.\n *\n * @param a first\n */"]) == "Adds.\n\n@param a first"
    assert clean_comment(["/// One.\n", "/// Two."]) == "One.\nTwo."
    assert clean_comment(["// plain", "//! inner"]) == "plain\ninner"
    assert clean_comment(["/* */"]) is None


@pytest.mark.parametrize(
    "text",
    ["  one line  ", "Sum.\n\n    Args:\n        x: y\n    ", "\n    Foo\n      bar\n    ", "x\n\ty\n\t z"],
)
def test_docstring_dedent_matches_inspect_cleandoc(text: str) -> None:
    expected = "\n".join(line.rstrip() for line in inspect.cleandoc(text).split("\n")).strip()

    assert "\n".join(line.rstrip() for line in dedent_doc(text).split("\n")) == expected


@pytest.mark.parametrize("language", sorted(ALL_LANGUAGES))
@pytest.mark.parametrize("source", [b"", b"\n\n  \n\t\n"])
def test_an_empty_or_blank_file_gives_no_chunks(language: str, source: bytes) -> None:
    assert chunk_source("empty.x", source, language) == []


def test_an_unknown_language_id_is_indexed_as_line_windows() -> None:
    chunks = chunk_source("notes.weird", b"alpha\nbeta\n", "klingon")

    assert [(c.symbol_kind, c.kind, c.language, c.text) for c in chunks] == [
        (SymbolKind.WINDOW, ChunkKind.CODE, "klingon", "alpha\nbeta")
    ]


def test_invalid_utf8_never_crashes_and_keeps_line_numbers() -> None:
    source = b"def f():\n    return '\xff\xfe'\n\n\ndef g():\n    return 2\n"

    chunks = chunk_source("bin.py", source, "python")

    assert [(c.qualified_name, c.start_line) for c in chunks] == [("f", 1), ("g", 5)]
    assert "\ufffd" in chunks[0].text


def _chunk_job(job: tuple[str, bytes, str]) -> list[Chunk]:
    return chunk_source(*job)


def test_chunking_from_several_threads_at_once_gives_the_serial_results() -> None:
    jobs = [
        (f"{family}/{path.name}", path.read_bytes(), language)
        for family, language in [("python", "python"), ("go", "go"), ("rust", "rust"), ("java", "java")]
        for path in sorted((FIXTURES / family).iterdir())
    ] * 8
    serial = [chunk_source(*job) for job in jobs]

    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(_chunk_job, jobs))

    assert parallel == serial
