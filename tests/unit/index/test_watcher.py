"""A watched batch that names a new directory names what is already inside it (the files written
before the watcher's watch on that directory existed raise no event of their own)."""

from __future__ import annotations

import os
from pathlib import Path

from daemon.index.watcher import with_directory_contents


def test_a_new_directory_in_a_batch_brings_its_files_and_links_but_follows_no_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "lib").mkdir(parents=True)
    (outside / "lib" / "secret.py").write_text("x = 1\n")
    root = tmp_path / "ws"
    (root / "late" / "deep").mkdir(parents=True)
    (root / "late" / "ok.py").write_text("def ok():\n    return 1\n")
    (root / "late" / "deep" / "more.py").write_text("y = 2\n")
    (root / "late" / "node_modules").mkdir()
    (root / "late" / "node_modules" / "dep.js").write_text("")
    os.symlink(outside / "lib", root / "late" / "outdir")
    os.symlink("../.env", root / "late" / "envlink.py")
    (root / "kept.py").write_text("")

    batch = with_directory_contents(root, {"late", "kept.py", "gone.py"})

    assert batch == sorted(
        ["gone.py", "kept.py", "late", "late/deep/more.py", "late/envlink.py", "late/ok.py", "late/outdir"]
    )


def test_a_link_to_a_directory_in_a_batch_is_named_and_not_entered(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "a.py").write_text("")
    root = tmp_path / "ws"
    root.mkdir()
    os.symlink(tmp_path / "outside", root / "out")
    assert with_directory_contents(root, {"out"}) == ["out"]
