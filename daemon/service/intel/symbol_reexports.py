"""Public dotted names through package re-exports: ``requests.get`` -> ``get`` in ``requests/api.py``.

Agents write the name a package exports, not the file that defines it. A module's *bindings* are
the names its import statements bring in: Python ``from .api import get``, ``from .api import get
as fetch``, ``from . import utils``, ``from pkg.api import *``; TypeScript/JavaScript ``export { x }
from './y'``, ``export { x as z } from './y'``, ``export * from './y'``, ``export * as ns from './y'``
and ``import { x } from './y'``. :func:`follow` starts at the modules whose dotted path ends with a
prefix of the name (``requests`` -> ``src/requests/__init__.py``) and follows bindings, star
re-exports and submodules (bounded depth, each module once) until a file defines the rest of the
name. Only files the workspace scan lists are read, so ignored, secret and too-large files stay out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from daemon.core.regular_files import read_regular

__all__ = ["Binding", "ModuleBindings", "follow", "module_bindings", "module_parts", "read_workspace_file"]

_MAX_DEPTH = 6
_TS_SUFFIXES = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs")
_INDEX_STEMS = frozenset({"__init__", "index", "mod", "lib"})

_PY_FROM = re.compile(
    r"^[ \t]*from[ \t]+(?P<module>\.*[\w.]*)[ \t]+import[ \t]+(?P<names>\([^)]*\)|[^\n#]*(?:\\\n[^\n#]*)*)",
    re.MULTILINE,
)
_TS_NAMED = re.compile(r"\b(?:export|import)\s+(?:type\s+)?\{(?P<names>[^}]*)\}\s*from\s*['\"](?P<module>[^'\"]+)['\"]")
_TS_STAR = re.compile(r"\bexport\s+\*\s*(?:as\s+(?P<alias>[\w$]+)\s*)?from\s*['\"](?P<module>[^'\"]+)['\"]")


@dataclass(frozen=True, slots=True)
class Binding:
    """``name`` in a module is ``original`` of ``source`` (``original`` None: ``name`` is the module itself)."""

    source: str
    original: str | None


@dataclass(slots=True)
class ModuleBindings:
    """What a module's import/export statements bring in."""

    names: dict[str, list[Binding]] = field(default_factory=dict[str, list[Binding]])
    stars: list[str] = field(default_factory=list[str])


