"""The library-docs source: the public API and docs of the packages the workspace depends on, read from
its own environment, searched as their own scope (never mixed into the workspace index).

Which packages: the workspace's direct dependencies (its root's ``pyproject.toml`` and
``requirements*.txt`` via :mod:`daemon.retrieval.manifests`; ``package.json`` ``dependencies``/``devDependencies``/
``peerDependencies``), found installed in the workspace's environment:

- Python: the virtual environments at the workspace root (``.venv``, ``venv``, ``env``: a directory
  holding ``pyvenv.cfg``), ``lib/python*/site-packages``: the distribution's ``*.dist-info``
  (``Name`` in ``METADATA``, normalized as PEP 503 says) and the modules its ``RECORD`` installs;
  ``.py`` files, tests and vendored copies left out;
- npm: ``node_modules/<name>`` (scoped names too): its ``.d.ts`` declarations and ``README.md``.

Each library's files are chunked by Tree-sitter (functions, classes, methods; documents by
section) once per process and version (``LibraryShelf`` caches them, at most ``MAX_FILES`` files
and ``MAX_BYTES`` per library). A query naming a library (its name or import name) is answered by that library's public
chunks (no ``_``-prefixed last name) that share the most terms with it: the chunk's own name
counting twice its text, a symbol the query names exactly first, of equal matches the plainest
name first; a query naming no installed dependency gets nothing from this source. Every piece cites
the file inside the environment (a workspace-relative path such as
``.venv/lib/python3.12/site-packages/httpx/_client.py``), its lines and its symbol, and names the
library and version.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from daemon.core.jsonrpc import guarded_json
from daemon.core.languages import language_for_path
from daemon.core.models import Chunk, SymbolKind
from daemon.core.regular_files import read_regular, read_regular_text
from daemon.intel.chunking import chunk_source
from daemon.retrieval.lexical import terms
from daemon.retrieval.manifests import normalize_name, read_dependencies
from daemon.retrieval.models import Attribution, Candidate, SourceName
from daemon.retrieval.queries import QueryPlan

__all__ = ["MAX_BYTES", "MAX_FILES", "Library", "LibraryDocsSource", "LibraryShelf", "installed_libraries"]

logger = logging.getLogger(__name__)

MAX_FILES = 600
MAX_BYTES = 8 * 1024 * 1024
_MAX_META_BYTES = 4 * 1024 * 1024
_MAX_DEPTH = 256
"""Deepest nesting a package.json is read to (decoded without recursing: a deeper one is skipped)."""
"""A METADATA, RECORD or package.json is read up to this size."""
_SKIP_PARTS = frozenset({"tests", "test", "testing", "_vendor", "vendor", "__pycache__", "examples", "docs"})
_VENVS = (".venv", "venv", "env")


@dataclass(frozen=True, kw_only=True)
class Library:
    name: str
    ecosystem: str
    version: str
    imports: tuple[str, ...]
    """Import names (Python top-level modules) or the package name (npm)."""
    files: tuple[Path, ...]


def _site_packages(root: Path) -> Iterator[Path]:
    for name in _VENVS:
        venv = root / name
        if not (venv / "pyvenv.cfg").is_file() or venv.is_symlink():
            continue
        yield from sorted(venv.glob("lib/python*/site-packages"))
        if (venv / "Lib" / "site-packages").is_dir():
            yield venv / "Lib" / "site-packages"


def _metadata(dist: Path) -> tuple[str, str] | None:
    try:
        text = read_regular_text(dist / "METADATA", _MAX_META_BYTES)
    except OSError:
        return None
    name = re.search(r"^Name:\s*(\S+)", text, re.M)
    version = re.search(r"^Version:\s*(\S+)", text, re.M)
    return (name.group(1), version.group(1) if version else "?") if name else None


def _wanted_file(rel: str) -> bool:
    parts = rel.split("/")
    return rel.endswith((".py", ".pyi")) and not any(p in _SKIP_PARTS for p in parts[:-1])


def _python_libraries(root: Path, wanted: set[str]) -> Iterator[Library]:
    for site in _site_packages(root):
        for dist in sorted(site.glob("*.dist-info")):
            meta = _metadata(dist)
            if meta is None or normalize_name("PyPI", meta[0]) not in wanted:
                continue
            try:
                record = read_regular_text(dist / "RECORD", _MAX_META_BYTES).splitlines()
            except OSError:
                continue
            rels = [line.split(",", 1)[0] for line in record]
            rels = [r for r in rels if r and not r.startswith("..") and ".dist-info/" not in r and _wanted_file(r)]
            imports = tuple(dict.fromkeys(r.split("/", 1)[0].removesuffix(".py") for r in rels))
            files = tuple(site / r for r in rels if (site / r).is_file() and not (site / r).is_symlink())
            yield Library(name=meta[0], ecosystem="PyPI", version=meta[1], imports=imports, files=files)


def _npm_wanted(root: Path) -> set[str]:
    try:
        data = guarded_json(read_regular(root / "package.json", _MAX_META_BYTES), max_depth=_MAX_DEPTH)
    except (OSError, ValueError):
        return set()
    if not isinstance(data, dict):
        return set()
    out: set[str] = set()
    for key in ("dependencies", "devDependencies", "peerDependencies"):
        deps = cast("dict[str, Any]", data).get(key)
        if isinstance(deps, dict):
            out.update(str(k) for k in cast("dict[str, Any]", deps))
    return out


def _npm_libraries(root: Path) -> Iterator[Library]:
    for name in sorted(_npm_wanted(root)):
        package = root / "node_modules" / name
        if not package.is_dir() or package.is_symlink():
            continue
        try:
            meta = guarded_json(read_regular(package / "package.json", _MAX_META_BYTES), max_depth=_MAX_DEPTH)
        except (OSError, ValueError):
            meta = {}
        version = str(cast("dict[str, Any]", meta).get("version", "?")) if isinstance(meta, dict) else "?"
        files = [p for p in sorted(package.rglob("*.d.ts")) if "node_modules" not in p.relative_to(package).parts]
        readme = package / "README.md"
        if readme.is_file():
            files.append(readme)
        files = [f for f in files if not f.is_symlink()]
        yield Library(name=name, ecosystem="npm", version=version, imports=(name,), files=tuple(files))


def installed_libraries(root: Path) -> list[Library]:
    """The workspace's direct dependencies found installed in its environment (blocking)."""
    scan = read_dependencies(root, max_depth=0)
    direct = {
        normalize_name(d.ecosystem, d.name)
        for d in scan.dependencies
        if d.ecosystem == "PyPI" and not d.file.endswith(".lock")
    }
    return [*_python_libraries(root, direct), *_npm_libraries(root)]


