"""The ided wire types: camelCase both ways, every field sent, JSON types checked strictly."""

from __future__ import annotations

from typing import Any

import cattrs
import pytest
from lsprotocol import types

from daemon.core.models import SearchMode
from daemon.lsp.protocol import (
    IndexSearchParams,
    IndexSearchRequest,
    IndexSearchResult,
    camel_case,
    make_converter,
)


def test_params_travel_in_camel_case_and_enums_by_value() -> None:
    converter = make_converter()
    params = {"query": "q", "pathGlob": "src/*", "mode": "lexical"}
    envelope: type[Any] = IndexSearchRequest
    request = converter.structure(
        {"jsonrpc": "2.0", "id": 1, "method": "ided/index/search", "params": params}, envelope
    )
    searched = request.params
    assert isinstance(searched, IndexSearchParams)  # the generated envelope holds the typed params
    assert searched.path_glob == "src/*"
    assert searched.mode is SearchMode.LEXICAL


@pytest.mark.parametrize(
    ("params", "where"),
    [
        ({"query": 5}, "$.params.query"),
        ({"query": "q", "k": "3"}, "$.params.k"),
        ({"query": "q", "k": True}, "$.params.k"),
        ({"query": "q", "includeText": "yes"}, "$.params.include_text"),
        ({"query": "q", "mode": "fuzzy"}, "$.params.mode"),
        ({}, "$.params.query"),
    ],
)
def test_values_of_the_wrong_json_type_are_refused_not_coerced(params: dict[str, object], where: str) -> None:
    with pytest.raises(cattrs.BaseValidationError) as caught:
        make_converter().structure(
            {"jsonrpc": "2.0", "id": 1, "method": "ided/index/search", "params": params}, IndexSearchRequest
        )
    assert any(
        where.replace("include_text", "includeText") in line or where in line
        for line in cattrs.transform_error(caught.value)
    )


def test_standard_lsp_types_are_strict_too() -> None:
    with pytest.raises(cattrs.BaseValidationError):
        make_converter().structure({"query": 5}, types.WorkspaceSymbolParams)
    assert (
        make_converter().structure({"type": 2, "message": "m"}, types.ShowMessageParams).type
        is types.MessageType.Warning
    )


def test_results_send_every_field_even_when_empty() -> None:
    result = IndexSearchResult(
        query="q", mode="hybrid", hits=[], embedded_fraction=0.0, reranked=False, matches="none", notes=[], seconds=0.0
    )
    assert make_converter().unstructure(result) == {
        "query": "q", "mode": "hybrid", "hits": [], "embeddedFraction": 0.0, "reranked": False, "matches": "none",
        "notes": [], "seconds": 0.0,
    }  # fmt: skip


def test_camel_case_joins_the_words_after_the_first() -> None:
    assert camel_case("path_glob") == "pathGlob"
    assert camel_case("include_declaration") == "includeDeclaration"
    assert camel_case("query") == "query"