def module_parts(path: str) -> list[str]:
    """The dotted module path of a file: ``src/requests/__init__.py`` -> ``[src, requests]``."""
    pure = PurePosixPath(path)
    stem = pure.name
    for suffix in (".d.ts", *(s for s in _TS_SUFFIXES if s != ".d.ts"), ".py", ".pyi", ".rs", ".go"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    else:
        stem = pure.stem
    parts = [*pure.parent.parts, stem] if pure.parent.as_posix() != "." else [stem]
    if parts and parts[-1] in _INDEX_STEMS:
        parts = parts[:-1]
    return parts


class _Files:
    """The scanned files, by path and by dotted module path."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = frozenset(paths)
        self.by_module: dict[tuple[str, ...], list[str]] = {}
        for path in sorted(paths):
            self.by_module.setdefault(tuple(module_parts(path)), []).append(path)

    def ending_with(self, prefix: Sequence[str]) -> list[str]:
        """Files whose module path ends with ``prefix`` (``requests`` -> ``src/requests/__init__.py``)."""
        wanted = tuple(prefix)
        out: list[str] = []
        for module, paths in self.by_module.items():
            if len(module) >= len(wanted) and module[len(module) - len(wanted) :] == wanted:
                out.extend(paths)
        return sorted(out, key=lambda p: (len(p), p))

    def python_module(self, directory: PurePosixPath, dotted: str) -> str | None:
        base = directory.joinpath(*dotted.split(".")) if dotted else directory
        for candidate in (f"{base.as_posix()}.py", f"{base.as_posix()}.pyi", (base / "__init__.py").as_posix()):
            normalized = _normalize(candidate)
            if normalized in self.paths:
                return normalized
        return None

    def script_module(self, directory: PurePosixPath, spec: str) -> str | None:
        base = _normalize((directory / spec).as_posix())
        if base is None:
            return None
        stripped = re.sub(r"\.(?:m|c)?jsx?$", "", base)
        candidates = [base, *(stripped + s for s in _TS_SUFFIXES), *(f"{stripped}/index{s}" for s in _TS_SUFFIXES)]
        return next((c for c in candidates if c in self.paths), None)


def _normalize(path: str) -> str | None:
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)


def _python_names(text: str) -> list[tuple[str, str]]:
    """``(original, local)`` pairs of an import list (``a, b as c`` or ``(a,\n b)`` or ``*``)."""
    cleaned = text.replace("\\\n", " ").strip().strip("()")
    out: list[tuple[str, str]] = []
    for item in cleaned.split(","):
        words = item.split("#")[0].split()
        if len(words) == 1:
            out.append((words[0], words[0]))
        elif len(words) == 3 and words[1] == "as":
            out.append((words[0], words[2]))
    return out


def module_bindings(path: str, text: str, files: _Files) -> ModuleBindings:
    """The bindings of one module (see the module docstring); unresolvable imports are left out."""
    if path.endswith((".py", ".pyi")):
        return _python_bindings(path, text, files)
    return _script_bindings(path, text, files)


def _python_bindings(path: str, text: str, files: _Files) -> ModuleBindings:
    bindings = ModuleBindings()
    directory = PurePosixPath(path).parent
    for found in _PY_FROM.finditer(text):
        module = found.group("module")
        dots = len(module) - len(module.lstrip("."))
        dotted = module[dots:]
        base = directory
        for _ in range(max(dots - 1, 0)):
            base = base.parent
        for original, local in _python_names(found.group("names")):
            if dots:
                source = files.python_module(base, dotted)
                submodule = files.python_module(base, f"{dotted}.{original}" if dotted else original)
            else:
                source = next(iter(files.ending_with(dotted.split("."))), None) if dotted else None
                submodule = next(iter(files.ending_with([*dotted.split("."), original])), None)
            if original == "*":
                bindings.stars.extend([source] if source is not None else [])
                continue
            if source is not None and source != path:
                bindings.names.setdefault(local, []).append(Binding(source, original))
            if submodule is not None and submodule != path:
                bindings.names.setdefault(local, []).append(Binding(submodule, None))
    return bindings


def _script_bindings(path: str, text: str, files: _Files) -> ModuleBindings:
    bindings = ModuleBindings()
    directory = PurePosixPath(path).parent
    for found in _TS_NAMED.finditer(text):
        source = files.script_module(directory, found.group("module"))
        if source is None or source == path:
            continue
        for item in found.group("names").split(","):
            words = item.split()
            words = words[1:] if words[:1] == ["type"] else words
            if len(words) == 1:
                bindings.names.setdefault(words[0], []).append(Binding(source, words[0]))
            elif len(words) == 3 and words[1] == "as":
                bindings.names.setdefault(words[2], []).append(Binding(source, words[0]))
    for found in _TS_STAR.finditer(text):
        source = files.script_module(directory, found.group("module"))
        if source is None or source == path:
            continue
        if alias := found.group("alias"):
            bindings.names.setdefault(alias, []).append(Binding(source, None))
        else:
            bindings.stars.append(source)
    return bindings


def follow(
    name: Sequence[str],
    paths: Sequence[str],
    *,
    read: Callable[[str], str | None],
    defines: Callable[[str, str], bool],
) -> list[tuple[str, str, str]]:
    """``(file, qualified name in it, the module that exports it)`` for a dotted ``name`` reached by re-exports.

    ``paths``: the workspace's scanned files (relative); ``read(path)``: a file's text or None;
    ``defines(path, qualified)``: whether ``path`` defines ``qualified``. The longest module prefix
    that leads somewhere wins.
    """
    files = _Files(paths)
    cache: dict[str, ModuleBindings] = {}

    def bindings_of(path: str) -> ModuleBindings:
        if path not in cache:
            text = read(path)
            cache[path] = module_bindings(path, text, files) if text is not None else ModuleBindings()
        return cache[path]

    def walk(path: str, rest: list[str], depth: int, seen: set[tuple[str, str]]) -> list[tuple[str, str]]:
        key = (path, ".".join(rest))
        if not rest or depth > _MAX_DEPTH or key in seen:
            return []
        seen.add(key)
        if defines(path, ".".join(rest)):
            return [(path, ".".join(rest))]
        module = bindings_of(path)
        out: list[tuple[str, str]] = []
        for binding in module.names.get(rest[0], []):
            nxt = rest[1:] if binding.original is None else [binding.original, *rest[1:]]
            out.extend(walk(binding.source, nxt, depth + 1, seen))
        if not out:
            for star in module.stars:
                out.extend(walk(star, rest, depth + 1, seen))
        return out

    for split in range(len(name) - 1, 0, -1):
        prefix, rest = list(name[:split]), list(name[split:])
        found: dict[tuple[str, str], str] = {}
        for start in files.ending_with(prefix):
            for target in walk(start, rest, 0, set()):
                if target[0] != start:
                    found.setdefault(target, start)
        if found:
            return [(path, qualified, via) for (path, qualified), via in found.items()]
    return []


def read_workspace_file(root: Path, max_bytes: int) -> Callable[[str], str | None]:
    """A ``read`` for :func:`follow`: the text of a workspace file, None when unreadable or too large."""

    def read(path: str) -> str | None:
        try:
            data = read_regular(root / path, max_bytes + 1)
            return None if len(data) > max_bytes else data.decode("utf-8", errors="replace")
        except OSError:
            return None

    return read
