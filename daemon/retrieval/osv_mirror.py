"""A local OSV mirror as the advisory provider: look-ups by advisory id, by ``name==version``, and an
audit of the workspace's locked dependencies. Offline: it reads files, nothing else.

The mirror is a directory of OSV records in OSV's own JSON format, one ``<ID>.json`` per advisory
(``ided cve sync`` fills it from OSV's per-ecosystem exports and writes ``index.json``; a directory
without the index, an export unzipped by hand, is read whole once per process instead).

- ``lookup(query)``: an advisory id (``CVE-...``, ``GHSA-...``, ``PYSEC-...``, ``GO-...``,
  ``RUSTSEC-...``) finds the record of that id or of which it is an alias; ``name==version`` finds
  the advisories affecting that version of the package in any supported ecosystem.
- ``audit(root)``: the dependencies of the workspace's manifests and lock files
  (:mod:`daemon.retrieval.manifests`), each exact version matched against the records of its
  package (:mod:`daemon.retrieval.versions`). Withdrawn records are skipped.

A mirror that does not exist, or whose index cannot be read, raises ``SourceUnavailable`` with the
path and what to do.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from daemon.core.jsonrpc import guarded_json
from daemon.errors import SourceUnavailable
from daemon.retrieval.manifests import DependencyScan, normalize_name, read_dependencies
from daemon.retrieval.osv_records import (
    INDEX_NAME,
    INDEX_VERSION,
    MAX_RECORD_DEPTH,
    IndexEntry,
    index_entry,
    parse_record,
    record_problem,
)
from daemon.retrieval.providers import ProviderHit
from daemon.retrieval.versions import affects, supported

__all__ = ["AuditReport", "Finding", "MirrorIndex", "OsvMirror", "load_index", "scan_index"]

logger = logging.getLogger(__name__)

_ID_QUERY = re.compile(
    r"^(CVE-\d{4}-\d{4,}|GHSA(-[0-9a-z]{4}){3}|PYSEC-\d{4}-\d+|GO-\d{4}-\d+|RUSTSEC-\d{4}-\d+|[A-Z]+-[\w.:-]+)$", re.I
)
_PINNED = re.compile(r"^([A-Za-z0-9@][\w.@/-]*)(?:==|@)(v?\d[\w.+-]*)$")
_SUMMARY_CHARS = 300
_Match = tuple[dict[str, Any], tuple[str, ...]]
"""A record and the fixed versions of its ranges that hold the version looked up."""


@dataclass(frozen=True, kw_only=True)
class MirrorIndex:
    entries: dict[str, IndexEntry]
    by_package: dict[tuple[str, str], list[str]]
    by_alias: dict[str, list[str]]
    ecosystems: dict[str, int]

    @staticmethod
    def of(entries: dict[str, IndexEntry]) -> MirrorIndex:
        by_package: dict[tuple[str, str], list[str]] = {}
        by_alias: dict[str, list[str]] = {}
        ecosystems: dict[str, int] = {}
        for rid, entry in entries.items():
            for key in entry.packages:
                by_package.setdefault(key, []).append(rid)
            for eco in {p[0] for p in entry.packages}:
                ecosystems[eco] = ecosystems.get(eco, 0) + 1
            for alias in (rid, *entry.aliases):
                by_alias.setdefault(alias.upper(), []).append(rid)
        return MirrorIndex(entries=entries, by_package=by_package, by_alias=by_alias, ecosystems=ecosystems)


def load_index(mirror: Path) -> MirrorIndex | None:
    """The mirror's ``index.json``, or None when it has none; ``SourceUnavailable`` when it is unreadable."""
    path = mirror / INDEX_NAME
    if not path.is_file():
        return None
    try:
        data = guarded_json(path.read_bytes(), max_depth=MAX_RECORD_DEPTH)
        if not isinstance(data, dict) or cast("dict[str, Any]", data).get("version") != INDEX_VERSION:
            raise ValueError(f"not an index of version {INDEX_VERSION}")
        records = cast("dict[str, Any]", cast("dict[str, Any]", data)["records"])
        entries = {str(rid): IndexEntry.from_json(cast("dict[str, Any]", e)) for rid, e in records.items()}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SourceUnavailable(
            f"the OSV mirror's index {path} cannot be read ({exc}); run `ided cve sync --from` again"
        ) from exc
    return MirrorIndex.of(entries)


