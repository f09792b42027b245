"""Line windows for unstructured files."""

from __future__ import annotations

import pytest

from daemon.core.models import ChunkKind, SymbolKind
from daemon.intel.chunking import chunk_source
from daemon.intel.chunking.text import text_kind
from tests.unit.intel.chunking_support import assert_well_formed, fixture_bytes


def test_text_is_cut_into_windows_that_overlap_by_five_lines() -> None:
    source = "".join(f"line {i}\n" for i in range(1, 131)).encode()

    chunks = chunk_source("notes.txt", source, "text", text_window_lines=60)

    assert_well_formed(chunks, source)
    assert [(c.start_line, c.end_line, c.part, c.parts) for c in chunks] == [
        (1, 60, 1, 3),
        (56, 115, 2, 3),
        (111, 130, 3, 3),
    ]
    assert {(c.kind, c.symbol_kind, c.name, c.qualified_name) for c in chunks} == {
        (ChunkKind.DOCS, SymbolKind.WINDOW, "notes", "notes")
    }


def test_windows_trim_blank_edges_and_skip_blank_stretches() -> None:
    source = b"\n\nfirst\n" + b"\n" * 100 + b"last\n"

    chunks = chunk_source("gap.txt", source, "text", text_window_lines=20)

    assert [(c.start_line, c.end_line, c.text) for c in chunks] == [(3, 3, "first"), (104, 104, "last")]


def test_config_files_are_code_windows() -> None:
    source = fixture_bytes("text", "config.toml")

    chunks = chunk_source("pyproject.toml", source, "text")

    assert [(c.kind, c.start_line, c.end_line) for c in chunks] == [(ChunkKind.CODE, 1, 6)]
    assert chunks[0].text == source.decode().rstrip("\n")


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("README", ChunkKind.DOCS),
        ("docs/CHANGELOG.txt", ChunkKind.DOCS),
        ("notes.adoc", ChunkKind.DOCS),
        ("requirements-dev.txt", ChunkKind.CODE),
        ("CMakeLists.txt", ChunkKind.CODE),
        ("Dockerfile", ChunkKind.CODE),
        ("scripts/deploy.sh", ChunkKind.CODE),
        ("config.yaml", ChunkKind.CODE),
        ("bin/manage", ChunkKind.CODE),
    ],
)
def test_prose_files_are_docs_and_config_or_script_files_are_code(path: str, kind: ChunkKind) -> None:
    assert text_kind(path) is kind
