"""The workspace's dependencies, with their exact versions, read from its manifests and lock files.

Read (under the workspace root, at most ``MAX_DEPTH`` directories down; ``.git``, ``node_modules``,
virtual environments, ``vendor``, ``target``, test data (``fixtures``, ``testdata``) and hidden
directories skipped; symbolic links never
followed):

- ``requirements*.txt`` (and ``requirements/*.txt``): ``name==version`` (extras, markers, hashes and
  line continuations allowed); a requirement without ``==`` has no exact version;
- ``pyproject.toml``: ``[project]`` dependencies and optional dependencies, ``[dependency-groups]``
  and ``[tool.poetry]`` dependencies: exact only when pinned with ``==``, otherwise the name alone
  (the lock file beside it gives the version);
- ``uv.lock``, ``poetry.lock``, ``Cargo.lock``: every ``[[package]]`` with a version (the project's
  own packages, those without a registry source, are left out);
- ``package-lock.json`` (lockfile versions 1 to 3): every installed package (links left out);
- ``go.mod``: ``require`` lines (``// indirect`` included), ``replace`` directives applied;
  ``go.sum`` only where no ``go.mod`` lies beside it (it also lists versions the build does not
  select).

A file that cannot be read or parsed is a ``problem`` (reported, the others still read). Every
dependency keeps where it was declared (``file:line``) so a finding can be cited.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from daemon.core.jsonrpc import guarded_json
from daemon.core.regular_files import read_regular

__all__ = ["MAX_DEPTH", "Dependency", "DependencyScan", "normalize_name", "read_dependencies"]


MAX_DEPTH = 4
_MAX_BYTES = 20 * 1024 * 1024
_MAX_DEPTH = 512
"""Deepest nesting a JSON lock file is read to (decoded without recursing: a deeper one is a problem, skipped)."""
_SKIP_DIRS = frozenset(
    {"node_modules", "vendor", "target", "dist", "build", "site-packages", "__pycache__", "venv", "env"}
    | {"fixtures", "testdata"}
)
_REQ_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")
_EXACT = re.compile(r"^===?\s*([A-Za-z0-9][A-Za-z0-9.+!_-]*)\s*$")
_PEP503 = re.compile(r"[-_.]+")


def normalize_name(ecosystem: str, name: str) -> str:
    """The name as the ecosystem compares it: PEP 503 for PyPI, lower case for crates.io, as is otherwise."""
    if ecosystem == "PyPI":
        return _PEP503.sub("-", name).lower()
    if ecosystem == "crates.io":
        return name.lower()
    return name


@dataclass(frozen=True, kw_only=True)
class Dependency:
    ecosystem: str
    name: str
    version: str | None
    """The exact version, or None when the manifest gives only a constraint."""
    file: str
    """Workspace-relative POSIX path of the manifest or lock file."""
    line: int

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(kw_only=True)
class DependencyScan:
    files: list[str] = field(default_factory=list[str])
    dependencies: list[Dependency] = field(default_factory=list[Dependency])
    problems: list[str] = field(default_factory=list[str])

    def exact(self) -> dict[tuple[str, str, str], list[Dependency]]:
        """(ecosystem, normalized name, version) -> where it is declared, for every exactly-versioned dependency."""
        out: dict[tuple[str, str, str], list[Dependency]] = {}
        for dep in self.dependencies:
            if dep.version is not None:
                out.setdefault((dep.ecosystem, normalize_name(dep.ecosystem, dep.name), dep.version), []).append(dep)
        return out

    def unversioned(self) -> list[Dependency]:
        """Declared without an exact version and locked nowhere in the workspace."""
        locked = {(k[0], k[1]) for k in self.exact()}
        seen: set[tuple[str, str]] = set()
        out: list[Dependency] = []
        for dep in self.dependencies:
            key = (dep.ecosystem, normalize_name(dep.ecosystem, dep.name))
            if dep.version is None and key not in locked and key not in seen:
                seen.add(key)
                out.append(dep)
        return out


def _walk(root: Path, max_depth: int) -> Iterator[Path]:
    for current, dirs, files in os.walk(root, followlinks=False):
        here = Path(current)
        depth = len(here.relative_to(root).parts)
        dirs[:] = sorted(
            d
            for d in dirs
            if depth < max_depth
            and not d.startswith(".")
            and d not in _SKIP_DIRS
            and not (here / d / "pyvenv.cfg").exists()
        )
        for name in sorted(files):
            path = here / name
            if not path.is_symlink():
                yield path


def _wanted(path: Path) -> bool:
    name = path.name
    if name in ("pyproject.toml", "uv.lock", "poetry.lock", "package-lock.json", "go.mod", "go.sum", "Cargo.lock"):
        return True
    return name.endswith(".txt") and (name.startswith("requirements") or path.parent.name == "requirements")


def read_dependencies(root: Path, *, max_depth: int = MAX_DEPTH) -> DependencyScan:
    """Every dependency the manifests and lock files under ``root`` declare, at most ``max_depth`` directories
    down (0: the root's own files); blocking, run it in a thread."""
    scan = DependencyScan()
    root = root.resolve()
    paths = [p for p in _walk(root, max_depth) if _wanted(p)]
    with_go_mod = {p.parent for p in paths if p.name == "go.mod"}
    for path in paths:
        if path.name == "go.sum" and path.parent in with_go_mod:
            continue
        rel = path.relative_to(root).as_posix()
        try:
            data = read_regular(path, _MAX_BYTES + 1)
            if len(data) > _MAX_BYTES:
                scan.problems.append(f"{rel}: larger than {_MAX_BYTES // (1024 * 1024)} MiB, not read")
                continue
            text = data.decode("utf-8")
            found = list(_READERS[_reader_for(path)](text, rel))
        except (OSError, UnicodeDecodeError, ValueError, tomllib.TOMLDecodeError, RecursionError) as exc:
            scan.problems.append(f"{rel}: cannot be read as {_reader_for(path)}: {exc}")
            continue
        scan.files.append(rel)
        scan.dependencies.extend(found)
    return scan


def _reader_for(path: Path) -> str:
    return "requirements" if path.suffix == ".txt" else path.name


def _line_of(lines: list[str], needle: str, start: int = 0) -> int:
    for i in range(start, len(lines)):
        if needle in lines[i]:
            return i + 1
    return 1


# -- Python -------------------------------------------------------------------------------------


def _requirement(spec: str, rel: str, line: int) -> Dependency | None:
    spec = spec.split(";", 1)[0].strip()
    match = _REQ_NAME.match(spec)
    if match is None or "://" in spec or spec.startswith(("-", ".", "/")):
        return None
    name, rest = match.group(1), match.group(3).strip()
    exact = _EXACT.match(rest)
    return Dependency(ecosystem="PyPI", name=name, version=exact.group(1) if exact else None, file=rel, line=line)


def _requirements(text: str, rel: str) -> Iterator[Dependency]:
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start = i
        logical = lines[i]
        while logical.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            logical = logical.rstrip()[:-1] + " " + lines[i]
        i += 1
        logical = re.sub(r"(^|\s)#.*$", "", logical)
        logical = re.sub(r"\s--hash[= ]\S+", "", logical).strip()
        if not logical or logical.startswith("-"):
            continue
        dep = _requirement(logical, rel, start + 1)
        if dep is not None:
            yield dep


def _pyproject(text: str, rel: str) -> Iterator[Dependency]:
    data = tomllib.loads(text)
    lines = text.splitlines()
    specs: list[str] = []
    project = cast("dict[str, Any]", data.get("project") or {})
    specs += [s for s in cast("list[Any]", project.get("dependencies") or []) if isinstance(s, str)]
    for group in cast("dict[str, Any]", project.get("optional-dependencies") or {}).values():
        specs += [s for s in cast("list[Any]", group or []) if isinstance(s, str)]
    for group in cast("dict[str, Any]", data.get("dependency-groups") or {}).values():
        specs += [s for s in cast("list[Any]", group or []) if isinstance(s, str)]
    for spec in specs:
        name = spec.split(";", 1)[0].strip()
        dep = _requirement(name, rel, _line_of(lines, f'"{spec}'))
        if dep is not None:
            yield dep
    poetry = cast("dict[str, Any]", cast("dict[str, Any]", data.get("tool") or {}).get("poetry") or {})
    groups = cast("dict[str, Any]", poetry.get("group") or {}).values()
    tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
    tables += [cast("dict[str, Any]", g).get("dependencies") for g in groups if isinstance(g, dict)]
    for table in tables:
        if not isinstance(table, dict):
            continue
        for name, value in cast("dict[str, Any]", table).items():
            if name.lower() != "python":
                version = _poetry_exact(value)
                yield Dependency(ecosystem="PyPI", name=name, version=version, file=rel, line=_line_of(lines, name))


def _poetry_exact(value: Any) -> str | None:
    """Poetry's constraint as an exact version: ``"1.2.3"`` and ``"==1.2.3"`` are, ``"^1.2"`` is not."""
    raw = cast("dict[str, Any]", value).get("version") if isinstance(value, dict) else value
    exact = re.fullmatch(r"(?:==)?\s*(\d[\w.+!-]*)", raw.strip()) if isinstance(raw, str) else None
    return exact.group(1) if exact else None


def _toml_packages(text: str, rel: str, ecosystem: str, *, registry: str) -> Iterator[Dependency]:
    data = tomllib.loads(text)
    lines = text.splitlines()
    cursor = 0
    for package in cast("list[Any]", data.get("package") or []):
        if not isinstance(package, dict):
            continue
        pkg = cast("dict[str, Any]", package)
        name, version = pkg.get("name"), pkg.get("version")
        if not isinstance(name, str) or not isinstance(version, str):
            continue
        line = _line_of(lines, f'name = "{name}"', cursor)
        cursor = line
        source = pkg.get("source")
        if registry == "uv" and isinstance(source, dict) and "registry" not in source and "git" not in source:
            continue  # the workspace's own (editable, virtual, path) packages
        if registry == "cargo" and not isinstance(source, str):
            continue  # workspace members and path dependencies
        yield Dependency(ecosystem=ecosystem, name=name, version=version, file=rel, line=line)


def _uv_lock(text: str, rel: str) -> Iterator[Dependency]:
    return _toml_packages(text, rel, "PyPI", registry="uv")


def _poetry_lock(text: str, rel: str) -> Iterator[Dependency]:
    return _toml_packages(text, rel, "PyPI", registry="poetry")


def _cargo_lock(text: str, rel: str) -> Iterator[Dependency]:
    return _toml_packages(text, rel, "crates.io", registry="cargo")


# -- npm ----------------------------------------------------------------------------------------


def _package_lock(text: str, rel: str) -> Iterator[Dependency]:
    data = guarded_json(text, max_depth=_MAX_DEPTH)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    lines = text.splitlines()
    lock = cast("dict[str, Any]", data)
    packages = lock.get("packages")
    if isinstance(packages, dict):
        for key, value in cast("dict[str, Any]", packages).items():
            if not key or "node_modules/" not in key or not isinstance(value, dict):
                continue
            entry = cast("dict[str, Any]", value)
            version = entry.get("version")
            if entry.get("link") or not isinstance(version, str):
                continue
            name = entry.get("name") if isinstance(entry.get("name"), str) else key.rsplit("node_modules/", 1)[1]
            yield Dependency(
                ecosystem="npm", name=str(name), version=version, file=rel, line=_line_of(lines, f'"{key}"')
            )
        return
    yield from _lock_v1(cast("dict[str, Any]", lock.get("dependencies") or {}), rel, lines)


def _lock_v1(deps: dict[str, Any], rel: str, lines: list[str]) -> Iterator[Dependency]:
    for name, value in deps.items():
        if not isinstance(value, dict):
            continue
        entry = cast("dict[str, Any]", value)
        version = entry.get("version")
        if isinstance(version, str) and not version.startswith(("file:", "link:", "git")):
            yield Dependency(ecosystem="npm", name=name, version=version, file=rel, line=_line_of(lines, f'"{name}"'))
        yield from _lock_v1(cast("dict[str, Any]", entry.get("dependencies") or {}), rel, lines)


# -- Go -----------------------------------------------------------------------------------------

_GO_REQ = re.compile(r"^\s*(?:require\s+)?([^\s()]+)\s+(v[^\s]+)")
_GO_REPLACE = re.compile(r"^\s*(?:replace\s+)?([^\s()]+)(?:\s+v\S+)?\s+=>\s+(\S+)(?:\s+(v\S+))?")


def _go_mod(text: str, rel: str) -> Iterator[Dependency]:
    block: str | None = None
    required: list[tuple[str, str, int]] = []
    replaced: dict[str, tuple[str, str] | None] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("//", 1)[0].rstrip()
        stripped = line.strip()
        if block is not None:
            if stripped == ")":
                block = None
                continue
        elif stripped.endswith("(") and stripped.split()[0] in ("require", "replace", "exclude", "retract"):
            block = stripped.split()[0]
            continue
        kind = block or (stripped.split()[0] if stripped else "")
        if kind == "require":
            match = _GO_REQ.match(line)
            if match:
                required.append((match.group(1), match.group(2), number))
        elif kind == "replace":
            match = _GO_REPLACE.match(line)
            if match:
                target, version = match.group(2), match.group(3)
                replaced[match.group(1)] = (target, version) if version else None
    for module, version, number in required:
        if module in replaced:
            swap = replaced[module]
            if swap is None:
                continue  # replaced by a local directory
            module, version = swap
        yield Dependency(ecosystem="Go", name=module, version=version, file=rel, line=number)


def _go_sum(text: str, rel: str) -> Iterator[Dependency]:
    seen: set[tuple[str, str]] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if len(parts) < 2:
            continue
        module, version = parts[0], parts[1].removesuffix("/go.mod")
        if (module, version) not in seen:
            seen.add((module, version))
            yield Dependency(ecosystem="Go", name=module, version=version, file=rel, line=number)


_READERS = {
    "requirements": _requirements,
    "pyproject.toml": _pyproject,
    "uv.lock": _uv_lock,
    "poetry.lock": _poetry_lock,
    "Cargo.lock": _cargo_lock,
    "package-lock.json": _package_lock,
    "go.mod": _go_mod,
    "go.sum": _go_sum,
}
