"""Dependencies point one way: fronts -> service -> orchestration -> retrieval | vcs -> index | intel -> core.

Fronts (``cli``, ``lsp``, ``acp``, ``mcp_servers``) reach the rest only through ``service`` and
``core``, plus the configuration floor (``config``, ``errors`` and the top-level modules config itself
stands on: ``trust``, ``workspace_roots``, ``logging_setup``), and ask search and code intelligence
through the ``Workspace`` port, never by sending those methods over a daemon connection of their own.
See docs/architecture.md.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[2]
LAYERS = {"core": 0, "index": 1, "intel": 1, "retrieval": 2, "vcs": 2, "orchestration": 3, "service": 4}
FRONTS = {"cli", "lsp", "acp"}
# what a front may import besides its own package
FRONT_MAY_IMPORT = {"service", "core", "config", "errors", "trust", "workspace_roots", "logging_setup"}


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


def _violations_of(rel: Path, modules: list[str]) -> list[str]:
    """What is wrong with the file at ``rel`` (relative to the root) importing ``modules``."""
    bad: list[str] = []
    top, second = rel.parts[0], (rel.parts[1] if len(rel.parts) > 1 else "")
    here = second if top == "daemon" and len(rel.parts) > 2 else top
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
        if here in LAYERS and there in FRONTS:
            bad.append(f"{rel}: {here} imports the front {module}")
        if here in FRONTS and there in FRONTS and there != here:
            bad.append(f"{rel}: front {here} imports front {module}")
        if here == "core" and there not in {"core"}:
            bad.append(f"{rel}: core imports {module} (core imports only stdlib and pydantic)")
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
            "vcs.models",
            "retrieval.agent",
        ):
            assert _violations_of(Path(front), [f"daemon.{lower}"]), (front, lower)
        allowed = ["daemon.service.daemon.api", "daemon.core.models", "daemon.config", "daemon.errors", "daemon.trust"]
        assert _violations_of(Path(front), allowed) == []


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