@dataclass(frozen=True, kw_only=True)
class _Entry:
    library: Library
    chunk: Chunk
    name_terms: frozenset[str]
    text_terms: frozenset[str]


class LibraryShelf:
    """The chunks of the workspace's libraries, read once per library version (thread-safe)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._lock = threading.Lock()
        self._chunks: dict[tuple[str, str, str], list[_Entry]] = {}
        self._installed: tuple[tuple[int, ...], list[Library]] | None = None

    def _read(self, library: Library) -> list[_Entry]:
        entries: list[_Entry] = []
        budget = MAX_BYTES
        for path in library.files[:MAX_FILES]:
            try:
                rel = path.resolve().relative_to(self.root).as_posix()
                data = read_regular(path, MAX_BYTES)
            except (OSError, ValueError):
                continue
            budget -= len(data)
            if budget < 0:
                logger.info("library docs: %s %s cut at %d MiB", library.name, library.version, MAX_BYTES >> 20)
                break
            language = language_for_path(rel)
            if language is None:
                continue
            for chunk in chunk_source(rel, data, language):
                qualified = chunk.qualified_name or chunk.name or ""
                last = qualified.rsplit(".", 1)[-1]
                if last.startswith("_") and not last.startswith("__"):
                    continue
                if chunk.symbol_kind is SymbolKind.MODULE and language != "markdown":
                    continue
                entries.append(
                    _Entry(
                        library=library,
                        chunk=chunk,
                        name_terms=frozenset(terms(qualified)),
                        text_terms=frozenset(terms(chunk.text[:4000])),
                    )
                )
        return entries

    def entries(self, library: Library) -> list[_Entry]:
        key = (library.ecosystem, library.name, library.version)
        with self._lock:
            known = self._chunks.get(key)
        if known is None:
            known = self._read(library)
            with self._lock:
                self._chunks[key] = known
        return known

    def libraries(self) -> list[Library]:
        """The installed direct dependencies, read again only when a manifest or an environment changed."""
        stamp = tuple(_mtime(p) for p in self._watched())
        with self._lock:
            if self._installed is not None and self._installed[0] == stamp:
                return self._installed[1]
        found = installed_libraries(self.root)
        with self._lock:
            self._installed = (stamp, found)
        return found

    def _watched(self) -> list[Path]:
        paths = [self.root / "package.json", self.root / "node_modules", self.root / "pyproject.toml"]
        paths += sorted(self.root.glob("requirements*.txt"))
        paths += list(_site_packages(self.root))
        return paths

    def search(self, query: str, *, k: int, libraries: list[Library] | None = None) -> list[tuple[float, _Entry]]:
        """The public chunks of the libraries ``query`` names sharing the most terms with it (blocking); none
        when it names no installed dependency."""
        libraries = self.libraries() if libraries is None else libraries
        lowered = {w.lower() for w in re.findall(r"[A-Za-z_@][\w./@-]*", query)}
        lowered |= {w.split(".", 1)[0] for w in lowered}
        named = [lib for lib in libraries if {lib.name.lower(), *(i.lower() for i in lib.imports)} & lowered]
        if not named:
            return []
        words = terms(query)
        library_words = {w for lib in named for w in terms(lib.name)}
        wanted = (words - library_words) or words
        scored: list[tuple[float, _Entry]] = []
        for library in named:
            for entry in self.entries(library):
                hits = 2 * len(wanted & entry.name_terms) + len(wanted & entry.text_terms)
                if not hits:
                    continue
                score = hits / (3 * len(wanted))
                last = (entry.chunk.qualified_name or entry.chunk.name or "").rsplit(".", 1)[-1].lower()
                if last in lowered:
                    score += 0.5  # the query names this very symbol
                if entry.chunk.symbol_kind in (SymbolKind.CLASS, SymbolKind.FUNCTION):
                    score += 0.01  # a definition before a method of the same words
                score -= 0.01 * len(entry.name_terms - wanted)  # of equal matches, the plainest name first
                scored.append((score, entry))
        scored.sort(key=lambda pair: (-pair[0], pair[1].chunk.path, pair[1].chunk.start_line))
        return scored[:k]


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


class LibraryDocsSource:
    name = SourceName.LIBRARIES

    def __init__(self, shelf: LibraryShelf, *, k: int) -> None:
        self._shelf = shelf
        self._k = k

    async def fetch(self, plan: QueryPlan) -> list[Candidate]:
        out: list[Candidate] = []
        queries = plan.for_source(self.name)
        if not queries:
            return out
        libraries = await asyncio.to_thread(self._shelf.libraries)
        for query in queries:
            found = await asyncio.to_thread(self._shelf.search, query.text, k=self._k, libraries=libraries)
            for rank, (score, entry) in enumerate(found, start=1):
                chunk, library = entry.chunk, entry.library
                out.append(
                    Candidate(
                        id=f"library:{chunk.path}:{chunk.start_line}",
                        source=self.name,
                        text=f"{library.name} {library.version} ({library.ecosystem}):\n{chunk.text}",
                        attribution=Attribution(
                            path=chunk.path,
                            start_line=chunk.start_line,
                            end_line=chunk.end_line,
                            symbol=chunk.qualified_name or chunk.name,
                            ast_type=chunk.symbol_kind.value,
                            ref=f"{library.name} {library.version}",
                        ),
                        score=score,
                        rank=rank,
                        query=query.text,
                        grounded_text=False,
                    )
                )
        return out
