"""reStructuredText sections found from title adornments."""

from __future__ import annotations

from daemon.core.models import ChunkKind, SymbolKind
from daemon.intel.chunking import chunk_source
from tests.unit.intel.chunking_support import chunk_fixture


def test_titles_with_over_and_underlines_give_levels_in_order_of_first_use() -> None:
    chunks = chunk_fixture("rst", "manual.rst", "rst")

    found = [(c.name, c.qualified_name, c.start_line, c.end_line) for c in chunks]

    assert found == [
        ("manual", "pkg/manual", 1, 1),
        ("Manual", "Manual", 3, 7),
        ("Getting started", "Manual > Getting started", 9, 15),
        ("Configuration", "Manual > Getting started > Configuration", 17, 23),
        ("Advanced", "Manual > Getting started > Configuration > Advanced", 25, 28),
        ("Usage", "Manual > Usage", 30, 33),
        ("Über uns", "Manual > Über uns", 35, 38),
    ]
    assert {(c.kind, c.symbol_kind, c.language) for c in chunks} == {(ChunkKind.DOCS, SymbolKind.SECTION, "rst")}


def test_underlined_lines_inside_literal_blocks_and_directives_are_not_titles() -> None:
    chunks = {c.qualified_name: c for c in chunk_fixture("rst", "manual.rst", "rst")}

    assert "    Not a title\n    -----------" in chunks["Manual > Getting started"].text
    assert "    [section]\n    ==========" in chunks["Manual > Getting started > Configuration"].text


def test_short_adornments_and_transitions_do_not_open_sections() -> None:
    source = b"Intro\n\nA long title here\n==\n\nText.\n\n----------\n\nMore.\n"

    chunks = chunk_source("t.rst", source, "rst")

    assert [(c.qualified_name, c.start_line, c.end_line) for c in chunks] == [("t", 1, 10)]


def test_wide_characters_count_double_against_the_underline() -> None:
    source = "前言\n====\n\n内容。\n".encode()

    chunks = chunk_source("zh.rst", source, "rst")

    assert [(c.name, c.start_line, c.end_line) for c in chunks] == [("前言", 1, 4)]
