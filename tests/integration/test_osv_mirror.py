"""The offline advisory source: OSV exports imported into a mirror (directory and OSV's all.zip), the
workspace's manifests and lock files audited against it, and the spec workflow's security stage
given the findings, over real files, a real index and the real CLI in its own process."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from daemon.config import Config
from daemon.errors import ErrorCode, InvalidToolInput, SourceUnavailable
from daemon.index.workspace_index import WorkspaceIndex
from daemon.orchestration.workflow_loader import load_workflow_file
from daemon.retrieval.models import RetrievalRequest, RetrievalResult, SourceName, SourceState, StageHints, WorkflowKind
from daemon.retrieval.osv_mirror import OsvMirror
from daemon.retrieval.osv_sync import MAX_RECORD_BYTES, sync_mirror
from daemon.service.pipeline.retrieval_sources import build_retrieval_agent
from daemon.trust import TrustStore
from tests.integration.conftest import FIXTURES, make_config

FIXTURE_ROOT = Path(__file__).parents[1] / "fixtures"
OSV = FIXTURE_ROOT / "osv"
MANIFESTS = FIXTURE_ROOT / "dependency_manifests"
SPEC = FIXTURE_ROOT / "spec_workflows" / "feature_with_iterative_testing.yaml"
EXPECTED = {
    ("requests", "2.19.1", "GHSA-x84v-xcm2-53pg"),
    ("requests", "2.19.1", "PYSEC-2018-28"),
    ("jinja2", "3.1.2", "GHSA-h5c8-rqwp-cp95"),
    ("lodash", "4.17.20", "GHSA-35jh-r3h4-6jhm"),
    ("golang.org/x/net", "v0.15.0", "GO-2023-2102"),
    ("time", "0.2.22", "RUSTSEC-2020-0071"),
}


def _all_zip(tmp: Path, ecosystem: str) -> Path:
    """``<ecosystem>/all.zip`` as OSV ships it: one ``<ID>.json`` per record at the archive's root."""
    path = tmp / f"{ecosystem}-all.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for record in sorted((OSV / ecosystem).glob("*.json")):
            archive.write(record, record.name)
    return path


def _findings(mirror: Path, root: Path) -> set[tuple[str, str, str]]:
    return {(f.name, f.version, f.advisory) for f in OsvMirror(mirror).audit_blocking(root).findings}


