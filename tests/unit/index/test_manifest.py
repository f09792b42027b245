from __future__ import annotations

from pathlib import Path

from daemon.index.manifest import FileRecord, Manifest


def _rec(path: str, chunks: int = 2) -> FileRecord:
    return FileRecord(path=path, size=10, mtime_ns=1, hash="h-" + path, language="python", chunks=chunks)


def test_records_survive_reopening(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite3"
    m = Manifest(db)
    m.put_many([_rec("a.py"), _rec("b.py")])
    m.set_meta({"last_update": "now"})
    m.close()
    again = Manifest(db)
    assert set(again.all()) == {"a.py", "b.py"}
    assert again.get("a.py") == _rec("a.py")
    assert again.get_meta("last_update") == "now"
    again.close()


def test_reconcile_drops_rows_that_disagree_with_the_store(tmp_path: Path) -> None:
    m = Manifest(tmp_path / "m.sqlite3")
    m.put_many([_rec("ok.py", 2), _rec("short.py", 3), _rec("missing.py", 1), _rec("empty.md", 0)])
    store_counts = {"ok.py": 2, "short.py": 1, "orphan.py": 4}
    bad = m.reconcile(store_counts)
    assert bad == ["missing.py", "orphan.py", "short.py"]
    assert set(m.all()) == {"ok.py", "empty.md"}
    m.close()