def scan_index(mirror: Path) -> tuple[dict[str, IndexEntry], list[str]]:
    """Index entries of every valid ``*.json`` record under ``mirror`` (the index itself left out), and the
    problems of the others."""
    entries: dict[str, IndexEntry] = {}
    problems: list[str] = []
    for path in sorted(mirror.rglob("*.json")):
        if (path.name == INDEX_NAME and path.parent == mirror) or path.is_symlink():
            continue
        rel = path.relative_to(mirror).as_posix()
        try:
            record = parse_record(path.read_bytes())
        except OSError as exc:
            record = str(exc)
        if isinstance(record, str):
            problems.append(f"{rel}: {record}")
            continue
        entries[str(record["id"])] = index_entry(record, rel)
    return entries, problems


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One advisory affecting one exactly-versioned dependency."""

    ecosystem: str
    name: str
    version: str
    where: tuple[str, ...]
    advisory: str
    aliases: tuple[str, ...]
    summary: str
    fixed: tuple[str, ...]
    severity: str | None


@dataclass(kw_only=True)
class AuditReport:
    scan: DependencyScan
    records: int
    checked: int = 0
    """Distinct exactly-versioned dependencies of a supported ecosystem looked up."""
    findings: list[Finding] = field(default_factory=list[Finding])
    unreadable: list[str] = field(default_factory=list[str])
    """Advisories whose version bounds do not parse in their ecosystem's scheme (checked by hand)."""


def _severity(record: Mapping[str, Any]) -> str | None:
    db = record.get("database_specific")
    if isinstance(db, dict):
        level = cast("dict[str, Any]", db).get("severity")
        if isinstance(level, str) and level:
            return level.upper()
    for item in cast("list[Any]", record.get("severity") or []):
        if isinstance(item, dict):
            score = cast("dict[str, Any]", item).get("score")
            kind = cast("dict[str, Any]", item).get("type")
            if isinstance(score, str):
                return f"{kind}: {score}" if isinstance(kind, str) else score
    return None


def _summary(record: Mapping[str, Any]) -> str:
    text = str(record.get("summary") or record.get("details") or "").strip()
    text = " ".join(text.split())
    return text if len(text) <= _SUMMARY_CHARS else text[: _SUMMARY_CHARS - 3].rstrip() + "..."


