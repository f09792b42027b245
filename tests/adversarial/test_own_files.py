"""Files ided reads of its own, made hostile: coded errors that name the file, never a traceback.

Each is tried through the real CLI in its own process: an OSV export whose one record nests 100,000
deep (directory and ZIP: the record is skipped with its reason, the rest imports), a record id with a
trailing newline (refused: no file name with a line break), a mirror ``index.json`` nested as deep
(``ided cve audit`` says the mirror is unreadable, ``ided cve sync`` rebuilds it), a workspace
``package-lock.json`` nested as deep (the audit reads the rest and names the file), a trust file nested
as deep or not JSON (``config_invalid`` naming it, for every command), a ``.ided.toml`` nested as deep,
and a damaged ``runs.sqlite3`` or ``checkpoints.sqlite3`` (``run_store_failed`` naming it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

FIXTURES = Path(__file__).parents[1] / "fixtures"
OSV = FIXTURES / "osv"
MANIFESTS = FIXTURES / "dependency_manifests"
DEEP = 100_000
CALL_TIMEOUT = 120


def deep_json(key: str = "x") -> str:
    return '{"' + key + '": ' + "[" * DEEP + "]" * DEEP + "}"


def ided(tmp_path: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("IDED_")},
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
        "IDED_STATE_DIR": str(tmp_path / "state"),
        "IDED_EMBEDDING__ENABLED": "false",
        "IDED_RETRIEVAL__OSV_MIRROR": str(tmp_path / "mirror"),
        "HF_HUB_OFFLINE": "1",
    }
    return subprocess.run(
        [sys.executable, "-P", "-m", "daemon", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=CALL_TIMEOUT,
        check=False,
    )


def no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr, done.stderr[-2000:]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(MANIFESTS, root)
    return root


def test_a_hostile_osv_export_skips_the_bad_records_and_imports_the_rest(tmp_path: Path, workspace: Path) -> None:
    export = tmp_path / "export"
    shutil.copytree(OSV / "PyPI", export)
    (export / "DEEP-0001.json").write_text(deep_json("affected"))
    good = json.loads(next(iter(sorted((OSV / "npm").glob("*.json")))).read_text())
    (export / "NEWLINE.json").write_text(json.dumps({**good, "id": good["id"] + "\n"}))
    archive = tmp_path / "all.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for record in sorted(export.glob("*.json")):
            zf.write(record, record.name)
    for source in (export, archive):
        shutil.rmtree(tmp_path / "mirror", ignore_errors=True)
        done = ided(tmp_path, workspace, "cve", "sync", "--from", str(source), "--json")
        no_traceback(done)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert (report["added"], report["invalid"]) == (3, 2), report
        assert any("DEEP-0001.json" in p and "nested more than" in p for p in report["problems"]), report
        assert any("NEWLINE.json" in p and "no valid 'id'" in p for p in report["problems"]), report
        assert not [p for p in (tmp_path / "mirror").iterdir() if "\n" in p.name]
    print("[adversarial] OSV export: records 5, 2 hostile skipped with their reason, 3 imported, 0 tracebacks")


def test_a_hostile_mirror_index_and_lock_file_are_named_not_a_traceback(tmp_path: Path, workspace: Path) -> None:
    assert ided(tmp_path, workspace, "cve", "sync", "--from", str(OSV)).returncode == 0
    (workspace / "web" / "package-lock.json").write_text(deep_json("packages"))
    audit = ided(tmp_path, workspace, "cve", "audit", "--json")
    no_traceback(audit)
    body = json.loads(audit.stdout)
    assert any("package-lock.json" in p and "nested more than" in p for p in body["problems"]), body["problems"]
    assert body["findings"], "the other manifests are still audited"
    index = tmp_path / "mirror" / "index.json"
    index.write_text(deep_json("records"))
    refused = ided(tmp_path, workspace, "cve", "audit")
    no_traceback(refused)
    assert refused.returncode == 1 and str(index) in refused.stderr and "source_unavailable" in refused.stderr
    rebuilt = ided(tmp_path, workspace, "cve", "sync", "--from", str(OSV), "--json")
    no_traceback(rebuilt)
    assert rebuilt.returncode == 0 and "rebuilt" in json.loads(rebuilt.stdout)["notes"][0]
    assert ided(tmp_path, workspace, "cve", "audit", "--json").returncode in (0, 1)


@pytest.mark.parametrize("content", [deep_json("workspaces"), "{not json", '{"workspaces": 3}'])
def test_a_damaged_trust_file_is_config_invalid_naming_it_for_every_command(
    tmp_path: Path, workspace: Path, content: str
) -> None:
    trust_file = tmp_path / "home" / ".config" / "ided" / "trusted-workspaces.json"
    trust_file.parent.mkdir(parents=True)
    trust_file.write_text(content)
    for args in (("status",), ("trust", "--list"), ("trust", str(workspace)), ("search", "x")):
        done = ided(tmp_path, workspace, *args)
        no_traceback(done)
        assert done.returncode == 1 and str(trust_file) in done.stderr and "config_invalid" in done.stderr, args
    assert trust_file.read_text() == content  # never written over


def test_a_deep_ided_toml_is_config_invalid(tmp_path: Path, workspace: Path) -> None:
    (workspace / ".ided.toml").write_text("a = " + "[" * DEEP + "]" * DEEP + "\n")
    done = ided(tmp_path, workspace, "status")
    no_traceback(done)
    assert done.returncode == 1 and ".ided.toml" in done.stderr and "config_invalid" in done.stderr


@pytest.mark.parametrize("name", ["runs.sqlite3", "checkpoints.sqlite3"])
def test_a_damaged_run_store_or_checkpoint_store_is_run_store_failed_naming_it(
    tmp_path: Path, workspace: Path, name: str
) -> None:
    assert ided(tmp_path, workspace, "runs").returncode == 0  # both files exist now
    damaged = tmp_path / "state" / "pipeline" / name
    data = bytearray(damaged.read_bytes())
    data[100:] = bytes((b * 7 + 13) % 256 for b in data[100:])  # the header kept, the pages garbled
    damaged.write_bytes(bytes(data))
    done = ided(tmp_path, workspace, "runs")
    no_traceback(done)
    assert done.returncode == 1 and str(damaged) in done.stderr and "run_store_failed" in done.stderr, done.stderr
