"""Dependencies point one way: fronts -> service -> orchestration -> retrieval | vcs -> index | intel -> core."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[2]
LAYERS = {"core": 0, "index": 1, "intel": 1, "retrieval": 2, "vcs": 2, "orchestration": 3, "service": 4}
FRONTS = {"cli", "lsp", "acp"}


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


def _violations() -> list[str]:
    bad: list[str] = []
    for path in sorted([*ROOT.glob("daemon/**/*.py"), *ROOT.glob("mcp_servers/**/*.py")]):
        rel = path.relative_to(ROOT)
        top, second = rel.parts[0], (rel.parts[1] if len(rel.parts) > 1 else "")
        here = second if top == "daemon" and path.parent != ROOT / "daemon" else top
        for module in _imports(path):
            parts = module.split(".")
            if parts[0] == "mcp_servers" and here != "mcp_servers":
                bad.append(f"{rel}: imports {module} (only the MCP front itself)")
            if parts[0] != "daemon" or len(parts) < 2:
                continue
            there = parts[1]
            if here in LAYERS and there in LAYERS and LAYERS[there] > LAYERS[here]:
                bad.append(f"{rel}: {here} imports {module} (a lower layer reaching up)")
            if here in LAYERS and there in FRONTS:
                bad.append(f"{rel}: {here} imports the front {module}")
            if here in FRONTS and there in FRONTS and there != here:
                bad.append(f"{rel}: front {here} imports front {module}")
            if here == "core" and there not in {"core"}:
                bad.append(f"{rel}: core imports {module} (core imports only stdlib and pydantic)")
    return bad


def test_imports_follow_the_layering() -> None:
    assert _violations() == []


def test_the_scan_sees_the_packages_it_checks() -> None:
    scanned = {p.relative_to(ROOT).parts[1] for p in ROOT.glob("daemon/*/*.py")}
    assert {"core", "index", "intel", "service", "orchestration", "cli", "lsp"} <= scanned
