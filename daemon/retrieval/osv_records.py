"""OSV records: validation of one record, and the mirror's index file (what ``cve sync`` writes).

Records are decoded as the transports decode a message (:func:`daemon.core.jsonrpc.guarded_json`:
nesting deeper than :data:`MAX_RECORD_DEPTH` is refused before anything recurses over it). A record is
valid when it is a JSON object with a string ``id`` (letters, digits, ``.``, ``_``, ``:``, ``-``, the
whole string: no path separators, no line break) and a string ``modified``, and its ``affected`` (when present) is
a list of objects whose ``package`` names an ``ecosystem`` and a ``name``, whose ``ranges`` are
objects with a ``type`` and a list of ``events`` and whose ``versions`` are strings. Anything else
in the record is kept as it is (the mirror stores records verbatim).

The index (``index.json`` at the mirror's root) maps each record id to its file, its aliases, its
``modified`` time and the ``(ecosystem, normalized name)`` pairs it affects, so a look-up reads
only the records of the packages it asks about.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from daemon.core.jsonrpc import JsonProblem, guarded_json
from daemon.retrieval.manifests import normalize_name

__all__ = [
    "INDEX_NAME",
    "INDEX_VERSION",
    "MAX_RECORD_DEPTH",
    "IndexEntry",
    "file_name",
    "index_entry",
    "parse_record",
    "record_problem",
]

INDEX_NAME = "index.json"
INDEX_VERSION = 1
MAX_RECORD_DEPTH = 64
"""Deepest nesting an OSV record or the mirror's index may have (real ones stay under 10)."""
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{1,127}")
"""A record id, matched against the whole string (``fullmatch``: a trailing newline is not an id's)."""


def file_name(record_id: str) -> str:
    """The record's file name in the mirror (``:`` is not portable in file names)."""
    return record_id.replace(":", "_") + ".json"


def record_problem(data: Any) -> str | None:
    """Why ``data`` is not a usable OSV record, or None when it is."""
    if not isinstance(data, dict):
        return "not a JSON object"
    record = cast("dict[str, Any]", data)
    rid = record.get("id")
    if not isinstance(rid, str) or not _ID.fullmatch(rid):
        return "no valid 'id'"
    if not isinstance(record.get("modified"), str):
        return f"{rid}: no 'modified' time"
    affected = record.get("affected", [])
    if not isinstance(affected, list):
        return f"{rid}: 'affected' is not a list"
    for entry in cast("list[Any]", affected):
        problem = _affected_problem(entry)
        if problem is not None:
            return f"{rid}: {problem}"
    return None


def _affected_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return "an 'affected' entry is not an object"
    item = cast("dict[str, Any]", entry)
    package = item.get("package")
    if package is not None:
        pkg = cast("dict[str, Any]", package) if isinstance(package, dict) else {}
        if not isinstance(pkg.get("ecosystem"), str) or not isinstance(pkg.get("name"), str):
            return "a package without 'ecosystem' and 'name'"
    ranges = item.get("ranges", [])
    if not isinstance(ranges, list):
        return "'ranges' is not a list"
    for rng in cast("list[Any]", ranges):
        rng_map = cast("dict[str, Any]", rng) if isinstance(rng, dict) else {}
        if not isinstance(rng_map.get("type"), str) or not isinstance(rng_map.get("events"), list):
            return "a range without 'type' and 'events'"
    versions = item.get("versions", [])
    if not isinstance(versions, list) or not all(isinstance(v, str) for v in cast("list[Any]", versions)):
        return "'versions' is not a list of strings"
    return None


@dataclass(frozen=True, kw_only=True)
class IndexEntry:
    file: str
    modified: str
    aliases: tuple[str, ...]
    packages: tuple[tuple[str, str], ...]
    """(ecosystem, normalized name) pairs; the ecosystem without its ``:suffix`` (``Debian:12`` -> ``Debian``)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "modified": self.modified,
            "aliases": list(self.aliases),
            "packages": [list(p) for p in self.packages],
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> IndexEntry:
        return IndexEntry(
            file=str(data["file"]),
            modified=str(data["modified"]),
            aliases=tuple(str(a) for a in cast("list[Any]", data.get("aliases") or [])),
            packages=tuple(
                (str(p[0]), str(p[1])) for p in cast("list[list[Any]]", data.get("packages") or []) if len(p) == 2
            ),
        )


def parse_record(data: bytes | str) -> dict[str, Any] | str:
    """The OSV record in ``data``, or why it is not one (``not JSON (...)`` or ``record_problem``'s reason)."""
    try:
        parsed = guarded_json(data, max_depth=MAX_RECORD_DEPTH)
    except JsonProblem as exc:
        return f"not JSON ({exc})" if exc.kind in ("utf8", "syntax") else f"not a usable record ({exc})"
    problem = record_problem(parsed)
    return problem if problem is not None else cast("dict[str, Any]", parsed)


def index_entry(record: Mapping[str, Any], file: str) -> IndexEntry:
    """The index entry of a valid record stored as ``file`` (relative to the mirror)."""
    packages: dict[tuple[str, str], None] = {}
    for entry in cast("list[dict[str, Any]]", record.get("affected") or []):
        package = cast("dict[str, Any] | None", entry.get("package"))
        if package is None:
            continue
        ecosystem = str(package["ecosystem"]).split(":", 1)[0]
        packages[(ecosystem, normalize_name(ecosystem, str(package["name"])))] = None
    aliases = tuple(str(a) for a in cast("list[Any]", record.get("aliases") or []) if isinstance(a, str))
    return IndexEntry(file=file, modified=str(record["modified"]), aliases=aliases, packages=tuple(packages))
