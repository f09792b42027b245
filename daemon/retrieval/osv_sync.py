"""``ided cve sync``: import an OSV export (a directory of records or OSV's ``<ecosystem>/all.zip``) into
the mirror.

Every ``*.json`` member or file is read (at most ``MAX_RECORD_BYTES`` each; other names ignored; a
ZIP member's path is never used as a destination: the record's own id names its file), validated
(:func:`daemon.retrieval.osv_records.record_problem`) and stored verbatim as ``<mirror>/<ID>.json``
when it is new or its ``modified`` time is later than the stored one's; an equal or older record
is left as it is. The write is atomic per record (temporary file, then rename) and
``index.json`` is rewritten last, so a sync cut short leaves a consistent mirror that the next sync
completes. Running it twice with the same export changes nothing the second time.

The report counts records added, updated, unchanged, older than the stored ones and invalid
(with the first few reasons), per ecosystem as well. A record that is not a usable OSV record (not
JSON, nested too deep, a bad id) is skipped with its reason and the rest of the export imports; a
mirror whose ``index.json`` cannot be read is re-indexed from its records (said in ``notes``).
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from daemon.errors import InvalidToolInput, SourceUnavailable
from daemon.retrieval.osv_mirror import load_index, scan_index
from daemon.retrieval.osv_records import INDEX_NAME, INDEX_VERSION, IndexEntry, file_name, index_entry, parse_record

__all__ = ["MAX_RECORD_BYTES", "SyncReport", "sync_mirror"]


MAX_RECORD_BYTES = 8 * 1024 * 1024
_KEPT_PROBLEMS = 10


@dataclass(kw_only=True)
class SyncReport:
    source: str
    mirror: str
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    older: int = 0
    invalid: int = 0
    problems: list[str] = field(default_factory=list[str])
    notes: list[str] = field(default_factory=list[str])
    """What the sync did besides importing (a mirror index it could not read, rebuilt)."""
    ecosystems: dict[str, int] = field(default_factory=dict[str, int])
    """Records read per ecosystem (a record affecting two ecosystems counts in both)."""
    total: int = 0
    """Records in the mirror after the sync."""

    def problem(self, text: str) -> None:
        self.invalid += 1
        if len(self.problems) < _KEPT_PROBLEMS:
            self.problems.append(text)

    def to_json(self) -> dict[str, Any]:
        """Every field, as ``ided cve sync --json`` prints it."""
        return asdict(self)


def _members(source: Path) -> Iterator[tuple[str, bytes | None]]:
    """(name, bytes) of every ``*.json`` in the export; bytes None for one over the size limit."""
    if source.is_dir():
        for path in sorted(source.rglob("*.json")):
            if path.is_symlink() or not path.is_file() or path.name == INDEX_NAME:
                continue
            rel = path.relative_to(source).as_posix()
            yield rel, None if path.stat().st_size > MAX_RECORD_BYTES else path.read_bytes()
        return
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InvalidToolInput(f"{source} is neither a directory nor a ZIP archive of OSV records", cause=exc) from exc
    with archive:
        for info in archive.infolist():
            if info.is_dir() or not info.filename.endswith(".json"):
                continue
            if info.file_size > MAX_RECORD_BYTES:
                yield info.filename, None
                continue
            try:
                with archive.open(info) as fh:
                    data = fh.read(MAX_RECORD_BYTES + 1)
            except (zipfile.BadZipFile, OSError, NotImplementedError, EOFError) as exc:
                raise InvalidToolInput(f"{source}: member {info.filename} cannot be read", cause=exc) from exc
            yield info.filename, None if len(data) > MAX_RECORD_BYTES else data


def _when(stamp: str) -> tuple[int, datetime | str]:
    """An RFC 3339 time as something comparable (an unparsable one compares as text, before any time)."""
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return 0, stamp
    return 1, moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".sync-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def sync_mirror(source: Path, mirror: Path) -> SyncReport:
    """Import the export at ``source`` into ``mirror`` (created when missing); see the module docstring."""
    if not source.exists():
        raise InvalidToolInput(f"{source} does not exist (give a directory of OSV records or an OSV all.zip)")
    if source.resolve() == mirror.resolve():
        raise InvalidToolInput(f"{source} is the mirror itself; give the export you downloaded")
    mirror.mkdir(parents=True, exist_ok=True)
    report = SyncReport(source=str(source), mirror=str(mirror))
    try:
        existing = load_index(mirror)
    except SourceUnavailable as exc:
        existing = None
        report.notes.append(
            f"the mirror's index {mirror / INDEX_NAME} could not be read ({exc.cause}); rebuilt from its records"
        )
    if existing is not None:
        entries = dict(existing.entries)
    else:
        entries, _ = scan_index(mirror)
    for name, data in _members(source):
        if data is None:
            report.problem(f"{name}: larger than {MAX_RECORD_BYTES // (1024 * 1024)} MiB")
            continue
        record = parse_record(data)
        if isinstance(record, str):
            report.problem(f"{name}: {record}")
            continue
        rid = str(record["id"])
        entry = index_entry(record, file_name(rid))
        for eco in {p[0] for p in entry.packages}:
            report.ecosystems[eco] = report.ecosystems.get(eco, 0) + 1
        stored = entries.get(rid)
        target = mirror / entry.file
        fresh = stored is None or not target.is_file()
        if stored is not None and not fresh:
            if _when(stored.modified) > _when(entry.modified):
                report.older += 1
                continue
            if _when(stored.modified) == _when(entry.modified):
                report.unchanged += 1
                continue
        _write(target, data)
        if fresh:
            report.added += 1
        else:
            report.updated += 1
        entries[rid] = entry
    _write_index(mirror, entries)
    report.total = len(entries)
    return report


def _write_index(mirror: Path, entries: dict[str, IndexEntry]) -> None:
    body = {"version": INDEX_VERSION, "records": {rid: e.to_json() for rid, e in sorted(entries.items())}}
    _write(mirror / INDEX_NAME, json.dumps(body, separators=(",", ":")).encode("utf-8"))
