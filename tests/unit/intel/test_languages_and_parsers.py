"""Which language a path is, and the per-thread Tree-sitter parsers."""

from __future__ import annotations

import threading

import pytest
import tree_sitter

from daemon.core.languages import ALL_LANGUAGES, CODE_LANGUAGES, DOC_LANGUAGES, language_for_path
from daemon.errors import IndexingError
from daemon.intel.parsers import GRAMMAR_LANGUAGES, get_language, get_parser, has_grammar, parse


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("pkg/mod.py", "python"),
        ("stubs/mod.pyi", "python"),
        ("web/app.js", "javascript"),
        ("web/app.mjs", "javascript"),
        ("web/App.jsx", "javascript"),
        ("web/app.ts", "typescript"),
        ("web/App.tsx", "tsx"),
        ("cmd/main.go", "go"),
        ("src/lib.rs", "rust"),
        ("src/Main.java", "java"),
        ("src/list.c", "c"),
        ("include/list.h", "c"),
        ("src/widget.cpp", "cpp"),
        ("include/widget.hpp", "cpp"),
        ("README.md", "markdown"),
        ("docs/INDEX.MD", "markdown"),
        ("docs/index.rst", "rst"),
        ("notes.txt", "text"),
        ("pyproject.toml", "text"),
        ("config.yaml", "text"),
        ("settings.json", "text"),
        ("scripts/run.sh", "text"),
        ("db/schema.sql", "text"),
        ("Dockerfile", "text"),
        ("docker/Dockerfile.dev", "text"),
        ("Makefile", "text"),
        ("LICENSE", "text"),
        ("bin/manage", "text"),
        (".gitignore", "text"),
        ("app/models.rb", "text"),
        ("uv.lock", None),
        ("web/package-lock.json", None),
        ("web/vendor.min.js", None),
        ("web/app.js.map", None),
        ("img/logo.png", None),
        ("data/table.csv", None),
        (".coverage", None),
    ],
)
def test_a_path_maps_to_its_language_or_to_none(path: str, language: str | None) -> None:
    assert language_for_path(path) == language


def test_language_sets_partition_the_indexed_languages() -> None:
    assert CODE_LANGUAGES.isdisjoint(DOC_LANGUAGES)
    assert CODE_LANGUAGES | DOC_LANGUAGES | {"text"} == ALL_LANGUAGES
    assert CODE_LANGUAGES | {"markdown"} <= GRAMMAR_LANGUAGES


@pytest.mark.parametrize("language", sorted(GRAMMAR_LANGUAGES))
def test_every_bundled_grammar_loads_and_parses_offline(language: str) -> None:
    tree = parse(language, b"x\n")

    assert isinstance(get_language(language), tree_sitter.Language)
    assert tree.root_node.end_byte == 2
    assert has_grammar(language)


def test_an_unknown_grammar_is_an_indexing_error_naming_the_id() -> None:
    assert not has_grammar("cobol")
    with pytest.raises(IndexingError, match="cobol"):
        get_parser("cobol")


def test_each_thread_gets_its_own_parser_and_reuses_it() -> None:
    mine = get_parser("python")
    theirs: list[tree_sitter.Parser] = []
    thread = threading.Thread(target=lambda: theirs.extend([get_parser("python"), get_parser("python")]))
    thread.start()
    thread.join()

    assert get_parser("python") is mine
    assert theirs[0] is theirs[1]
    assert theirs[0] is not mine
    assert get_language("python") is get_language("python")
