"""The capability registry names each capability's work by reference: the declaration and the work it names
cannot drift apart unnoticed (pyright checks the reference; this test checks what it points at)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from daemon.core.intel_models import IntelStatus
from daemon.service.intel import capabilities
from daemon.service.intel import capability as capability_module
from daemon.service.intel.capabilities import BY_METHOD, CAPABILITIES, DEFINITION, INDEX_STATUS, SEARCH_CODE
from daemon.service.intel.capability import Capability
from daemon.service.intel.code_intel import CodeIntelService
from daemon.service.intel.params import NoParams
from daemon.service.wire.api import Methods


def _named(capability: Capability[Any, Any]) -> list[str]:
    """The service methods a capability's work names (the attributes its code reads)."""
    assert capability.work is not None
    return [name for name in capability.work.__code__.co_names if hasattr(CodeIntelService, name)]


def test_every_daemon_capability_names_an_async_method_of_the_service_taking_its_params() -> None:
    for capability in CAPABILITIES:
        if capability.method is None:
            assert capability.route is not None and capability.work is None, capability.name
            continue
        (name,) = _named(capability)
        method = getattr(CodeIntelService, name)
        assert inspect.iscoroutinefunction(method), capability.name
        params = list(inspect.signature(method).parameters.values())[1:]
        assert len(params) <= 1, (capability.name, params)  # the params model, or nothing


def test_the_registry_finds_no_work_by_a_string() -> None:
    for module in (capabilities, capability_module):
        assert "getattr(" not in inspect.getsource(module), module.__name__
    assert set(BY_METHOD) == {c.method for c in CAPABILITIES if c.method is not None}


def test_a_declaration_without_its_work_fails_when_it_is_made() -> None:
    """A capability served by a daemon method but naming no work, or with neither a method nor a route, is an
    error at import time (where the registry is built), not when a client first calls it."""
    shape: dict[str, Any] = {
        "name": "trial",
        "params": NoParams,
        "result": IntelStatus,
        "title": "Trial",
        "description": "a trial capability",
        "kind": "read",
    }
    with pytest.raises(ValueError, match="needs the work that answers it"):
        Capability(**shape, method="intel/trial")
    with pytest.raises(ValueError, match="either the daemon method"):
        Capability(**shape)
    trial = Capability(**shape, method="intel/trial_run", work=lambda s, _p: s.index_status())
    assert trial.lsp_method == "ided/intel/trialRun" and trial.lsp_elsewhere is None  # served over LSP by default


def test_the_daemon_wire_names_no_intel_method_of_its_own() -> None:
    """The capability table is the one declaration of the daemon's ``intel/*`` methods: the wire's ``Methods``
    table names none (a copy there could drift from the table unnoticed); a caller asks a capability for its
    ``daemon_method``, which one routed through the ``Workspace`` port has not."""
    wire = {name: value for name, value in vars(Methods).items() if isinstance(value, str) and "/" in value}
    assert wire and not {n: v for n, v in wire.items() if v.startswith("intel/") or n.startswith("INTEL_")}, (
        "use the capability's daemon_method (daemon/service/intel/capabilities.py) instead of a Methods constant"
    )
    served = [c for c in CAPABILITIES if c.method is not None]
    assert len({c.daemon_method for c in served}) == len(served)
    assert all(c.daemon_method.startswith("intel/") for c in served)
    assert DEFINITION.daemon_method == "intel/definition" and INDEX_STATUS.daemon_method == "intel/status"
    with pytest.raises(ValueError, match="routed through the Workspace port"):
        _ = SEARCH_CODE.daemon_method
