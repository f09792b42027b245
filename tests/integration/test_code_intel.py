"""The code-intel service in-process on fixture workspaces, with the real language servers, Tree-sitter
and the real index: answers across files, symbols by name, edits on disk, bad input, fallbacks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from daemon.core.intel_models import SignatureSource
from daemon.errors import InvalidToolInput, PathOutsideWorkspace
from daemon.service.intel.capabilities import SEARCH_CODE
from daemon.service.intel.code_intel import CodeIntelService
from daemon.service.intel.params import (
    AstNodeParams,
    CallHierarchyParams,
    DefinitionParams,
    DiagnosticsParams,
    DocumentSymbolsParams,
    ReferencesParams,
    SearchCodeParams,
    SignatureParams,
    WorkspaceSymbolsParams,
)
from daemon.service.workspace.local import LocalWorkspace
from daemon.trust import TrustStore
from tests.intel_tools import copy_workspace, require_server, workspace_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

TIMEOUT = 90.0


async def within(awaitable: Any) -> Any:
    return await asyncio.wait_for(awaitable, TIMEOUT)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def python_intel(tmp_path_factory: pytest.TempPathFactory) -> AsyncGenerator[CodeIntelService]:
    require_server("python")
    root = tmp_path_factory.mktemp("python")
    workspace = copy_workspace("intel_python", root)
    async with CodeIntelService.open(workspace_config(workspace, root / "state")) as intel:
        yield intel


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cpp_intel(tmp_path_factory: pytest.TempPathFactory) -> AsyncGenerator[CodeIntelService]:
    require_server("cpp")
    root = tmp_path_factory.mktemp("cpp")
    workspace = copy_workspace("intel_cpp", root)
    async with CodeIntelService.open(workspace_config(workspace, root / "state")) as intel:
        yield intel


# -- Python ----------------------------------------------------------------------------------------


async def test_a_use_resolves_to_the_class_defined_in_another_file(python_intel: CodeIntelService) -> None:
    result = await within(python_intel.find_definition(DefinitionParams(file="app.py", line=11, column=12)))
    (definition,) = result.definitions
    assert definition.location.path == "shapes/report.py"
    assert definition.location.range.start_line == 18
    assert definition.symbol == "Reporter"
    assert definition.source is not None and definition.source.startswith("class Reporter:")
    assert result.server == "basedpyright"


async def test_references_span_files_and_name_the_function_each_one_sits_in(python_intel: CodeIntelService) -> None:
    result = await within(python_intel.get_references(ReferencesParams(symbol="centroid")))
    found = {(r.location.path, r.location.range.start_line): r for r in result.references}
    containers = {key: r.container.qualified_name if r.container else None for key, r in found.items()}
    assert containers[("shapes/report.py", 14)] == "spread"
    assert containers[("shapes/report.py", 26)] == "Reporter.render"
    assert found[("shapes/geometry.py", 24)].is_declaration
    assert ("shapes/__init__.py", 3) in found
    assert result.files == 3
    assert result.total == len(result.references)


async def test_references_are_bounded_by_max_results_and_say_how_many_there_were(
    python_intel: CodeIntelService,
) -> None:
    result = await within(python_intel.get_references(ReferencesParams(symbol="centroid", max_results=2)))
    assert len(result.references) == 2
    assert result.truncated
    assert result.total >= 5


async def test_a_module_qualified_name_gives_the_typed_signature_and_docstring(python_intel: CodeIntelService) -> None:
    result = await within(python_intel.get_signature(SignatureParams(symbol="shapes.geometry.centroid")))
    assert result.source is SignatureSource.HOVER
    assert "def centroid(points: list[Point]) -> Point" in result.signature
    assert result.documentation is not None and "arithmetic mean" in result.documentation
    assert result.location is not None and result.location.path == "shapes/geometry.py"


async def test_document_symbols_list_classes_and_their_methods(python_intel: CodeIntelService) -> None:
    result = await within(python_intel.document_symbols(DocumentSymbolsParams(file="shapes/geometry.py")))
    by_name = {s.name: s for s in result.symbols}
    assert by_name["Point"].kind == "class"
    assert by_name["distance_to"].container == "Point"
    assert by_name["centroid"].location.range.start_line == 24


async def test_workspace_symbols_find_a_definition_by_name(python_intel: CodeIntelService) -> None:
    result = await within(python_intel.workspace_symbols(WorkspaceSymbolsParams(query="centroid", language="python")))
    assert any(s.name == "centroid" and s.location.path == "shapes/geometry.py" for s in result.symbols)


async def test_call_hierarchy_lists_callers_and_callees(python_intel: CodeIntelService) -> None:
    incoming = await within(python_intel.call_hierarchy(CallHierarchyParams(symbol="centroid", direction="incoming")))
    assert {c.symbol.name for c in incoming.calls} == {"spread", "render"}
    outgoing = await within(
        python_intel.call_hierarchy(CallHierarchyParams(symbol="Reporter.render", direction="outgoing"))
    )
    assert {"centroid", "spread", "_format_float"} <= {c.symbol.name for c in outgoing.calls}
    spread = next(c for c in outgoing.calls if c.symbol.name == "spread")
    assert spread.call_sites_path == "shapes/report.py"


async def test_search_code_finds_a_function_by_what_its_docstring_says(python_intel: CodeIntelService) -> None:
    workspace = LocalWorkspace(python_intel.config, python_intel.index, python_intel)
    result = await within(SEARCH_CODE.run(workspace, SearchCodeParams(query="arithmetic mean of points", k=3)))
    assert result.hits[0].symbol == "centroid"
    status = await within(python_intel.index_status())
    assert status.index is not None and status.index.files_indexed == 4


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"file": "../outside.py", "line": 1}, PathOutsideWorkspace, "outside the workspace"),
        ({"file": "/etc/hostname", "line": 1}, PathOutsideWorkspace, "outside the workspace"),
        ({"symbol": "Point.no_such_method"}, InvalidToolInput, "'Point.no_such_method' was not found"),
        ({"file": "app.py", "line": 400}, InvalidToolInput, "line 400 is outside app.py: it has"),
        ({"file": "app.py", "line": 1, "column": 300}, InvalidToolInput, "column 300 is outside line 1"),
        ({"file": "notes.md", "line": 1}, InvalidToolInput, "not a source file of a supported language"),
        ({"file": "logo.py", "line": 1}, InvalidToolInput, "is binary"),
        ({}, InvalidToolInput, "give a symbol name"),
    ],
)
async def test_bad_input_is_refused_with_an_error_that_names_the_problem(
    python_intel: CodeIntelService, arguments: dict[str, Any], error: type[Exception], message: str
) -> None:
    root = python_intel.paths.root
    (root / "notes.md").write_text("# Notes\n")
    (root / "logo.py").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(error, match=message):
        await within(python_intel.find_definition(DefinitionParams(**arguments)))


async def test_a_symlink_that_leaves_the_workspace_is_refused(python_intel: CodeIntelService, tmp_path: Path) -> None:
    (tmp_path / "elsewhere.py").write_text("def f(): pass\n")
    link = python_intel.paths.root / "link.py"
    link.symlink_to(tmp_path / "elsewhere.py")
    try:
        with pytest.raises(PathOutsideWorkspace):
            await within(python_intel.get_ast_node(AstNodeParams(file="link.py", line=1)))
    finally:
        link.unlink()


async def test_the_syntax_tree_of_an_unsupported_file_kind_is_a_clear_error(python_intel: CodeIntelService) -> None:
    (python_intel.paths.root / "data.csv").write_text("a,b\n1,2\n")
    with pytest.raises(InvalidToolInput, match="no Tree-sitter grammar"):
        await within(python_intel.get_ast_node(AstNodeParams(file="data.csv", line=1)))


# -- Python, on a workspace each test changes -----------------------------------------------------


async def test_answers_follow_edits_made_on_disk(tmp_path: Path) -> None:
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    config = workspace_config(workspace, tmp_path / "state", intel={"index_on_start": False})
    async with CodeIntelService.open(config, background=False) as intel:
        before = await within(intel.get_references(ReferencesParams(file="app.py", line=10, column=17)))
        app = workspace / "app.py"
        app.write_text(
            app.read_text().replace(
                "    return Reporter", "    print(first.distance_to(points[2]))\n    return Reporter"
            )
        )
        after = await within(intel.get_references(ReferencesParams(file="app.py", line=10, column=17)))
        assert after.total == before.total + 1
        assert ("app.py", 11) in {(r.location.path, r.location.range.start_line) for r in after.references}


async def test_diagnostics_report_the_current_content_and_clear_once_it_is_fixed(tmp_path: Path) -> None:
    require_server("python")
    workspace = copy_workspace("intel_python", tmp_path)
    config = workspace_config(workspace, tmp_path / "state", intel={"index_on_start": False})
    broken = workspace / "broken.py"
    broken.write_text("from shapes.geometry import centroid\n\nresult: int = centroid([])\nname: str = 42\n")
    async with CodeIntelService.open(config, background=False) as intel:
        result = await within(intel.diagnostics(DiagnosticsParams(file="broken.py")))
        errors = [d for d in result.diagnostics if d.severity == "error"]
        assert {d.range.start_line for d in errors} == {3, 4}
        broken.write_text("from shapes.geometry import Point, centroid\n\nresult: Point = centroid([])\n")
        fixed = await within(intel.diagnostics(DiagnosticsParams(file="broken.py")))
        assert [d for d in fixed.diagnostics if d.severity == "error"] == []


async def test_the_tree_sitter_signature_is_a_labelled_fallback_when_no_server_is_available(tmp_path: Path) -> None:
    workspace = copy_workspace("intel_python", tmp_path)
    config = workspace_config(
        workspace, tmp_path / "state", intel={"servers": {"python": {"enabled": False}}, "index_on_start": False}
    )
    async with CodeIntelService.open(config, background=False) as intel:
        result = await within(intel.get_signature(SignatureParams(symbol="Point.distance_to")))
        assert result.source is SignatureSource.TREE_SITTER
        assert result.signature == "def distance_to(self, other: Point) -> float"
        assert any("fallback" in note for note in result.notes)
        symbols = await within(intel.document_symbols(DocumentSymbolsParams(file="shapes/geometry.py")))
        assert "centroid" in {s.name for s in symbols.symbols}
        assert any("Tree-sitter" in note for note in symbols.notes)


# -- C and C++ -----------------------------------------------------------------------------------


async def test_cpp_references_cover_every_translation_unit_once_clangd_has_indexed(cpp_intel: CodeIntelService) -> None:
    result = await within(cpp_intel.get_references(ReferencesParams(symbol="geo::distance")))
    containers = {(r.location.path, r.container.qualified_name if r.container else None) for r in result.references}
    assert ("src/main.cpp", "main") in containers
    assert ("src/geometry.cpp", "geo.perimeter") in containers
    assert "include/geometry.hpp" in {r.location.path for r in result.references}


async def test_cpp_definition_of_a_call_is_found_in_another_file(cpp_intel: CodeIntelService) -> None:
    result = await within(cpp_intel.find_definition(DefinitionParams(file="src/main.cpp", line=8, column=28)))
    assert {d.location.path for d in result.definitions} <= {"src/geometry.cpp", "include/geometry.hpp"}
    assert result.definitions
    signature = await within(cpp_intel.get_signature(SignatureParams(file="src/main.cpp", line=8, column=28)))
    assert "double perimeter(const geo::Point *corners, int count)" in signature.signature


async def test_c_functions_are_served_by_the_same_clangd(cpp_intel: CodeIntelService) -> None:
    result = await within(cpp_intel.get_references(ReferencesParams(symbol="legacy_add")))
    assert {(r.container.name if r.container else None) for r in result.references} >= {"legacy_twice"}
    status = await within(cpp_intel.index_status())
    assert [s.name for s in status.servers if s.pid is not None] == ["clangd"]


# -- Go and Rust: run where their servers are installed ---------------------------------------------


async def test_go_definition_and_references_cross_packages(tmp_path: Path) -> None:
    require_server("go")
    workspace = copy_workspace("intel_go", tmp_path)
    config = workspace_config(workspace, tmp_path / "state", intel={"index_on_start": False})
    async with CodeIntelService.open(config, background=False) as intel:
        definition = await within(intel.find_definition(DefinitionParams(file="main.go", line=11, column=24)))
        assert [d.location.path for d in definition.definitions] == ["geometry/geometry.go"]
        references = await within(intel.get_references(ReferencesParams(symbol="geometry.Area")))
        assert ("main.go", "main") in {
            (r.location.path, r.container.name if r.container else None) for r in references.references
        }


async def test_rust_definition_crosses_from_the_binary_to_the_library(tmp_path: Path) -> None:
    require_server("rust")
    workspace = copy_workspace("intel_rust", tmp_path)
    # rust-analyzer builds the project (build scripts, proc macros): it runs only in a trusted workspace
    TrustStore.default({"HOME": str(tmp_path / "state" / "home")}).add(workspace)
    config = workspace_config(workspace, tmp_path / "state", intel={"index_on_start": False})
    async with CodeIntelService.open(config, background=False) as intel:
        definition = await within(intel.find_definition(DefinitionParams(file="src/main.rs", line=2, column=31)))
        assert [d.location.path for d in definition.definitions] == ["src/lib.rs"]
