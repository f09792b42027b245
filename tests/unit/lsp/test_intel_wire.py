"""The ``ided/intel/*`` wire is derived from the capability table: which capabilities are served, their
params and their results, with places converted between the daemon's and the client's positions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.workspace import PositionCodec

from daemon.core.intel_models import (
    AstNode,
    AstNodeResult,
    Definition,
    DefinitionResult,
    EnclosingScope,
    Location,
    Reference,
    ReferencesResult,
    SourceRange,
)
from daemon.core.models import IndexStatus
from daemon.lsp.convert import PositionMapper
from daemon.lsp.intel_wire import SERVED, capability_params, lsp_field_names, wire_problems, wire_result
from daemon.lsp.methods import REQUESTS
from daemon.lsp.protocol import MESSAGE_TYPES
from daemon.service.intel.capabilities import AST_NODE, CAPABILITIES, DEFINITION, REFERENCES, SIGNATURE
from daemon.service.intel.capability import Capability


def _mapper(tmp_path: Path) -> PositionMapper:
    (tmp_path / "emoji.py").write_text('x = "😋"; y = 1\n\n\ndef area():\n    return y\n', encoding="utf-8")
    return PositionMapper(tmp_path, PositionCodec(types.PositionEncodingKind.Utf16))


def _range(line: int, start: int, end: int) -> SourceRange:
    return SourceRange(start_line=line, start_column=start, end_line=line, end_column=end)


def test_every_capability_is_served_over_lsp_or_says_where_or_why_not() -> None:
    assert {c.name for c in SERVED} == {
        "find_definition",
        "get_references",
        "get_signature",
        "get_type",
        "get_ast_node",
    }
    for capability in CAPABILITIES:
        assert (capability in SERVED) is (capability.lsp_elsewhere is None), capability.name
        assert capability.lsp_elsewhere is None or capability.lsp_elsewhere.strip()
    assert AST_NODE.lsp_method == "ided/intel/astNode" and DEFINITION.lsp_method == "ided/intel/definition"


def test_the_served_methods_are_in_the_protocol_table_and_the_early_answer() -> None:
    """The early ``initialize`` answer lists ``REQUESTS`` before pydantic loads (``daemon.lsp.methods`` is
    standard library only): its ``ided/intel/*`` names must be the served capabilities' own."""
    served = {c.lsp_method for c in SERVED}
    assert served <= set(MESSAGE_TYPES)
    assert {m for m in REQUESTS if m.startswith("ided/intel/")} == served, (
        "add each served capability's lsp_method to LspMethods (daemon/lsp/methods.py), remove the others"
    )


def test_every_served_result_can_be_placed_on_the_wire() -> None:
    for capability in SERVED:
        assert wire_problems(capability.result) == [], capability.name


def test_a_range_with_no_file_to_be_in_is_reported() -> None:
    assert wire_problems(EnclosingScope) == [
        "EnclosingScope.range: a range with no file (give the model a path or a location, or range_path)"
    ]
    assert wire_problems(Reference) == []  # the container's range is in the reference's file
    assert wire_problems(IndexStatus) == []


def test_params_by_name_or_by_place_in_code_points(tmp_path: Path) -> None:
    mapper = _mapper(tmp_path)
    uri = (tmp_path / "emoji.py").as_uri()
    by_name = capability_params(DEFINITION, mapper, {"symbol": "Circle.area", "maxResults": 3}, "m")
    assert (by_name.symbol, by_name.max_results, by_name.max_chars) == ("Circle.area", 3, 2000)  # the capability's
    by_place = capability_params(
        REFERENCES,
        mapper,
        {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 11}, "includeDeclaration": False},
        "m",
    )
    assert (by_place.file, by_place.line, by_place.column) == (str(tmp_path / "emoji.py"), 1, 11)
    assert by_place.include_declaration is False
    ignored = capability_params(SIGNATURE, mapper, {"symbol": "f", "maxResults": 3, "somethingElse": 1}, "m")
    assert ignored.symbol == "f"  # keys the capability does not name are ignored, as LSP clients expect


@pytest.mark.parametrize(
    ("capability", "params", "message"),
    [
        (SIGNATURE, {"textDocument": {"uri": "file:///x.py"}}, "give symbol, or textDocument and position"),
        (SIGNATURE, {}, "give symbol, or textDocument and position"),
        (SIGNATURE, {"position": {"line": 0, "character": 0}}, "a position needs its textDocument"),
        (DEFINITION, {"symbol": "f", "maxResults": "3"}, "maxResults"),
        (DEFINITION, {"symbol": "f", "maxResults": 0}, "maxResults"),
        (DEFINITION, {"symbol": 5}, "symbol"),
        (AST_NODE, {"textDocument": {"uri": 5}, "position": {"line": 0, "character": 0}}, "textDocument.uri"),
        (AST_NODE, {"textDocument": {"uri": "file:///x.py"}, "position": {"line": "0"}}, "position.line"),
        (AST_NODE, {"textDocument": {"uri": "file:///x.py"}}, "position: Field required"),
        (AST_NODE, [1, 2], "an object is expected"),
    ],
)
def test_params_of_the_wrong_shape_or_json_type_are_refused_not_coerced(
    tmp_path: Path, capability: Capability[Any, Any], params: Any, message: str
) -> None:
    with pytest.raises(JsonRpcInvalidParams, match=message):
        capability_params(capability, _mapper(tmp_path), params, capability.lsp_method)


def test_results_carry_every_field_of_the_model_with_places_as_lsp_places(tmp_path: Path) -> None:
    mapper = _mapper(tmp_path)
    uri = (tmp_path / "emoji.py").as_uri()
    definition = DefinitionResult(
        query="y",
        definitions=(Definition(location=Location(path="emoji.py", range=_range(1, 11, 12)), symbol="y"),),
        total=1,
        answered_by="index",
    )
    wire = wire_result(mapper, definition)
    assert wire["answeredBy"] == "index"  # what the LSP answer lacked while it was restated by hand
    (item,) = wire["definitions"]
    assert item["location"] == {
        "uri": uri,
        "range": {"start": {"line": 0, "character": 11}, "end": {"line": 0, "character": 12}},  # UTF-16
    }
    assert (item["inWorkspace"], item["lineText"], item["sourceTruncated"], item["kind"]) == (True, None, False, None)
    assert wire["notes"] == [] and wire["server"] is None

    references = ReferencesResult(
        query="y",
        references=(
            Reference(
                location=Location(path="emoji.py", range=_range(5, 12, 13)),
                container=EnclosingScope(kind="function", name="area", qualified_name="area", range=_range(4, 1, 14)),
            ),
        ),
        total=1,
        files=1,
    )
    (reference,) = wire_result(mapper, references)["references"]
    assert reference["container"]["qualifiedName"] == "area"
    assert reference["container"]["range"]["start"] == {"line": 3, "character": 0}  # in the reference's file

    node = AstNode(type="identifier", range=_range(1, 11, 12), text="y")
    ast = wire_result(mapper, AstNodeResult(path="emoji.py", language="python", node=node, ancestors=(node,)))
    assert ast["uri"] == uri and "path" not in ast
    assert ast["node"]["range"]["start"]["character"] == 11 and len(ast["ancestors"]) == 1
    assert ast["enclosingFunction"] is None and ast["hasErrors"] is False


def test_every_field_a_served_capability_sends_is_named() -> None:
    params, result = lsp_field_names(DEFINITION)
    assert {"symbol", "textDocument", "position", "maxResults", "maxChars"} == params
    assert {"answeredBy", "definitions", "location", "inWorkspace", "sourceTruncated"} <= result
    assert "uri" in lsp_field_names(AST_NODE)[1]
