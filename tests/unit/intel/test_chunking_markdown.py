"""Markdown heading sections with the real tree-sitter-markdown grammar."""

from __future__ import annotations

from daemon.core.models import ChunkKind, SymbolKind
from daemon.intel.chunking import chunk_source
from tests.unit.intel.chunking_support import assert_well_formed, chunk_fixture


def test_each_heading_opens_a_section_named_by_its_heading_path() -> None:
    chunks = chunk_fixture("markdown", "guide.md", "markdown")

    found = [(c.name, c.qualified_name, c.start_line, c.end_line) for c in chunks]

    assert found == [
        ("guide", "pkg/guide", 1, 3),
        ("Guide", "Guide", 5, 12),
        ("Install", "Guide > Install", 14, 21),
        ("Linux", "Guide > Install > Linux", 23, 26),
        ("Café & Ünïcode 中文", "Guide > Install > Café & Ünïcode 中文", 28, 30),
        ("Setext Title", "Setext Title", 32, 35),
        ("Setext Sub", "Setext Title > Setext Sub", 37, 42),
        ("Last `code` section", "Setext Title > Last `code` section", 44, 46),
    ]
    assert {(c.kind, c.symbol_kind, c.language) for c in chunks} == {(ChunkKind.DOCS, SymbolKind.SECTION, "markdown")}


def test_hash_lines_inside_code_blocks_and_quotes_are_section_content() -> None:
    chunks = {c.qualified_name: c for c in chunk_fixture("markdown", "guide.md", "markdown")}

    assert "# this is a shell comment, not a heading" in chunks["Guide"].text
    assert "# also not a heading" in chunks["Guide > Install"].text
    assert "# indented code, not a heading" in chunks["Guide > Install > Linux"].text
    assert "> # quoted, not a section" in chunks["Setext Title > Setext Sub"].text


def test_a_section_runs_from_its_heading_to_before_the_next_heading_of_any_level() -> None:
    chunks = {c.qualified_name: c for c in chunk_fixture("markdown", "guide.md", "markdown")}

    assert chunks["Guide"].text.startswith("# Guide\n\nWelcome")
    assert chunks["Guide"].text.endswith("```")
    assert chunks["Setext Title"].text == "Setext Title\n============\n\nUnder the setext title."


def test_a_long_section_is_split_and_later_parts_repeat_the_heading() -> None:
    body = "".join(f"Line {i} of the section.\n" for i in range(120))
    source = f"# Top\n\n## Long\n{body}".encode()

    chunks = chunk_source("long.md", source, "markdown", max_chunk_lines=50)

    assert_well_formed(chunks, source, max_chunk_lines=50)
    long_parts = [c for c in chunks if c.qualified_name == "Top > Long"]
    assert [c.part for c in long_parts] == [1, 2, 3]
    assert long_parts[1].text.startswith("## Long (part 2/3)\nLine ")
    assert long_parts[-1].end_line == 123


def test_a_document_without_headings_is_one_chunk_named_after_the_file() -> None:
    chunks = chunk_source("docs/notes.md", b"Just some text.\n\nMore text.\n", "markdown")

    assert [(c.name, c.qualified_name, c.start_line, c.end_line) for c in chunks] == [("notes", "docs/notes", 1, 3)]