def test_an_export_directory_and_an_all_zip_import_once_and_a_second_sync_changes_nothing(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    first = sync_mirror(_all_zip(tmp_path, "PyPI"), mirror)
    assert (first.added, first.updated, first.unchanged, first.invalid, first.total) == (3, 0, 0, 0, 3)
    assert first.ecosystems == {"PyPI": 3}
    stored = {p.name: p.stat().st_mtime_ns for p in mirror.glob("*.json")}
    again = sync_mirror(_all_zip(tmp_path, "PyPI"), mirror)
    assert (again.added, again.updated, again.unchanged, again.total) == (0, 0, 3, 3)
    assert {p.name: p.stat().st_mtime_ns for p in mirror.glob("*.json") if p.name != "index.json"} == {
        k: v for k, v in stored.items() if k != "index.json"
    }
    tree = sync_mirror(OSV, mirror)  # the per-ecosystem directories, PyPI's records already there
    assert (tree.added, tree.unchanged, tree.total) == (3, 3, 6)
    assert tree.ecosystems == {"PyPI": 3, "npm": 1, "Go": 1, "crates.io": 1}
    stored_record = json.loads((mirror / "GHSA-35jh-r3h4-6jhm.json").read_text())
    assert stored_record == json.loads((OSV / "npm" / "GHSA-35jh-r3h4-6jhm.json").read_text())  # verbatim


def test_a_later_record_replaces_the_stored_one_and_an_older_one_does_not(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    sync_mirror(OSV / "PyPI", mirror)
    record = json.loads((OSV / "PyPI" / "GHSA-h5c8-rqwp-cp95.json").read_text())
    export = tmp_path / "export"
    export.mkdir()
    record["modified"] = "2025-06-01T00:00:00Z"
    record["affected"][0]["ranges"][0]["events"][1]["fixed"] = "3.1.5"
    (export / "GHSA-h5c8-rqwp-cp95.json").write_text(json.dumps(record))
    newer = sync_mirror(export, mirror)
    assert (newer.updated, newer.added, newer.total) == (1, 0, 3)
    record["modified"] = "2020-01-01T00:00:00Z"
    record["affected"][0]["ranges"][0]["events"][1]["fixed"] = "9.9.9"
    (export / "GHSA-h5c8-rqwp-cp95.json").write_text(json.dumps(record))
    older = sync_mirror(export, mirror)
    assert (older.older, older.updated) == (1, 0)
    kept = json.loads((mirror / "GHSA-h5c8-rqwp-cp95.json").read_text())
    assert kept["affected"][0]["ranges"][0]["events"][1]["fixed"] == "3.1.5"
    hits = OsvMirror(mirror).match("PyPI", "Jinja2", "3.1.4")[0]  # 3.1.4 is affected now (fixed in 3.1.5)
    assert [r["id"] for r, _ in hits] == ["GHSA-h5c8-rqwp-cp95"] and hits[0][1] == ("3.1.5",)


def test_hostile_exports_are_refused_or_counted_and_nothing_lands_outside_the_mirror(tmp_path: Path) -> None:
    mirror = tmp_path / "inner" / "mirror"
    good = json.loads((OSV / "npm" / "GHSA-35jh-r3h4-6jhm.json").read_text())
    archive = tmp_path / "hostile.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("../../escape.json", json.dumps(good))  # a member path pointing out: the id names the file
        zf.writestr("not-json.json", "{ nope")
        zf.writestr("no-id.json", json.dumps({"modified": "2024-01-01T00:00:00Z"}))
        zf.writestr("traversal-id.json", json.dumps({**good, "id": "../../../etc/passwd"}))
        zf.writestr("bad-range.json", json.dumps({**good, "id": "GHSA-aaaa-bbbb-cccc", "affected": [{"ranges": 3}]}))
        zf.writestr("huge.json", b" " * (MAX_RECORD_BYTES + 1))
        zf.writestr("README.md", "not a record")
    report = sync_mirror(archive, mirror)
    assert (report.added, report.invalid, report.total) == (1, 5, 1)
    assert {p.split(":")[0] for p in report.problems} == {
        "not-json.json",
        "no-id.json",
        "traversal-id.json",
        "bad-range.json",
        "huge.json",
    }
    assert sorted(p.name for p in mirror.iterdir()) == ["GHSA-35jh-r3h4-6jhm.json", "index.json"]
    assert not (tmp_path / "escape.json").exists() and not (tmp_path / "inner" / "escape.json").exists()

    not_zip = tmp_path / "all.zip"
    not_zip.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(InvalidToolInput) as refused:
        sync_mirror(not_zip, mirror)
    assert refused.value.code is ErrorCode.INVALID_TOOL_INPUT and "neither a directory nor a ZIP" in str(refused.value)
    with pytest.raises(InvalidToolInput, match="does not exist"):
        sync_mirror(tmp_path / "missing.zip", mirror)
    with pytest.raises(InvalidToolInput, match="the mirror itself"):
        sync_mirror(mirror, mirror)
    assert OsvMirror(mirror).index().entries.keys() == {"GHSA-35jh-r3h4-6jhm"}  # the mirror is still whole


def test_the_audit_matches_each_locked_version_of_every_ecosystem(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    sync_mirror(OSV, mirror)
    root = tmp_path / "ws"
    shutil.copytree(MANIFESTS, root)
    report = OsvMirror(mirror).audit_blocking(root)
    assert {(f.name, f.version, f.advisory) for f in report.findings} == EXPECTED
    # Jinja2 3.1.4 (poetry.lock), requests 2.31.0, lodash-es 4.17.21, time 0.3.36 are past their fixes
    by_id = {f.advisory: f for f in report.findings}
    assert by_id["GHSA-x84v-xcm2-53pg"].where == ("requirements.txt:4",)
    assert by_id["GHSA-x84v-xcm2-53pg"].fixed == ("2.20.0",) and by_id["GHSA-x84v-xcm2-53pg"].severity == "HIGH"
    assert by_id["GO-2023-2102"].fixed == ("0.17.0",)
    assert report.records == 6 and report.unreadable == []

    (root / "requirements.txt").write_text("requests==2.20.0\n")  # the fix applied: the finding goes
    assert {a for n, _, a in _findings(mirror, root) if n == "requests"} == set()


def test_a_hand_unzipped_export_without_an_index_is_read_and_withdrawn_records_are_skipped(tmp_path: Path) -> None:
    mirror = tmp_path / "unzipped"
    shutil.copytree(OSV, mirror)
    withdrawn = json.loads((OSV / "npm" / "GHSA-35jh-r3h4-6jhm.json").read_text())
    (mirror / "npm" / "GHSA-35jh-r3h4-6jhm.json").write_text(
        json.dumps({**withdrawn, "withdrawn": "2024-05-01T00:00:00Z"})
    )
    root = tmp_path / "ws"
    shutil.copytree(MANIFESTS, root)
    assert _findings(mirror, root) == {e for e in EXPECTED if e[0] != "lodash"}


def test_lookups_by_alias_and_by_pin(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    sync_mirror(OSV, mirror)
    osv = OsvMirror(mirror)

    async def look(query: str) -> list[str]:
        return [h.ref or "" for h in await osv.lookup(query, limit=8)]

    assert sorted(asyncio.run(look("CVE-2018-18074"))) == ["GHSA-x84v-xcm2-53pg", "PYSEC-2018-28"]
    assert asyncio.run(look("ghsa-35jh-r3h4-6jhm")) == ["GHSA-35jh-r3h4-6jhm"]
    assert sorted(asyncio.run(look("requests==2.19.1"))) == ["GHSA-x84v-xcm2-53pg", "PYSEC-2018-28"]
    assert asyncio.run(look("lodash@4.17.20")) == ["GHSA-35jh-r3h4-6jhm"]
    assert asyncio.run(look("requests==2.31.0")) == []
    assert asyncio.run(look("CVE-1999-0001")) == []


def test_a_missing_mirror_is_unavailable_with_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(SourceUnavailable, match="does not exist; import an export with `ided cve sync"):
        OsvMirror(tmp_path / "nowhere").index()
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "index.json").write_text("[]")
    with pytest.raises(SourceUnavailable, match="run `ided cve sync --from` again"):
        OsvMirror(broken).index()


# -- the source in the retrieval agent and the spec workflow ------------------------------------


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, WorkspaceIndex, Config, Path]]:
    """retrieval_shop with the dependency manifests beside its code, indexed (lexical + dense), and a mirror."""
    base = tmp_path_factory.mktemp("osvshop")
    root = base / "ws"
    shutil.copytree(FIXTURES / "retrieval_shop", root)
    shutil.copytree(MANIFESTS, root, dirs_exist_ok=True)
    mirror = base / "mirror"
    sync_mirror(OSV, mirror)
    config = make_config(root, base / "state")
    with WorkspaceIndex.open(config) as index:
        index.index()
        index.embed()
        yield root, index, config, mirror


def _request(stage: str) -> RetrievalRequest:
    hints = StageHints(stage_id=stage, token_budget=6000)
    task = "Add a discount code endpoint to the shop's pricing"
    return RetrievalRequest(task=task, workflow_kind=WorkflowKind.CODE, stage=hints)


async def _retrieve(shop: Any, stage: str, **retrieval: Any) -> RetrievalResult:
    _, index, config, _ = shop
    config = config.model_copy(update={"retrieval": config.retrieval.model_copy(update=retrieval)})
    agent = build_retrieval_agent(config, index=index)
    strategy = load_workflow_file(SPEC).retrieval_strategy_config  # cve_database, trigger_stages: [security_review]
    return await asyncio.wait_for(agent.retrieve(_request(stage), strategy), 60)


async def test_the_spec_security_stage_gets_the_dependency_audit_and_other_stages_do_not(shop: Any) -> None:
    mirror = str(shop[3])
    security = await _retrieve(shop, "security_review", osv_mirror=mirror)
    status = security.source(SourceName.ADVISORIES)
    assert status is not None and status.state is SourceState.OK and status.candidates == 6  # summary + 5 packages
    pieces = [p for p in security.context if p.source is SourceName.ADVISORIES]
    # every finding reaches the stage, under the default thresholds, beside the code pieces
    assert len(pieces) == 6 and any(p.source is SourceName.CODE for p in security.context)
    summary = next(p for p in pieces if p.id == "advisory:audit")
    assert "5 affected by 6 known advisories" in summary.text and "flask (requirements.txt:7)" in summary.text
    requests = next(p for p in pieces if p.id == "advisory:PyPI/requests@2.19.1")
    assert requests.attribution.ref == "GHSA-x84v-xcm2-53pg, PYSEC-2018-28"
    assert "declared at requirements.txt:4" in requests.text and "Fixed in 2.20.0." in requests.text
    assert requests.attribution.url == "https://osv.dev/vulnerability/GHSA-x84v-xcm2-53pg"

    coding = await _retrieve(shop, "code_generation", osv_mirror=mirror)
    other = coding.source(SourceName.ADVISORIES)
    assert other is not None and other.state is SourceState.OFF
    assert other.reason == "the workflow triggers it only for security_review"


async def test_without_a_mirror_the_source_is_off_and_says_so(shop: Any) -> None:
    result = await _retrieve(shop, "security_review")
    status = result.source(SourceName.ADVISORIES)
    assert status is not None and status.state is SourceState.OFF
    assert (status.reason or "").startswith("no OSV mirror configured")
    missing = await _retrieve(shop, "security_review", osv_mirror=str(shop[0] / "no-such-mirror"))
    gone = missing.source(SourceName.ADVISORIES)
    assert gone is not None and gone.state is SourceState.UNAVAILABLE and "does not exist" in (gone.reason or "")


# -- the command line, in its own process ----------------------------------------------------------


def _ided(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(cwd.parent / "home"), "XDG_CONFIG_HOME": str(cwd.parent / "home" / ".config")}
    env = {k: v for k, v in env.items() if not k.startswith("IDED_")}
    return subprocess.run(
        [sys.executable, "-m", "daemon", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_cve_sync_and_audit_on_the_command_line(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(MANIFESTS, root)
    (root / ".ided.toml").write_text(f'state_dir = "{tmp_path / "state"}"\n[retrieval]\nosv_mirror = ".osv"\n')
    TrustStore(tmp_path / "home" / ".config" / "ided" / "trusted-workspaces.json").add(root)  # as _ided's HOME
    synced = _ided(root, "cve", "sync", "--from", str(_all_zip(tmp_path, "npm")), "--json")
    assert synced.returncode == 0, synced.stderr
    assert json.loads(synced.stdout)["added"] == 1 and (root / ".osv" / "GHSA-35jh-r3h4-6jhm.json").is_file()
    text = _ided(root, "cve", "sync", "--from", str(OSV))
    assert (
        text.returncode == 0 and "5 added, 0 updated, 1 unchanged" in text.stderr and "6 records in all" in text.stderr
    )
    audit = _ided(root, "cve", "audit", "--json")
    assert audit.returncode == 0, audit.stderr
    assert {(f["name"], f["version"], f["advisory"]) for f in json.loads(audit.stdout)["findings"]} == EXPECTED
    printed = _ided(root, "cve", "audit")
    assert printed.returncode == 1 and "lodash 4.17.20 (npm; declared at web/package-lock.json:20)" in printed.stdout
    refused = _ided(root, "cve", "sync", "--from", str(root / "requirements.txt"))
    assert refused.returncode == 1 and "neither a directory nor a ZIP archive" in refused.stderr
    (root / ".ided.toml").write_text(f'state_dir = "{tmp_path / "state"}"\n')
    unset = _ided(root, "cve", "audit")
    assert unset.returncode == 1 and "no OSV mirror configured" in unset.stderr
