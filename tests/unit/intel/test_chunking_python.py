"""Python chunking on real sources with the real tree-sitter-python grammar."""

from __future__ import annotations

import itertools

from daemon.core.models import ChunkKind, SymbolKind
from daemon.intel.chunking import chunk_source
from tests.unit.intel.chunking_support import assert_well_formed, chunk_fixture, fixture_bytes, named, only


def test_every_function_method_and_class_becomes_a_chunk_with_its_qualified_name() -> None:
    chunks = chunk_fixture("python", "shapes.py", "python")

    kinds = {name: chunk.symbol_kind for name, chunk in named(chunks).items()}

    assert kinds == {
        "Protocolish": SymbolKind.CLASS,
        "register": SymbolKind.FUNCTION,
        "Shape": SymbolKind.CLASS,
        "Shape.area": SymbolKind.METHOD,
        "Shape.area.squared": SymbolKind.FUNCTION,
        "Shape.name": SymbolKind.METHOD,
        "Shape.Meta": SymbolKind.CLASS,
        "Shape.Meta.describe": SymbolKind.METHOD,
        "fetch_all": SymbolKind.FUNCTION,
        "hypot": SymbolKind.FUNCTION,
    }
    assert all(c.kind is ChunkKind.CODE and c.language == "python" for c in chunks)
    assert named(chunks)["Shape.area.squared"].name == "squared"


def test_signatures_are_the_normalized_declaration_without_decorators_or_colon() -> None:
    chunks = named(chunk_fixture("python", "shapes.py", "python"))

    assert chunks["Shape.area"].signature == "def area(self, scale: float = 1.0, *, rounded: bool = False) -> float"
    assert chunks["Shape.name"].signature == "def name(self) -> str"
    assert chunks["Shape"].signature == "class Shape"
    assert chunks["fetch_all"].signature == "async def fetch_all(paths: Iterable[str]) -> list[bytes]"


def test_docstrings_are_cleaned_and_the_module_docstring_belongs_to_the_first_module_chunk() -> None:
    chunks = chunk_fixture("python", "shapes.py", "python")
    symbols = named(chunks)

    assert symbols["Shape"].docstring == "A polygon with equal sides.\n\nSubclasses override ``area``."
    assert symbols["Shape.area"].docstring == "Area of the shape, scaled."
    assert symbols["hypot"].docstring is None
    modules = only(chunks, SymbolKind.MODULE)
    assert modules[0].docstring == (
        "Geometry shapes used by the chunking tests.\n\nSecond paragraph of the module docstring."
    )
    assert modules[1].docstring is None


def test_ranges_start_at_the_comment_or_decorator_above_and_end_with_the_body() -> None:
    chunks = named(chunk_fixture("python", "shapes.py", "python"))

    assert (chunks["Shape"].start_line, chunks["Shape"].end_line) == (30, 65)
    assert chunks["Shape"].text.startswith("# Shapes are registered on definition.\n@register\nclass Shape:")
    assert (chunks["Shape.name"].start_line, chunks["Shape.name"].end_line) == (55, 57)
    assert chunks["Shape.name"].text.lstrip().startswith("@property")
    assert (chunks["Shape.area"].start_line, chunks["Shape.area"].end_line) == (41, 53)
    assert (chunks["Shape.area.squared"].start_line, chunks["Shape.area.squared"].end_line) == (49, 50)


def test_a_class_chunk_keeps_fields_and_member_signatures_but_not_member_bodies() -> None:
    text = named(chunk_fixture("python", "shapes.py", "python"))["Shape"].text

    assert "sides: int = 3" in text
    assert "    def area(\n        self,\n        scale: float = 1.0," in text
    assert "def name(self) -> str:" in text
    assert "class Meta:" in text
    assert "squared(scale)" not in text
    assert "return type(self).__name__" not in text
    assert "ordering" not in text


def test_a_method_chunk_keeps_its_whole_body_nested_functions_included() -> None:
    text = named(chunk_fixture("python", "shapes.py", "python"))["Shape.area"].text

    assert "def squared(value: float) -> float:" in text
    assert text.endswith("return round(result) if rounded else result")


def test_every_chunk_carries_all_imports_of_the_file() -> None:
    chunks = chunk_fixture("python", "shapes.py", "python")

    expected = ("__future__", "math", "os.path", "collections.abc", "typing", ".units")
    assert {c.imports for c in chunks} == {expected}


def test_top_level_code_outside_symbols_becomes_module_chunks_named_after_the_file() -> None:
    modules = only(chunk_fixture("python", "shapes.py", "python"), SymbolKind.MODULE)

    assert [(m.start_line, m.end_line) for m in modules] == [(1, 18), (77, 78)]
    assert {(m.name, m.qualified_name) for m in modules} == {("shapes", "pkg/shapes")}
    assert "DEFAULT_SCALE = 2.0" in modules[0].text
    assert modules[1].text == 'if __name__ == "__main__":\n    print(Shape().area(DEFAULT_SCALE))'