class OsvMirror:
    """See the module docstring. One instance serves a workspace; it re-reads the index when it changes."""

    name = "osv-mirror"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._index: MirrorIndex | None = None
        self._stamp: tuple[int, int] | None = None

    # -- the index ------------------------------------------------------------------------------

    def index(self) -> MirrorIndex:
        """The mirror's index (blocking); ``SourceUnavailable`` when there is no mirror at the path."""
        if not self.path.is_dir():
            raise SourceUnavailable(
                f"the OSV mirror {self.path} does not exist; import an export with `ided cve sync --from DIR|ZIP`"
            )
        marker = self.path / INDEX_NAME
        try:
            st = marker.stat() if marker.exists() else self.path.stat()
        except OSError as exc:
            raise SourceUnavailable(f"the OSV mirror {self.path} cannot be read", cause=exc) from exc
        stamp = (st.st_mtime_ns, st.st_size)
        if self._index is None or stamp != self._stamp:
            index = load_index(self.path)
            if index is None:
                entries, problems = scan_index(self.path)
                if problems:
                    logger.warning(
                        "OSV mirror %s: %d record(s) unusable, e.g. %s", self.path, len(problems), problems[0]
                    )
                index = MirrorIndex.of(entries)
            self._index, self._stamp = index, stamp
        return self._index

    def _record(self, entry: IndexEntry) -> dict[str, Any] | None:
        try:
            data = guarded_json((self.path / entry.file).read_bytes(), max_depth=MAX_RECORD_DEPTH)
        except (OSError, ValueError) as exc:
            logger.warning("OSV mirror %s: %s cannot be read: %s", self.path, entry.file, exc)
            return None
        if record_problem(data) is not None:
            return None
        return cast("dict[str, Any]", data)

    # -- blocking look-ups ----------------------------------------------------------------------

    def match(self, ecosystem: str, name: str, version: str) -> tuple[list[_Match], int]:
        """The records affecting ``version`` of the package, each with its fixed versions; and how many
        records could not be decided (a bound that does not parse)."""
        index = self.index()
        key = (ecosystem, normalize_name(ecosystem, name))
        found: list[_Match] = []
        unreadable = 0
        for rid in index.by_package.get(key, []):
            record = self._record(index.entries[rid])
            if record is None or record.get("withdrawn"):
                continue
            fixed: list[str] = []
            hit = False
            for entry in cast("list[dict[str, Any]]", record.get("affected") or []):
                package = cast("dict[str, Any] | None", entry.get("package"))
                if package is None:
                    continue
                eco = str(package["ecosystem"]).split(":", 1)[0]
                if (eco, normalize_name(eco, str(package["name"]))) != key:
                    continue
                verdict = affects(ecosystem, version, entry)
                unreadable += verdict.unreadable
                if verdict.affected:
                    hit = True
                    fixed.extend(verdict.fixed)
            if hit:
                found.append((record, tuple(dict.fromkeys(fixed))))
        return found, unreadable

    def by_id(self, query: str) -> list[dict[str, Any]]:
        index = self.index()
        records = [self._record(index.entries[rid]) for rid in index.by_alias.get(query.upper(), [])]
        return [r for r in records if r is not None]

    def audit_blocking(self, root: Path) -> AuditReport:
        index = self.index()
        scan = read_dependencies(root)
        report = AuditReport(scan=scan, records=len(index.entries))
        for (ecosystem, _, version), where in sorted(scan.exact().items()):
            if not supported(ecosystem):
                continue
            report.checked += 1
            dep = where[0]
            records, unreadable = self.match(ecosystem, dep.name, version)
            if unreadable:
                report.unreadable.append(f"{dep.name} {version} ({ecosystem})")
            for record, fixed in records:
                report.findings.append(
                    Finding(
                        ecosystem=ecosystem,
                        name=dep.name,
                        version=version,
                        where=tuple(d.where for d in where),
                        advisory=str(record["id"]),
                        aliases=tuple(str(a) for a in cast("list[Any]", record.get("aliases") or [])),
                        summary=_summary(record),
                        fixed=fixed,
                        severity=_severity(record),
                    )
                )
        return report

    # -- the provider ---------------------------------------------------------------------------

    def _hit(self, record: Mapping[str, Any], extra: str = "") -> ProviderHit:
        rid = str(record.get("id", "?"))
        aliases = ", ".join(str(a) for a in cast("list[Any]", record.get("aliases") or []))
        severity = _severity(record)
        text = (
            f"{rid}"
            + (f" ({aliases})" if aliases else "")
            + (f" [{severity}]" if severity else "")
            + f": {_summary(record)}"
            + extra
        )
        return ProviderHit(title=rid, url=f"https://osv.dev/vulnerability/{rid}", text=text, ref=rid)

    def _lookup_blocking(self, query: str, limit: int) -> list[ProviderHit]:
        query = query.strip()
        pinned = _PINNED.match(query)
        if pinned is not None:
            name, version = pinned.group(1), pinned.group(2)
            hits: list[ProviderHit] = []
            for ecosystem in ("PyPI", "npm", "crates.io", "Go"):
                records, _ = self.match(ecosystem, name, version)
                for record, fixed in records:
                    note = f" Affects {name} {version} ({ecosystem})" + (
                        f"; fixed in {', '.join(fixed)}." if fixed else "; no fixed version."
                    )
                    hits.append(self._hit(record, note))
            return hits[:limit]
        if _ID_QUERY.match(query):
            return [self._hit(r) for r in self.by_id(query)][:limit]
        return []

    async def lookup(self, query: str, *, limit: int) -> list[ProviderHit]:
        return await asyncio.to_thread(self._lookup_blocking, query, limit)

    async def audit(self, root: Path) -> AuditReport:
        return await asyncio.to_thread(self.audit_blocking, root)
