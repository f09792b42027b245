"""Free text from a command line (a query, a run's request, review feedback) is read as text even
when its bytes are not UTF-8."""

from __future__ import annotations

import os

from daemon.cli.context import readable_text


def test_bytes_that_are_not_utf8_become_one_replacement_character_each() -> None:
    argv = os.fsdecode(b"merge_setting \xff\xfe caf\xc3\xa9")  # as Python hands argv over (PEP 383)
    assert readable_text(argv) == "merge_setting \ufffd\ufffd café"
    readable_text(argv).encode("utf-8")  # any encoder (JSON, pydantic) takes it now


def test_a_surrogate_that_stands_for_no_byte_is_replaced_too() -> None:
    assert readable_text("a\ud800b") == "a\ufffd\ufffd\ufffdb"


def test_text_that_is_already_utf8_is_unchanged() -> None:
    text = "Traceback: ValueError in `QuerySet.bulk_create` — 日本語 ✓"
    assert readable_text(text) == text
