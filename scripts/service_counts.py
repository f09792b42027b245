"""The service's shape at one or more git revisions, side by side: what issue 37 counted.

Reads each revision's files with ``git`` and the standard library's ``ast`` (nothing is imported or run):

- **places per run operation**: the ``daemon/service/`` modules that write a run operation out: a function
  or method of its name, a class attribute of its name (a declaration), a params class named after it
  (``RunAcceptParams``, ``AcceptParams``), its wire method as a string (``"runs/accept"``) or a constant
  that holds that string (``Methods.RUNS_ACCEPT``). The work below the service (``vcs/``, ``orchestration/``)
  is not counted, as the issue counted;
- **run operations on the wire**: ``runs/*`` method strings plus the ``RunOperation``/``RunLaunch``
  declarations;
- **places that decide daemon or here**: the functions (outside the daemon process's own start/stop) that
  ask whether a daemon runs (name ``daemon_running``, the probe) or take one way or another on a front's
  daemon wish (an ``if`` whose test names ``attach``, ``attach_daemon``, ``standalone``, ``no_daemon``, or
  compares ``daemon`` with a string; a conditional expression that only spells a flag in the vocabulary,
  ``"never" if no_daemon else "start"``, decides nothing);
- **modules in the largest package** (``.py`` files directly in one directory, ``__init__`` included), in
  ``daemon/service/`` and in all of ``daemon/``;
- **import cycles** among ``daemon/`` and ``mcp_servers/`` modules (``scripts/import_cycles.py``);
- **methods** of the run service classes (the ``RunService`` implementations before, the transports after);
- **unit test files for the service** (``tests/unit/service/test_*.py``).

    python scripts/service_counts.py f66f854^ HEAD     # before the split, and now
    python scripts/service_counts.py HEAD --list       # with the modules and functions behind each count
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from import_cycles import cycles, import_graph

ROOT = Path(__file__).resolve().parents[1]
GIT_TIMEOUT_S = 60

OPERATIONS = {"accept": "runs/accept", "cancel": "runs/cancel", "diff": "runs/diff", "list_runs": "runs/list"}
"""The run operations counted, with the wire method each had before (``list_runs`` was ``runs/list``)."""

RUN_CLASSES = ("DaemonRunService", "LocalRunService", "RunService", "DaemonRuns", "HereRuns", "RunHost", "RunWork")
"""The run service's classes whose methods are counted, where a revision has them."""

WISHES = {"attach", "attach_daemon", "standalone", "no_daemon"}
"""Names a front's daemon wish went by."""

LIFECYCLE = {"daemon/service/daemon_process.py", "daemon/service/daemon/process.py"}
"""The daemon's own start and stop ask whether it runs without choosing where a front's work goes."""


def _git(*args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, check=True, timeout=GIT_TIMEOUT_S).stdout


def sources(rev: str, dest: Path) -> dict[str, str]:
    """``rev``'s ``daemon/``, ``mcp_servers/`` and ``tests/unit/`` Python files by path (also written to ``dest``)."""
    archive = _git("archive", "--format=tar", rev, "daemon", "mcp_servers", "tests/unit")
    found: dict[str, str] = {}
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".py"):
                extracted = tar.extractfile(member)
                assert extracted is not None
                text = extracted.read().decode("utf-8")
                found[member.name] = text
                target = dest / member.name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
    return found


def _camel(name: str) -> str:
    return "".join(part.title() for part in name.split("_"))


def _wire_constants(trees: dict[str, ast.Module]) -> dict[str, str]:
    """``NAME = "runs/..."`` anywhere in the service: constant name -> wire method."""
    found: dict[str, str] = {}
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                value = node.value.value
                if isinstance(value, str) and value.startswith("runs/"):
                    found |= {t.id: value for t in node.targets if isinstance(t, ast.Name)}
    return found


def _declared_operations(tree: ast.Module) -> list[str]:
    """Class attributes assigned a ``RunOperation(...)`` or ``RunLaunch(...)``."""
    found: list[str] = []
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for stmt in cls.body:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
                func = stmt.value.func
                if isinstance(func, ast.Name) and func.id in {"RunOperation", "RunLaunch"}:
                    found += [t.id for t in stmt.targets if isinstance(t, ast.Name)]
    return found


def writes_out(tree: ast.Module, name: str, wire: str, constants: dict[str, str]) -> list[str]:
    """How the module writes the operation out (empty: it does not)."""
    params = re.compile(rf"^(Run)?{_camel(name)}(Runs)?Params$")
    if name == "list_runs":
        params = re.compile(r"^(Run)?List(Runs)?Params$")
    how: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            how.add("def")
        elif isinstance(node, ast.ClassDef):
            if params.match(node.name):
                how.add("params class")
            for stmt in node.body:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else []
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    how.add("declaration")
        elif isinstance(node, ast.Constant) and node.value in {wire, f"runs/{name}"}:
            how.add("wire string")
        elif isinstance(node, ast.Attribute) and constants.get(node.attr) in {wire, f"runs/{name}"}:
            how.add("method constant")
    return sorted(how)


def _mentions_wish(test: ast.expr) -> bool:
    for node in ast.walk(test):
        if isinstance(node, ast.Name) and node.id in WISHES:
            return True
        if isinstance(node, ast.Attribute) and node.attr in WISHES:
            return True
        if (
            isinstance(node, ast.Compare)
            and isinstance(node.left, ast.Name)
            and node.left.id == "daemon"
            and any(isinstance(c, ast.Constant) and isinstance(c.value, str) for c in node.comparators)
        ):
            return True
    return False


