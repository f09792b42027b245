from __future__ import annotations

from pathlib import Path

from daemon.errors import DaemonError, ErrorCode, IndexingError

DOCS = Path(__file__).parents[2] / "docs" / "errors.md"


def test_every_error_code_has_a_section_in_the_error_docs() -> None:
    headings = {line[3:].strip() for line in DOCS.read_text().splitlines() if line.startswith("## ")}
    assert {code.value for code in ErrorCode} <= headings


def test_an_error_names_its_cause_and_links_its_docs_section() -> None:
    err = IndexingError("pass failed", cause=OSError("disk full"))
    assert str(err) == "pass failed (caused by OSError: disk full) [see docs/errors.md#indexing_failed]"
    assert isinstance(err, DaemonError)
