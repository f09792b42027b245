"""docs/lsp.md documents every ``ided/*`` method and notification the protocol table holds, and in each
method's section every field of its params and result, by its wire (camelCase) name (for the
``ided/intel/*`` methods, the fields derived from the capability's models)."""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any

import attrs
import pytest

from daemon.lsp import run_protocol
from daemon.lsp.intel_wire import SERVED, lsp_field_names
from daemon.lsp.protocol import MESSAGE_TYPES, camel_case

assert run_protocol.RunStartParams is not None  # importing it adds the run methods to the table
DOC = (Path(__file__).parents[3] / "docs" / "lsp.md").read_text()


def section(method: str) -> str:
    """The text under the heading that names ``method`` (``### `m` `` or ``## Notification `m` ...``)."""
    match = re.search(rf"^#+ [^\n]*`{re.escape(method)}`[^\n]*\n(.*?)(?=^#+ |\Z)", DOC, flags=re.M | re.S)
    assert match is not None, f"docs/lsp.md has no section for {method}"
    return match.group(1)


def wire_fields(cls: Any) -> set[str]:
    """camelCase names of an attrs wire type's fields, and of the wire types nested in it."""
    names: set[str] = set()
    hints = typing.get_type_hints(cls)
    for field in attrs.fields(cls):
        names.add(camel_case(field.name))
        for arg in (hints[field.name], *typing.get_args(hints[field.name])):
            for inner in (arg, *typing.get_args(arg)):
                if attrs.has(inner) and inner.__module__.startswith("daemon."):
                    names |= wire_fields(inner)
    return names


@pytest.mark.parametrize("method", sorted(MESSAGE_TYPES))
def test_every_method_has_a_section_naming_its_params_and_result_fields(method: str) -> None:
    request, response = MESSAGE_TYPES[method]
    text = section(method)
    derived = {c.lsp_method: c for c in SERVED}
    params = typing.get_type_hints(request)["params"]
    expected: set[str] = set()
    if method in derived:  # derived from the capability's models (daemon.lsp.intel_wire)
        params_names, result_names = lsp_field_names(derived[method])
        expected = params_names | result_names
        response = None
    for arg in (params, *typing.get_args(params)):
        if attrs.has(arg) and arg.__module__.startswith("daemon."):
            expected |= wire_fields(arg)
    if response is not None:
        expected |= wire_fields(typing.get_type_hints(response)["result"])
    missing = sorted(name for name in expected if f'"{name}"' not in text and f"`{name}`" not in text)
    assert not missing, f"{method}: docs/lsp.md does not name {missing}"


def test_the_capabilities_example_lists_every_method() -> None:
    example = DOC.split("## Capabilities", 1)[1].split("###", 1)[0]
    for method in MESSAGE_TYPES:
        assert f'"{method}"' in example, method
