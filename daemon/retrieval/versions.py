"""Package versions per ecosystem, and whether an OSV ``affected`` entry covers one.

Comparison follows each ecosystem's own ordering: PEP 440 (``packaging``) for PyPI, Semantic
Versioning 2.0 for npm, crates.io and Go (a leading ``v`` dropped, build metadata such as Go's
``+incompatible`` ignored, a missing minor or patch read as 0). ``affects`` applies the OSV
schema's rules to one ``affected[]`` entry: the version is affected when it is listed in
``versions[]`` (compared as versions, so ``1.0`` equals ``1.0.0`` on PyPI), or when an ``ECOSYSTEM``
or ``SEMVER`` range holds it: events sorted by version (``introduced: "0"`` first), walked in
order, an ``introduced`` at or below the version opening the range, a ``fixed`` at or below it
closing it, a ``last_affected`` below it closing it. ``GIT`` ranges name commits, not versions,
and are skipped. A bound that does not parse in the ecosystem's scheme is not guessed at: that
range is skipped and ``unreadable`` counts it (the caller reports it), never read as "not affected"
silently.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import total_ordering
from typing import Any, cast

from packaging.version import InvalidVersion, Version

__all__ = ["Verdict", "affects", "parse_version", "supported"]

_SEMVER = re.compile(r"^v?(?P<core>\d+(?:\.\d+){0,2})(?:-(?P<pre>[0-9A-Za-z.-]+))?(?:\+(?P<build>[0-9A-Za-z.+-]*))?$")
_SEMVER_ECOSYSTEMS = frozenset({"npm", "crates.io", "Go"})


@total_ordering
@dataclass(frozen=True)
class SemVer:
    """A Semantic Versioning 2.0 version: precedence ignores build metadata."""

    core: tuple[int, int, int]
    pre: tuple[int | str, ...]

    def _key(self) -> tuple[tuple[int, int, int], int, tuple[tuple[int, int, str], ...]]:
        # a release ranks above its pre-releases; numeric identifiers rank below alphanumeric ones
        ids = tuple((0, i, "") if isinstance(i, int) else (1, 0, i) for i in self.pre)
        return self.core, 0 if self.pre else 1, ids

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, SemVer):
            return NotImplemented
        return self._key() < other._key()


def _semver(text: str) -> SemVer | None:
    match = _SEMVER.match(text.strip())
    if match is None:
        return None
    parts = [int(p) for p in match.group("core").split(".")]
    parts += [0] * (3 - len(parts))
    pre_text = match.group("pre")
    pre: tuple[int | str, ...] = ()
    if pre_text:
        pre = tuple(int(p) if p.isdigit() else p for p in pre_text.split("."))
    return SemVer(core=(parts[0], parts[1], parts[2]), pre=pre)


Comparable = Version | SemVer


def supported(ecosystem: str) -> bool:
    """Versions of this ecosystem can be compared (PyPI, npm, crates.io, Go)."""
    return ecosystem == "PyPI" or ecosystem in _SEMVER_ECOSYSTEMS


def parse_version(ecosystem: str, text: str) -> Comparable | None:
    """``text`` as a version of ``ecosystem``, or None when it is not one (or the ecosystem is unsupported)."""
    if ecosystem == "PyPI":
        try:
            return Version(text.strip())
        except InvalidVersion:
            return None
    if ecosystem in _SEMVER_ECOSYSTEMS:
        return _semver(text)
    return None


@dataclass(frozen=True, kw_only=True)
class Verdict:
    affected: bool
    fixed: tuple[str, ...] = ()
    """The ``fixed`` versions of the ranges that hold the version (what to upgrade to)."""
    unreadable: int = 0
    """Ranges or listed versions skipped because a bound does not parse in the ecosystem's scheme."""


def _events(rng: Mapping[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for event in cast("list[Any]", rng.get("events") or []):
        if not isinstance(event, dict):
            continue
        for kind, value in cast("dict[str, Any]", event).items():
            if kind in ("introduced", "fixed", "last_affected") and isinstance(value, str):
                out.append((kind, value))
    return out


def _in_range(
    ecosystem: str, version: Comparable, events: Sequence[tuple[str, str]]
) -> tuple[bool | None, tuple[str, ...]]:
    """Whether the range holds ``version`` (None: a bound does not parse) and its ``fixed`` bounds above it."""
    lowest: list[tuple[Comparable | None, str, str]] = []
    bounded: list[tuple[Comparable, str, str]] = []
    for kind, raw in events:
        if kind == "introduced" and raw == "0":
            lowest.append((None, kind, raw))  # the lowest of all versions
            continue
        bound = parse_version(ecosystem, raw)
        if bound is None:
            return None, ()
        bounded.append((bound, kind, raw))
    bounded.sort(key=lambda p: p[0])
    ordered: list[tuple[Comparable | None, str, str]] = [*lowest, *bounded]
    affected = False
    for bound, kind, _ in ordered:
        if kind == "introduced":
            affected = affected or bound is None or version >= bound
        elif bound is not None and (version >= bound if kind == "fixed" else version > bound):
            affected = False  # at or past a fix, or past the last affected version
    fixed = tuple(raw for bound, kind, raw in ordered if kind == "fixed" and bound is not None and bound > version)
    return affected, fixed


def affects(ecosystem: str, version_text: str, entry: Mapping[str, Any]) -> Verdict:
    """Whether the OSV ``affected[]`` entry covers ``version_text`` of a package of ``ecosystem``."""
    version = parse_version(ecosystem, version_text)
    listed = False
    for raw in (v for v in cast("list[Any]", entry.get("versions") or []) if isinstance(v, str)):
        other = parse_version(ecosystem, raw) if version is not None else None
        if raw == version_text or (other is not None and other == version):
            listed = True
            break
    if version is None:
        return Verdict(affected=listed, unreadable=0 if listed or not entry.get("ranges") else 1)
    fixed: list[str] = []
    hit = False
    unreadable = 0
    for rng in cast("list[Any]", entry.get("ranges") or []):
        if not isinstance(rng, dict):
            continue
        rng_map = cast("dict[str, Any]", rng)
        if rng_map.get("type") not in ("ECOSYSTEM", "SEMVER"):
            continue
        inside, above = _in_range(ecosystem, version, _events(rng_map))
        if inside is None:
            unreadable += 1
        elif inside:
            hit = True
            fixed.extend(above[:1])
    return Verdict(affected=hit or listed, fixed=tuple(dict.fromkeys(fixed)), unreadable=0 if listed else unreadable)
