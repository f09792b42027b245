"""Positions between ided (1-based, code points) and LSP (0-based, UTF-16), and reading files for servers."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.errors import InvalidToolInput
from daemon.intel.lsp.documents import from_lsp_character, read_text, to_lsp_character

LINE = 'label = "naïve 🐍 café"; total = 1'


def test_columns_count_code_points_while_lsp_counts_utf16_units() -> None:
    snake = LINE.index("🐍") + 1
    after_snake = snake + 1
    assert to_lsp_character(LINE, snake) == snake - 1
    assert to_lsp_character(LINE, after_snake) == after_snake  # the emoji is two UTF-16 units
    assert from_lsp_character(LINE, to_lsp_character(LINE, after_snake)) == after_snake


@pytest.mark.parametrize("column", range(1, len(LINE) + 2))
def test_position_conversion_round_trips_on_every_column(column: int) -> None:
    assert from_lsp_character(LINE, to_lsp_character(LINE, column)) == column


def test_ascii_lines_convert_without_arithmetic_surprises() -> None:
    assert to_lsp_character("def f(): pass", 5) == 4
    assert from_lsp_character("def f(): pass", 4) == 5
    assert from_lsp_character("short", 99) == 6


def test_reading_a_binary_file_is_refused_with_its_name(tmp_path: Path) -> None:
    blob = tmp_path / "image.py"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    with pytest.raises(InvalidToolInput, match=r"'image.py' is binary"):
        read_text(blob, display="image.py")


def test_reading_an_oversized_file_is_refused_with_its_size(tmp_path: Path) -> None:
    big = tmp_path / "generated.py"
    big.write_text("x = 1\n" * 100)
    with pytest.raises(InvalidToolInput, match="over the 100-byte limit"):
        read_text(big, display="generated.py", max_bytes=100)


def test_undecodable_bytes_are_replaced_not_fatal(tmp_path: Path) -> None:
    latin = tmp_path / "legacy.py"
    latin.write_bytes(b"name = 'caf\xe9'\n")
    assert read_text(latin) == "name = 'caf\ufffd'\n"
