"""Import cycles among the modules of ``daemon/`` (and ``mcp_servers/``): prints each cycle, exits 1 when any.

Reads every module with the standard library's ``ast`` (nothing is imported), takes its top-level and
function-level ``import``/``from ... import`` statements of this package (those under ``if TYPE_CHECKING:``
are left out: they never run), and finds the strongly connected components of that graph (Tarjan). Each
component of more than one module is a cycle; one shortest loop through it is printed as an example.

    python scripts/import_cycles.py            # cycles, with an example loop each
    python scripts/import_cycles.py --count    # one line: modules, import edges, cycles
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("daemon", "mcp_servers")


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(tree: ast.Module, here: str, is_package: bool) -> set[str]:
    """The dotted names ``tree`` imports (``from a.b import c`` gives ``a.b`` and ``a.b.c``), at run time."""
    found: set[str] = set()
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _type_checking_only(node):
            skip |= {id(child) for stmt in node.body for child in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here.split(".") if is_package else here.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Each module of the packages and the modules of the packages it imports."""
    paths = {module_name(p, root): p for package in PACKAGES for p in (root / package).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets = _imported(tree, name, path.name == "__init__.py")
        graph[name] = {t for t in targets if t in paths and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted, largest first (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        work: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return sorted(found, key=lambda c: (-len(c), c))


def example_loop(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One shortest loop through the component's first module, staying inside the component."""
    members = set(component)
    start = component[0]
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(graph[node] & members):
            if nxt == start:
                loop = [node]
                while loop[-1] != start:
                    loop.append(came_from[loop[-1]])
                return [*reversed(loop), start]
            if nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    return component


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--count", action="store_true", help="print one line of counts only")
    args = parser.parse_args(argv)
    graph = import_graph()
    found = cycles(graph)
    edges = sum(len(targets) for targets in graph.values())
    if args.count:
        print(f"modules {len(graph)}, import edges {edges}, cycles {len(found)}")
        return 1 if found else 0
    for component in found:
        print(f"cycle of {len(component)} modules: {', '.join(component)}")
        print("  e.g. " + " -> ".join(example_loop(graph, component)))
    print(f"{len(found)} import cycles among {len(graph)} modules ({edges} import edges)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
