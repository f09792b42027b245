"""Resolve a symbol *name* ("Class.method", "module.func", "ns::func", "func") to definition sites.

First the index: a lexical search for the name, kept only where a chunk's ``qualified_name``
matches exactly (or ``module.qualified_name`` where the module is the file's dotted path, or the
last part of a qualified name when a bare name was given). A dotted name the index does not define
as written is then followed through package re-exports (:mod:`daemon.service.intel.symbol_reexports`:
``requests.get`` -> ``get`` in ``requests/api.py``). When neither finds it (the index not built
yet, busy, or the file newer than the index), a Tree-sitter scan of the workspace: files whose text
holds every part of the name a match needs (``may_define``) are chunked and matched the same way.
Blocking: run it in a thread.

Given ``generation`` (a token that changes whenever the index or the workspace may have changed:
the daemon's count of index changes and watched file events, which also moves when its first pass
ends), a name found is remembered with that token and the size and mtime of the files it was found
in; the same name is then answered without a search or a scan until the token or one of those
files changes. A name not found is looked for again each time.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from daemon.core.languages import CODE_LANGUAGES, language_for_path
from daemon.core.lru import LruMap
from daemon.core.models import Chunk, SymbolKind
from daemon.core.regular_files import read_regular
from daemon.index.scanner import Scanner
from daemon.intel.chunking import chunk_source
from daemon.service.intel.symbol_reexports import follow, read_workspace_file

__all__ = ["MAX_TARGETS", "ResolutionStopped", "SymbolMatch", "SymbolResolver", "best_matches", "normalize_symbol"]

logger = logging.getLogger(__name__)

MAX_TARGETS = 3
"""Definition sites answered for one name (the best rank's first ones)."""

_NOT_SYMBOLS = frozenset({SymbolKind.MODULE, SymbolKind.SECTION, SymbolKind.WINDOW})
_DEF_KEYWORDS = r"(?:def|class|function|func|fn|struct|interface|enum|type|trait|impl|namespace|union)"
_SCAN_MAX_FILES = 50_000
_CHUNK_CACHE_FILES = 256
_REMEMBERED = 10
_REMEMBERED_NAMES = 1024


class ResolutionStopped(Exception):
    """The caller's ``stop()`` turned true while the resolver scanned files: it gave up."""


def _check(stop: Callable[[], bool] | None) -> None:
    if stop is not None and stop():
        raise ResolutionStopped


@dataclass(frozen=True, slots=True, kw_only=True)
class SymbolMatch:
    """A definition site found for a name."""

    path: str
    language: str
    qualified_name: str
    name: str
    kind: str
    start_line: int
    end_line: int
    signature: str | None
    docstring: str | None
    rank: int  # 0 exact, 1 module-qualified, 2 last part of a longer qualified name
    via: str  # "index", "reexport" or "tree_sitter"
    exported_by: str | None = None
    """The module whose re-export led here (``via == "reexport"``), e.g. ``src/requests/__init__.py``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Resolved:
    """A name's resolution, valid while ``token`` and the files' ``stamp`` stay the same."""

    token: object
    stamp: tuple[tuple[str, int, int], ...]
    matches: list[SymbolMatch]
    via: str


def normalize_symbol(name: str) -> str:
    """``ns::Class::method()`` -> ``ns.Class.method``; whitespace and a trailing call removed."""
    text = name.strip().replace("::", ".").replace("#", ".")
    text = re.sub(r"\(.*\)$", "", text).strip(". ")
    return text


def _module_parts(path: str) -> list[str]:
    pure = PurePosixPath(path)
    parts = [*pure.parent.parts, pure.stem] if pure.parent.as_posix() != "." else [pure.stem]
    if parts and parts[-1] in {"__init__", "index", "mod", "lib"}:
        parts = parts[:-1]
    return parts


def match_rank(chunk: Chunk, wanted: str) -> int | None:
    """How well ``chunk`` defines ``wanted`` (normalized): 0 exact, 1 module-qualified, 2 bare name; else None."""
    if chunk.symbol_kind in _NOT_SYMBOLS or chunk.part != 1 or not chunk.qualified_name:
        return None
    qualified = normalize_symbol(chunk.qualified_name)
    if qualified == wanted:
        return 0
    parts = wanted.split(".")
    module = _module_parts(chunk.path)
    for split in range(1, len(parts)):
        prefix, rest = parts[:split], ".".join(parts[split:])
        if rest == qualified and len(prefix) <= len(module) and module[-len(prefix) :] == prefix:
            return 1
    if len(parts) == 1 and qualified.endswith("." + wanted):
        return 2
    return None


def may_define(path: str, data: bytes, parts: list[str]) -> bool:
    """Whether the file ``path`` holding ``data`` can define the name ``parts`` (normalized, split at
    dots) by ``match_rank``'s rules: a qualified name is made of the file's own identifiers, so every
    part it must equal appears in the text — all of them (exact), or those after a prefix naming the
    file's module (module-qualified); a bare name, the name itself."""
    if len(parts) == 1:
        return parts[0].encode("utf-8") in data
    module = _module_parts(path)
    for split in range(len(parts)):
        if split and (split > len(module) or module[-split:] != parts[:split]):
            continue
        if all(part.encode("utf-8") in data for part in parts[split:]):
            return True
    return False


def name_position(lines: list[str], match: SymbolMatch) -> tuple[int, int]:
    """1-based (line, column) of the symbol's name in its definition header (the start line when not found)."""
    simple = match.name
    word = re.compile(rf"\b{re.escape(simple)}\b")
    keyword = re.compile(rf"\b{_DEF_KEYWORDS}\s+{re.escape(simple)}\b")
    last = min(match.end_line, len(lines))
    first_plain: tuple[int, int] | None = None
    for line_no in range(match.start_line, last + 1):
        text = lines[line_no - 1]
        stripped = text.lstrip()
        if stripped.startswith(("@", "#[", "//", "#", "/*", "*")):
            continue
        found = keyword.search(text)
        if found is not None:
            return line_no, found.end() - len(simple) + 1
        plain = word.search(text)
        if plain is not None and first_plain is None:
            first_plain = (line_no, plain.start() + 1)
            if line_no - match.start_line > 3:
                break
    return first_plain or (match.start_line, 1)


def best_matches(symbol: str, matches: list[SymbolMatch], via: str) -> tuple[list[SymbolMatch], list[str]]:
    """The matches answered for ``symbol`` (the best rank's first ``MAX_TARGETS``) and notes saying
    how they were found and what else matched."""
    best = [m for m in matches if m.rank == matches[0].rank][:MAX_TARGETS]
    notes: list[str] = []
    if via == "tree_sitter":
        notes.append("symbol found by a Tree-sitter scan (the index had no match)")
    elif via == "reexport":
        notes.extend(
            f"{symbol} is re-exported by {m.exported_by}: defined as {m.qualified_name} in {m.path}" for m in best
        )
    if len(matches) > len(best):
        others = ", ".join(f"{m.qualified_name} ({m.path}:{m.start_line})" for m in matches[len(best) : len(best) + 5])
        notes.append(f"{len(matches)} symbols match {symbol!r}; answering for {len(best)}; others: {others}")
    return best, notes


class SymbolResolver:
    """See the module docstring. ``index_search(query)`` returns candidate chunks, or None when unusable."""

    def __init__(
        self,
        root: Path,
        *,
        index_search: Callable[[str], list[Chunk] | None],
        scanner: Scanner,
        max_file_bytes: int,
        generation: Callable[[], object] | None = None,
    ) -> None:
        self._root = root
        self._index_search = index_search
        self._scanner = scanner
        self._max_file_bytes = max_file_bytes
        self._generation = generation
        self._chunk_cache: dict[tuple[str, int, int], list[Chunk]] = {}
        self._known: LruMap[str, _Resolved] = LruMap(_REMEMBERED_NAMES)
        self._known_lock = threading.Lock()

    def resolve(
        self, name: str, *, limit: int = 10, stop: Callable[[], bool] | None = None
    ) -> tuple[list[SymbolMatch], str]:
        """Matches, best first, and how they were found ("index", "reexport", "tree_sitter" or "none").

        ``stop``: asked before each file read or parsed; when it turns true, ``ResolutionStopped``."""
        wanted = normalize_symbol(name)
        if not wanted:
            return [], "none"
        if self._generation is None or limit > _REMEMBERED:
            return self._resolve(wanted, limit, stop)
        token = self._generation()
        with self._known_lock:
            known = self._known.get(wanted)
        if known is not None and known.token == token and known.stamp == self._stamp(known.matches):
            return known.matches[:limit], known.via
        matches, via = self._resolve(wanted, _REMEMBERED, stop)
        if via != "none":
            with self._known_lock:
                self._known.put(wanted, _Resolved(token=token, stamp=self._stamp(matches), matches=matches, via=via))
        return matches[:limit], via

    def _stamp(self, matches: list[SymbolMatch]) -> tuple[tuple[str, int, int], ...]:
        """Size and mtime of the files of ``matches`` (an edit the watcher has not told yet shows here)."""
        out: list[tuple[str, int, int]] = []
        for path in dict.fromkeys(m.path for m in matches):
            try:
                stat = (self._root / path).stat()
            except OSError:
                out.append((path, -1, -1))
            else:
                out.append((path, stat.st_size, stat.st_mtime_ns))
        return tuple(out)

    def _resolve(self, wanted: str, limit: int, stop: Callable[[], bool] | None) -> tuple[list[SymbolMatch], str]:
        last = wanted.split(".")[-1]
        chunks = self._index_search(" ".join(dict.fromkeys([last, *wanted.split(".")])))
        matches = self._matches(chunks or [], wanted, via="index")
        if matches:
            return matches[:limit], "index"
        if "." in wanted:
            matches = self._reexported(wanted, stop)
            if matches:
                return matches[:limit], "reexport"
        matches = self._matches(self._scan(wanted, stop), wanted, via="tree_sitter")
        return matches[:limit], "tree_sitter" if matches else "none"

    def _matches(self, chunks: Iterable[Chunk], wanted: str, *, via: str) -> list[SymbolMatch]:
        found: dict[tuple[str, int], SymbolMatch] = {}
        for chunk in chunks:
            rank = match_rank(chunk, wanted)
            if rank is None or chunk.language not in CODE_LANGUAGES:
                continue
            qualified = normalize_symbol(chunk.qualified_name or "")
            key = (chunk.path, chunk.start_line)
            if key in found and found[key].rank <= rank:
                continue
            found[key] = SymbolMatch(
                path=chunk.path,
                language=chunk.language,
                qualified_name=qualified,
                name=qualified.split(".")[-1],
                kind=chunk.symbol_kind.value,
                start_line=chunk.start_line,
                end_line=chunk.end_line,
                signature=chunk.signature,
                docstring=chunk.docstring,
                rank=rank,
                via=via,
            )
        return sorted(found.values(), key=lambda m: (m.rank, m.path, m.start_line))

    def _reexported(self, wanted: str, stop: Callable[[], bool] | None = None) -> list[SymbolMatch]:
        """Definitions reached from a module prefix of ``wanted`` through its imports and re-exports."""
        scanned = self._scanner.scan()
        paths = [e.rel_path for e in scanned.files[:_SCAN_MAX_FILES] if e.language in CODE_LANGUAGES]
        read = read_workspace_file(self._root, self._max_file_bytes)
        chunks: dict[str, list[Chunk]] = {}

        def chunks_of(path: str) -> list[Chunk]:
            if path not in chunks:
                _check(stop)
                chunks[path] = self._file_chunks(path, read)
            return chunks[path]

        def defines(path: str, qualified: str) -> bool:
            return any(match_rank(c, qualified) == 0 for c in chunks_of(path))

        out: list[SymbolMatch] = []
        for path, qualified, exported_by in follow(wanted.split("."), paths, read=read, defines=defines):
            out.extend(
                replace(match, rank=1, exported_by=exported_by)
                for match in self._matches(chunks_of(path), qualified, via="reexport")
                if match.rank == 0
            )
        return sorted(out, key=lambda m: (m.path, m.start_line))

    def _file_chunks(self, path: str, read: Callable[[str], str | None]) -> list[Chunk]:
        """A file's chunks, kept while its size and mtime stay the same (a package's modules are asked again)."""
        try:
            stat = (self._root / path).stat()
        except OSError:
            return []
        key = (path, stat.st_size, stat.st_mtime_ns)
        cached = self._chunk_cache.get(key)
        if cached is not None:
            return cached
        text = read(path)
        language = language_for_path(path)
        out: list[Chunk] = []
        if text is not None and language is not None:
            try:
                out = chunk_source(path, text.encode("utf-8"), language)
            except Exception:  # a chunker failure on one file must not hide the others
                logger.warning("chunking %s for symbol lookup failed", path, exc_info=True)
        if len(self._chunk_cache) >= _CHUNK_CACHE_FILES:
            self._chunk_cache.pop(next(iter(self._chunk_cache)), None)
        self._chunk_cache[key] = out
        return out

    def _scan(self, wanted: str, stop: Callable[[], bool] | None = None) -> list[Chunk]:
        """Chunks of every code file that can define ``wanted`` (``may_define``: it mentions each part
        of the name a match needs), in a bounded walk that honours .gitignore."""
        parts = wanted.split(".")
        out: list[Chunk] = []
        scanned = self._scanner.scan()
        for entry in scanned.files[:_SCAN_MAX_FILES]:
            _check(stop)
            if entry.language not in CODE_LANGUAGES or entry.size > self._max_file_bytes:
                continue
            try:
                data = read_regular(entry.abs_path, self._max_file_bytes)
            except OSError:
                continue
            if not may_define(entry.rel_path, data, parts):
                continue
            language = language_for_path(entry.rel_path) or entry.language
            try:
                out.extend(chunk_source(entry.rel_path, data, language))
            except Exception:  # a chunker failure on one file must not hide the others
                logger.warning("chunking %s for symbol lookup failed", entry.rel_path, exc_info=True)
        return out