def test_definitions_inside_a_top_level_if_block_are_found() -> None:
    chunk = named(chunk_fixture("python", "shapes.py", "python"))["Protocolish"]

    assert (chunk.start_line, chunk.end_line, chunk.docstring) == (20, 21, "Only for type checkers.")


def test_imports_and_comments_alone_do_not_make_a_module_chunk() -> None:
    source = b"# header\nimport os\nfrom x import (\n    y,\n)\n\n\ndef f():\n    return os\n"

    chunks = chunk_source("m.py", source, "python")

    assert [c.qualified_name for c in chunks] == ["f"]
    assert chunks[0].imports == ("os", "x")


def test_a_long_function_is_split_into_balanced_parts_that_repeat_the_signature() -> None:
    body = "".join(f"    total += {i}\n" for i in range(400))
    source = f"def long_one(x: int) -> int:\n    total = x\n{body}    return total\n".encode()

    chunks = chunk_source("long.py", source, "python", max_chunk_lines=100)

    assert_well_formed(chunks, source, max_chunk_lines=100)
    assert [c.part for c in chunks] == [1, 2, 3, 4, 5]
    assert {c.parts for c in chunks} == {5}
    assert chunks[0].start_line == 1
    assert chunks[-1].end_line == 403
    for before, after in itertools.pairwise(chunks):
        assert after.start_line == before.end_line + 1
    assert chunks[0].text.startswith("def long_one(x: int) -> int:\n")
    assert chunks[2].text.startswith("# def long_one(x: int) -> int (part 3/5)\n    total +=")
    sizes = [len(c.text.split("\n")) for c in chunks]
    assert max(sizes) - min(sizes) <= 1
    assert {c.qualified_name for c in chunks} == {"long_one"}


def test_long_module_level_code_is_windowed_by_max_chunk_lines() -> None:
    source = "".join(f"VALUE_{i} = {i}\n" for i in range(250)).encode()

    chunks = chunk_source("consts.py", source, "python", max_chunk_lines=100)

    assert_well_formed(chunks, source, max_chunk_lines=100)
    assert [(c.start_line, c.end_line, c.part, c.parts) for c in chunks] == [
        (1, 84, 1, 3),
        (85, 167, 2, 3),
        (168, 250, 3, 3),
    ]
    assert all(c.symbol_kind is SymbolKind.MODULE for c in chunks)


def test_invalid_syntax_still_yields_the_symbols_around_the_error() -> None:
    source = (
        b"def ok():\n    return 1\n\n\ndef broken(:\n    pass\n\n\nclass After:\n    def m(self):\n        return [\n"
    )

    chunks = chunk_source("bad.py", source, "python")

    assert_well_formed(chunks, source)
    assert "ok" in named(chunks)
    assert any("def broken(" in c.text for c in chunks)


def test_non_ascii_text_keeps_exact_line_numbers() -> None:
    chunks = chunk_fixture("python", "unicode.py", "python")
    symbols = named(chunks)

    assert (symbols["grüßen"].start_line, symbols["grüßen"].end_line) == (8, 10)
    assert symbols["grüßen"].docstring == "Grüße — sagt Hallo. 你好."
    assert (symbols["Café.bestellen"].start_line, symbols["Café.bestellen"].end_line) == (14, 15)
    assert symbols["Café.bestellen"].text == '    def bestellen(self) -> str:\n        return "☕"'
    assert "\u2028" in only(chunks, SymbolKind.MODULE)[0].text


def test_crlf_line_endings_give_the_same_lines_without_carriage_returns() -> None:
    source = b"import os\r\n\r\n\r\ndef f(a):\r\n    return a\r\n\r\nX = 1\r\n"

    chunks = chunk_source("crlf.py", source, "python")

    assert [(c.qualified_name, c.start_line, c.end_line) for c in chunks] == [("f", 4, 5), ("crlf", 7, 7)]
    assert all("\r" not in c.text for c in chunks)


def test_pathologically_deep_nesting_falls_back_to_line_windows_instead_of_failing() -> None:
    source = "".join(" " * i + f"def f{i}():\n" for i in range(400)) + " " * 400 + "pass\n"

    chunks = chunk_source("deep.py", source.encode(), "python", text_window_lines=100)

    assert chunks
    assert {c.symbol_kind for c in chunks} == {SymbolKind.WINDOW}
    assert {c.kind for c in chunks} == {ChunkKind.CODE}
    assert (chunks[0].start_line, chunks[-1].end_line) == (1, 401)


def test_chunking_twice_gives_identical_chunks() -> None:
    source = fixture_bytes("python", "shapes.py")

    first = chunk_source("pkg/shapes.py", source, "python")
    second = chunk_source("pkg/shapes.py", source, "python")

    assert first == second
    assert [c.chunk_hash for c in first] == [c.chunk_hash for c in second]
