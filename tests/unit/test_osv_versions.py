"""Version order per ecosystem and the OSV schema's range rules, on real record shapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from daemon.retrieval.versions import affects, parse_version

OSV = Path(__file__).parents[1] / "fixtures" / "osv"


def _entry(path: str, index: int = 0) -> dict[str, Any]:
    return json.loads((OSV / path).read_text())["affected"][index]


@pytest.mark.parametrize(
    ("ecosystem", "low", "high"),
    [
        ("PyPI", "2.19.1", "2.20.0"),
        ("PyPI", "2.20.0rc1", "2.20.0"),  # a pre-release comes before its release
        ("PyPI", "2.20.0", "2.20.0.post1"),
        ("PyPI", "1.9", "1.10"),  # numeric, not text, order
        ("PyPI", "1!0.1", "1!0.2"),
        ("npm", "4.17.9", "4.17.20"),
        ("npm", "1.0.0-alpha", "1.0.0-alpha.1"),
        ("npm", "1.0.0-alpha.1", "1.0.0-beta"),
        ("npm", "1.0.0-beta.2", "1.0.0-beta.11"),  # numeric identifiers compare as numbers
        ("npm", "1.0.0-rc.1", "1.0.0"),
        ("Go", "v0.9.0", "v0.17.0"),
        ("Go", "v0.0.0-20230101000000-abcdef123456", "v0.1.0"),  # a pseudo-version before the first release
        ("crates.io", "0.2.1-0", "0.2.22"),
    ],
)
def test_versions_order_by_the_ecosystems_rules(ecosystem: str, low: str, high: str) -> None:
    a, b = parse_version(ecosystem, low), parse_version(ecosystem, high)
    assert a is not None and b is not None
    assert a < b and not b < a


def test_equal_versions_in_two_spellings_are_equal() -> None:
    assert parse_version("PyPI", "1.0") == parse_version("PyPI", "1.0.0")
    assert parse_version("Go", "v1.2.3+incompatible") == parse_version("Go", "1.2.3")
    assert parse_version("npm", "not-a-version") is None
    assert parse_version("Maven", "1.0") is None  # an ecosystem ided does not compare


@pytest.mark.parametrize(
    ("version", "affected", "fixed"),
    [("2.19.1", True, ("2.20.0",)), ("0.1", True, ("2.20.0",)), ("2.20.0", False, ()), ("2.31.0", False, ())],
)
def test_an_ecosystem_range_from_introduced_0_to_fixed(version: str, affected: bool, fixed: tuple[str, ...]) -> None:
    verdict = affects("PyPI", version, _entry("PyPI/GHSA-x84v-xcm2-53pg.json"))
    assert (verdict.affected, verdict.fixed) == (affected, fixed)


def test_a_listed_version_is_affected_and_git_ranges_are_not_read_as_versions() -> None:
    entry = _entry("PyPI/PYSEC-2018-28.json")  # a GIT range (commits) and an ECOSYSTEM range, and versions[]
    assert affects("PyPI", "2.19.1", entry).affected
    assert affects("PyPI", "2.19.1", entry).fixed == ("2.20.0",)
    listed_only = {"package": entry["package"], "versions": ["2.19.1"]}
    assert affects("PyPI", "2.19.1", listed_only).affected
    assert not affects("PyPI", "2.19.2", listed_only).affected
    assert affects("PyPI", "2.19.1.0", listed_only).affected  # the same version, another spelling


@pytest.mark.parametrize(
    ("version", "affected"),
    [("0.1.43", True), ("0.1.44", False), ("0.2.0", False), ("0.2.1", True), ("0.2.22", True), ("0.2.23", False)],
)
def test_two_intervals_in_one_semver_range(version: str, affected: bool) -> None:
    assert affects("crates.io", version, _entry("crates.io/RUSTSEC-2020-0071.json")).affected is affected


def test_go_versions_keep_their_v_and_the_module_entry_is_read() -> None:
    x_net = _entry("Go/GO-2023-2102.json", 1)
    assert affects("Go", "v0.15.0", x_net).affected and affects("Go", "v0.15.0", x_net).fixed == ("0.17.0",)
    assert not affects("Go", "v0.17.0", x_net).affected
    stdlib = _entry("Go/GO-2023-2102.json", 0)
    assert affects("Go", "v1.21.1", stdlib).fixed == ("1.21.3",)
    assert not affects("Go", "v1.20.10", stdlib).affected


def test_last_affected_is_inclusive_and_unsorted_events_are_sorted() -> None:
    entry = {
        "package": {"ecosystem": "npm", "name": "x"},
        "ranges": [{"type": "SEMVER", "events": [{"last_affected": "1.4.2"}, {"introduced": "1.2.0"}]}],
    }
    assert [affects("npm", v, entry).affected for v in ("1.1.9", "1.2.0", "1.4.2", "1.4.3")] == [
        False,
        True,
        True,
        False,
    ]


def test_an_unreadable_bound_is_counted_never_read_as_safe() -> None:
    entry = {
        "package": {"ecosystem": "PyPI", "name": "x"},
        "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "not a version"}]}],
    }
    verdict = affects("PyPI", "1.0", entry)
    assert not verdict.affected and verdict.unreadable == 1
    assert affects("PyPI", "garbage!", _entry("PyPI/GHSA-x84v-xcm2-53pg.json")).unreadable == 1