def _outer_functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Module-level functions and methods (a nested function counts with the one around it)."""
    bodies = [tree.body, *(n.body for n in tree.body if isinstance(n, ast.ClassDef))]
    return [s for body in bodies for s in body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)]


def deciders(path: str, tree: ast.Module) -> list[str]:
    """The functions of ``path`` that decide daemon or here (see the module docstring)."""
    if path in LIFECYCLE or path.startswith("tests/"):
        return []
    found: list[str] = []
    for fn in _outer_functions(tree):
        if fn.name == "daemon_running":
            continue  # the probe itself
        asks = any(isinstance(n, ast.Name) and n.id == "daemon_running" for n in ast.walk(fn))
        branches = any(isinstance(n, ast.If) and _mentions_wish(n.test) for n in ast.walk(fn))
        if asks or branches:
            found.append(f"{path}:{fn.name}")
    return found


def class_methods(trees: dict[str, ast.Module]) -> dict[str, int]:
    """Functions (methods and properties) defined directly in each of ``RUN_CLASSES`` the revision has."""
    found: dict[str, int] = {}
    for tree in trees.values():
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name in RUN_CLASSES):
            found[cls.name] = sum(isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) for s in cls.body)
    return found


@dataclass
class Shape:
    rev: str
    per_operation: dict[str, list[tuple[str, list[str]]]] = field(default_factory=dict)
    operations: list[str] = field(default_factory=list)
    deciders: list[str] = field(default_factory=list)
    largest_service: tuple[str, int] = ("", 0)
    largest: tuple[str, int] = ("", 0)
    service_modules: int = 0
    cycles: list[list[str]] = field(default_factory=list)
    methods: dict[str, int] = field(default_factory=dict)
    service_unit_tests: int = 0


def shape(rev: str) -> Shape:
    with tempfile.TemporaryDirectory() as tmp:
        files = sources(rev, Path(tmp))
        found = Shape(rev)
        found.cycles = cycles(import_graph(Path(tmp)))
    trees = {path: ast.parse(text) for path, text in files.items()}
    service = {p: t for p, t in trees.items() if p.startswith("daemon/service/")}
    constants = _wire_constants(service)
    for name, wire in OPERATIONS.items():
        places = [(p, how) for p, t in sorted(service.items()) if (how := writes_out(t, name, wire, constants))]
        found.per_operation[name] = places
    declared = {op for t in service.values() for op in _declared_operations(t)}
    on_wire = {m.removeprefix("runs/") for m in constants.values()} - {"", "subscribe", "progress"}
    found.operations = sorted(declared | on_wire)
    found.deciders = [d for p, t in sorted(trees.items()) for d in deciders(p, t)]
    code = [p for p in files if not p.startswith("tests/")]
    packages = Counter(str(Path(p).parent) for p in code)
    found.largest = max(packages.items(), key=lambda kv: kv[1])
    in_service = {k: v for k, v in packages.items() if k.startswith("daemon/service")}
    found.largest_service = max(in_service.items(), key=lambda kv: kv[1])
    found.service_modules = sum(in_service.values())
    found.methods = class_methods(trees)
    found.service_unit_tests = sum(
        1 for p in files if p.startswith("tests/unit/service/") and Path(p).name.startswith("test_")
    )
    return found


def report(shapes: list[Shape], *, listing: bool) -> list[str]:
    width = max(14, *(len(s.rev) for s in shapes))
    lines = ["".ljust(52) + "".join(s.rev.rjust(width) for s in shapes)]

    def row(label: str, values: list[object]) -> None:
        lines.append(label.ljust(52) + "".join(str(v).rjust(width) for v in values))

    for name in OPERATIONS:
        row(f"service modules writing out {name}", [len(s.per_operation[name]) for s in shapes])
    row("run operations (runs/* methods, declarations)", [len(s.operations) for s in shapes])
    row("places deciding daemon or here (functions)", [len(s.deciders) for s in shapes])
    row("  in modules", [len({d.split(":")[0] for d in s.deciders}) for s in shapes])
    row("modules in daemon/service/", [s.service_modules for s in shapes])
    row("largest service package (modules)", [f"{s.largest_service[1]}" for s in shapes])
    row("largest package in daemon/ (modules)", [f"{s.largest[1]}" for s in shapes])
    row("import cycles (daemon/, mcp_servers/)", [len(s.cycles) for s in shapes])
    for cls in RUN_CLASSES:
        row(f"methods of {cls}", [s.methods.get(cls, "-") for s in shapes])
    row("unit test files for service/", [s.service_unit_tests for s in shapes])
    if listing:
        for s in shapes:
            lines.append(f"\n== {s.rev}")
            lines.append(f"largest service package: {s.largest_service[0]}; largest package: {s.largest[0]}")
            for name, places in s.per_operation.items():
                lines.append(f"{name}: " + "; ".join(f"{p} ({', '.join(how)})" for p, how in places))
            lines.append("deciding daemon or here: " + "; ".join(s.deciders))
            lines += ["cycle: " + ", ".join(component) for component in s.cycles]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("revs", nargs="+", help="git revisions to compare (e.g. f66f854^ HEAD)")
    parser.add_argument("--list", action="store_true", help="also list what each count counted")
    args = parser.parse_args(argv)
    print("\n".join(report([shape(rev) for rev in args.revs], listing=args.list)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
