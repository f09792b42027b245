"""Dependencies point one way: fronts -> service -> orchestration -> retrieval | vcs -> index | intel -> core.

Fronts (``cli``, ``lsp``, ``acp``, ``mcp_servers``) reach the rest only through ``service`` and
``core``, plus the configuration floor (``config``, ``errors`` and the top-level modules config itself
stands on: ``trust``, ``workspace_roots``, ``logging_setup``), and ask search and code intelligence
through the ``Workspace`` port, never by sending those methods over a daemon connection of their own.

What a front imports is checked where it is *defined*, not only where it is imported from: a name that
``service`` merely re-exports from a lower floor is a front reaching past the service. Packages on one
floor import each other only in the direction ``SAME_FLOOR`` names, and the service's packages have floors
of their own (``SERVICE_FLOORS``). See docs/architecture.md.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).parents[2]
LAYERS = {"core": 0, "index": 1, "intel": 1, "retrieval": 2, "vcs": 2, "orchestration": 3, "service": 4}
SAME_FLOOR = {("index", "intel"), ("retrieval", "vcs")}
"""(importer, imported): the one direction two packages of the same floor may import each other in (the
index chunks with ``intel``'s parsers; a run's overlay reads its branch with ``vcs``'s git runner)."""
SERVICE_FLOORS = {
    "wire": 0,
    "index": 1,
    "intel": 2,
    "workspace": 3,
    "pipeline": 4,
    "runs": 5,
    "daemon": 6,
    "commands": 6,
}
"""The floors inside ``service/``: the daemon's wire, the index host, code intelligence, the ``Workspace``
transports, what the pipeline is opened with, runs, and on top the daemon process (which composes every
host) and the one-shot commands."""
FRONTS = {"cli", "lsp", "acp"}
# what a front may import besides its own package
FRONT_MAY_IMPORT = {"service", "core", "config", "errors", "trust", "workspace_roots", "logging_setup"}

FACADES: dict[str, str] = {
    "daemon.service.commands.evaluation": "ided eval's golden-set harness (retrieval.harness): its models and checks",
    "daemon.service.commands.localization_eval": "ided eval's localization scores (retrieval.localization)",
    "daemon.service.pipeline.workflow_catalog": "ided workflows: the catalog and the loader's checks (orchestration)",
    "daemon.service.index.local": "ided index: the index this process opens and drives (index.workspace_index)",
}
"""Service modules a front may import lower-floor names through, and why. Every other name a front imports
must be defined in a package it may import; ``test_the_facades_are_still_needed`` fails an entry no front
needs any more."""


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


def _floor_of(rel: Path) -> str:
    top, second = rel.parts[0], (rel.parts[1] if len(rel.parts) > 1 else "")
    return second if top == "daemon" and len(rel.parts) > 2 else top


def _service_violations(rel: Path, parts: list[str], module: str) -> list[str]:
    """A ``service/`` module importing another service package: only one of a lower service floor."""
    if len(rel.parts) < 4 or rel.parts[:2] != ("daemon", "service"):
        return [] if rel.parts[:2] != ("daemon", "service") else [f"{rel}: a service module outside a package"]
    here = rel.parts[2]
    if len(parts) < 4 or parts[:2] != ["daemon", "service"] or parts[2] == here:
        return []
    there = parts[2]
    if here not in SERVICE_FLOORS or there not in SERVICE_FLOORS:
        return [f"{rel}: imports {module} (every service package has a floor in SERVICE_FLOORS)"]
    if SERVICE_FLOORS[there] >= SERVICE_FLOORS[here]:
        return [f"{rel}: service/{here} imports {module} (service/{there} is not on a lower service floor)"]
    return []


def _violations_of(rel: Path, modules: list[str]) -> list[str]:
    """What is wrong with the file at ``rel`` (relative to the root) importing ``modules``."""
    bad: list[str] = []
    here = _floor_of(rel)
    for module in modules:
        parts = module.split(".")
        if parts[0] == "mcp_servers" and here != "mcp_servers":
            bad.append(f"{rel}: imports {module} (only the MCP front itself)")
        if parts[0] != "daemon" or len(parts) < 2:
            continue
        there = parts[1]
        if (here in FRONTS or here == "mcp_servers") and there != here and there not in FRONT_MAY_IMPORT:
            bad.append(f"{rel}: front {here} imports {module} (fronts reach the rest through service and core)")
        if here in LAYERS and there in LAYERS and LAYERS[there] > LAYERS[here]:
            bad.append(f"{rel}: {here} imports {module} (a lower layer reaching up)")
        same_floor = here in LAYERS and there in LAYERS and here != there and LAYERS[there] == LAYERS[here]
        if same_floor and (here, there) not in SAME_FLOOR:
            bad.append(f"{rel}: {here} imports {module} (same floor, not the direction SAME_FLOOR allows)")
        if here in LAYERS and there in FRONTS:
            bad.append(f"{rel}: {here} imports the front {module}")
        if here in FRONTS and there in FRONTS and there != here:
            bad.append(f"{rel}: front {here} imports front {module}")
        if here == "core" and there not in {"core"}:
            bad.append(f"{rel}: core imports {module} (core imports only stdlib and pydantic)")
        if here == "service":
            bad += _service_violations(rel, parts, module)
    return bad


def _violations() -> list[str]:
    bad: list[str] = []
    for path in sorted([*ROOT.glob("daemon/**/*.py"), *ROOT.glob("mcp_servers/**/*.py")]):
        bad += _violations_of(path.relative_to(ROOT), _imports(path))
    return bad


def test_imports_follow_the_layering() -> None:
    assert _violations() == []


def test_the_scan_sees_the_packages_it_checks() -> None:
    scanned = {p.relative_to(ROOT).parts[1] for p in ROOT.glob("daemon/*/*.py")}
    assert {"core", "index", "intel", "service", "orchestration", "cli", "lsp"} <= scanned
    service = {p.relative_to(ROOT).parts[2] for p in ROOT.glob("daemon/service/*/*.py")}
    assert service == set(SERVICE_FLOORS)
    assert [p.name for p in ROOT.glob("daemon/service/*.py")] == ["__init__.py"]


def test_a_front_reaching_past_the_service_is_reported() -> None:
    for front in (
        "daemon/acp/agent.py",
        "daemon/cli/app.py",
        "daemon/lsp/server.py",
        "mcp_servers/code_intel/server.py",
    ):
        for lower in (
            "orchestration.runtime",
            "index.workspace_index",
            "intel.lsp.pool",
            "vcs.worktrees",
            "retrieval.agent",
        ):
            assert _violations_of(Path(front), [f"daemon.{lower}"]), (front, lower)
        allowed = ["daemon.service.wire.api", "daemon.core.models", "daemon.config", "daemon.errors", "daemon.trust"]
        assert _violations_of(Path(front), allowed) == []


def test_same_floor_and_service_floor_imports_are_reported() -> None:
    assert _violations_of(Path("daemon/intel/chunking/x.py"), ["daemon.index.scanner"])  # index -> intel only
    assert _violations_of(Path("daemon/index/scanner.py"), ["daemon.intel.workspace_paths"]) == []
    assert _violations_of(Path("daemon/vcs/worktrees.py"), ["daemon.retrieval.agent"])
    assert _violations_of(Path("daemon/service/wire/client.py"), ["daemon.service.runs.service"])
    assert _violations_of(Path("daemon/service/runs/host.py"), ["daemon.service.daemon.server"])
    assert _violations_of(Path("daemon/service/daemon/server.py"), ["daemon.service.commands.evaluation"])
    assert _violations_of(Path("daemon/service/runs/remote.py"), ["daemon.service.wire.client"]) == []
    assert _violations_of(Path("daemon/service/loose.py"), ["daemon.core.models"])


# -- where a name a front imports is defined ------------------------------------------------------


def _module_file(module: str) -> Path | None:
    base = ROOT / module.replace(".", "/")
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@functools.cache
def _bindings(module: str) -> dict[str, tuple[str, str]]:
    """The names ``module`` imports: local name -> (the module it is imported from, its name there)."""
    path = _module_file(module)
    assert path is not None, module
    found: dict[str, tuple[str, str]] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                found[alias.asname or alias.name] = (node.module, alias.name)
    return found


def defined_in(module: str, name: str) -> str:
    """The module that defines ``name`` as ``module`` has it: followed through every re-export (a name of a
    package outside this repository is defined in that package; a submodule is its own definition)."""
    seen: set[tuple[str, str]] = set()
    while (module, name) not in seen:
        seen.add((module, name))
        if _module_file(f"{module}.{name}") is not None:
            return f"{module}.{name}"
        source = _bindings(module).get(name)
        if source is None or _module_file(source[0]) is None:
            return source[0] if source is not None else module
        module, name = source
    return module


def _front_files() -> list[Path]:
    return sorted([*(p for f in FRONTS for p in ROOT.glob(f"daemon/{f}/**/*.py")), *ROOT.glob("mcp_servers/**/*.py")])


def _reexported(path: Path) -> list[tuple[str, str, str]]:
    """(imported from, name, defined in) for each name ``path`` imports from this repository through a module
    that does not define it, into a package a front may not import."""
    here = _floor_of(path.relative_to(ROOT))
    found: list[tuple[str, str, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.ImportFrom) and node.module and node.level == 0):
            continue
        if not node.module.startswith("daemon.") or node.module.split(".")[1] == here:
            continue
        for alias in node.names:
            home = defined_in(node.module, alias.name).split(".")
            if home[0] == "daemon" and len(home) > 1 and home[1] not in FRONT_MAY_IMPORT | {here}:
                found.append((node.module, alias.name, ".".join(home)))
    return found


def test_fronts_import_names_where_a_front_may_find_them_defined() -> None:
    bad = [
        f"{path.relative_to(ROOT)}: {name} from {module} is defined in {home}"
        for path in _front_files()
        for module, name, home in _reexported(path)
        if module not in FACADES
    ]
    assert bad == []


def test_the_facades_are_still_needed() -> None:
    used = {module for path in _front_files() for module, _, _ in _reexported(path)}
    assert set(FACADES) <= used


def test_a_reexported_name_is_traced_to_its_definition(tmp_path: Path) -> None:
    assert defined_in("daemon.service.runs.service", "RunRecord") == "daemon.core.run_models"
    assert defined_in("daemon.service.index.local", "WorkspaceIndex") == "daemon.index.workspace_index"
    assert defined_in("daemon.service.intel", "capabilities") == "daemon.service.intel.capabilities"
    assert defined_in("daemon.service.wire.api", "BaseModel") == "pydantic"


# -- the Workspace port ---------------------------------------------------------------------------


def _daemon_calls(path: Path) -> list[str]:
    """The methods ``path`` sends over a daemon connection itself (``x.call(...)``, ``x.call_model(...)``):
    the ``Methods`` constant's name, or ``<computed>`` when the method is not named by one."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in {"call", "call_model"} or not node.args:
            continue
        first = node.args[0]
        named = isinstance(first, ast.Attribute) and isinstance(first.value, ast.Name) and first.value.id == "Methods"
        found.append(first.attr if named and isinstance(first, ast.Attribute) else "<computed>")
    return found


def test_fronts_ask_search_and_code_intelligence_through_the_workspace_port() -> None:
    """A front holds a ``Workspace`` for search, code intelligence and status and never asks which transport it
    is; over a daemon connection of its own it sends only the daemon's own methods, named as constants."""
    fronts = [p for front in FRONTS for p in ROOT.glob(f"daemon/{front}/**/*.py")] + list(
        ROOT.glob("mcp_servers/**/*.py")
    )
    assert fronts
    bad = [
        f"{path.relative_to(ROOT)}: {method}"
        for path in sorted(fronts)
        for method in _daemon_calls(path)
        if method == "<computed>" or method == "INDEX_SEARCH" or method.startswith("INTEL_")
    ]
    assert bad == []


def test_a_front_sending_a_workspace_method_itself_is_reported(tmp_path: Path) -> None:
    handler = tmp_path / "handler.py"
    handler.write_text(
        "async def f(session, method, request):\n"
        "    await session.call(Methods.INDEX_SEARCH, request, SearchResult)\n"
        "    await session.call(method, request, Result)\n"
        "    await session.call(Methods.DAEMON_STATUS, None, DaemonStatus)\n"
    )
    assert _daemon_calls(handler) == ["INDEX_SEARCH", "<computed>", "DAEMON_STATUS"]
