"""``get_type`` against the real language servers: basedpyright and jedi for Python, typescript-language-server.

The type of a variable, a parameter, an attribute and a call, by position and by name: from the hover when
the server states one (basedpyright, TypeScript), from the type definition when it does not (jedi shows a
variable's assignment), with where the type is declared.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from daemon.core.intel_models import TypeSource
from daemon.errors import InvalidToolInput
from daemon.service.intel.capabilities import TYPE
from daemon.service.intel.code_intel import CodeIntelService
from daemon.service.intel.params import TypeParams
from daemon.service.workspace.local import LocalWorkspace
from tests.intel_tools import SEARCH_PATH, copy_workspace, require_server, workspace_config

TIMEOUT = 120.0
JEDI = Path(SEARCH_PATH[0]) / "jedi-language-server"


async def within(awaitable: Any) -> Any:
    return await asyncio.wait_for(awaitable, TIMEOUT)


async def test_basedpyright_states_the_inferred_types_of_a_variable_a_list_and_a_method(tmp_path: Path) -> None:
    assert require_server("python") == "basedpyright"
    workspace = copy_workspace("intel_python", tmp_path)
    config = workspace_config(workspace, tmp_path / "state", intel={"ready_wait_seconds": TIMEOUT})
    async with CodeIntelService.open(config) as intel:
        first = await within(intel.get_type(TypeParams(file="app.py", line=9, column=5)))  # first = points[0]
        points = await within(intel.get_type(TypeParams(file="app.py", line=8, column=5)))
        distance = await within(intel.get_type(TypeParams(file="app.py", line=10, column=17)))  # .distance_to(
        by_name = await within(intel.get_type(TypeParams(symbol="shapes.geometry.centroid")))
        with pytest.raises(InvalidToolInput, match="no type found"):
            await within(intel.get_type(TypeParams(file="app.py", line=1, column=1)))  # the module docstring
    assert (first.type, first.kind, first.symbol, first.source) == ("Point", "variable", "first", TypeSource.HOVER)
    assert [(d.name, d.location.path) for d in first.type_definitions] == [("Point", "shapes/geometry.py")]
    assert first.location is not None and first.location.range.start_line == 9
    assert points.type == "list[Point]"
    assert not points.type_definitions[0].location.in_workspace  # list: declared in the bundled typeshed
    assert (distance.type, distance.returns, distance.kind) == ("(other: Point) -> float", "float", "method")
    assert by_name.type == "(points: list[Point]) -> Point" and by_name.returns == "Point"


async def test_jedi_gives_the_type_through_its_type_definition_when_its_hover_shows_the_assignment(
    tmp_path: Path,
) -> None:
    if not JEDI.exists():
        pytest.skip(f"jedi-language-server is not installed at {JEDI} (run scripts/install-test-tools.sh)")
    workspace = copy_workspace("intel_python", tmp_path)
    intel_settings = {"ready_wait_seconds": TIMEOUT, "servers": {"python": {"command": str(JEDI)}}}
    config = workspace_config(workspace, tmp_path / "state", intel=intel_settings)
    async with CodeIntelService.open(config) as intel:
        first = await within(intel.get_type(TypeParams(file="app.py", line=9, column=5)))
        distance = await within(intel.get_type(TypeParams(file="app.py", line=10, column=17)))
    assert first.server == "jedi-language-server"
    assert (first.type, first.source) == ("Point", TypeSource.TYPE_DEFINITION)
    assert first.declaration == "first = points[0]" and any("hover states no type" in n for n in first.notes)
    assert (distance.type, distance.returns, distance.source) == ("(other: Point) -> float", "float", TypeSource.HOVER)


async def test_typescript_states_the_types_of_a_const_a_property_and_an_imported_function(tmp_path: Path) -> None:
    require_server("typescript")
    workspace = copy_workspace("intel_typescript", tmp_path)
    config = workspace_config(workspace, tmp_path / "state", intel={"ready_wait_seconds": TIMEOUT})
    async with LocalWorkspace.open(config) as ws:  # through the capability, as every front calls it
        cart = await within(TYPE.run(ws, TypeParams(file="src/main.ts", line=4, column=7)))
        items = await within(TYPE.run(ws, TypeParams(file="src/cart.ts", line=15, column=20)))
        checkout = await within(TYPE.run(ws, TypeParams(file="src/main.ts", line=5, column=13)))
    assert (cart.type, cart.kind, cart.server) == ("Cart", "variable", "typescript-language-server")
    assert [(d.name, d.location.path) for d in cart.type_definitions] == [("Cart", "src/cart.ts")]
    assert (items.type, items.symbol, items.kind) == ("LineItem[]", "Cart.items", "property")
    assert checkout.type == "(cart: Cart, taxRate: number) -> number" and checkout.returns == "number"
