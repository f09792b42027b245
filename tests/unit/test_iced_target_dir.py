"""The Iced client's cargo target directory is one per checkout (scripts/iced-target-dir.sh): with the
one directory every checkout shared before, ``debug/ided-iced`` was whichever checkout built last, and
the screenshot and bench scripts ran that binary."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "iced-target-dir.sh"
USERS = ["scripts/test-iced.sh", "scripts/iced-screenshot.sh", "bench/iced_client.sh", "justfile"]


def _target_dir(checkout: Path, cache: Path, **env: str) -> str:
    (checkout / "scripts").mkdir(parents=True, exist_ok=True)
    shutil.copy(SCRIPT, checkout / "scripts" / SCRIPT.name)
    base = {k: v for k, v in os.environ.items() if k != "CARGO_TARGET_DIR"}
    done = subprocess.run(
        ["bash", str(checkout / "scripts" / SCRIPT.name)],
        env={**base, "XDG_CACHE_HOME": str(cache), **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_each_checkout_gets_its_own_target_dir_under_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _target_dir(tmp_path / "one" / "ided", cache)
    second = _target_dir(tmp_path / "two" / "ided", cache)
    assert first != second
    for found in (first, second):
        assert Path(found).parent == cache / "ided" / "iced-targets", found
        assert Path(found).name.startswith("ided-"), found
    assert _target_dir(tmp_path / "one" / "ided", cache) == first  # stable: rebuilds stay incremental


def test_cargo_target_dir_overrides_it(tmp_path: Path) -> None:
    chosen = str(tmp_path / "mine")
    assert _target_dir(tmp_path / "ided", tmp_path / "cache", CARGO_TARGET_DIR=chosen) == chosen


def test_every_build_of_the_client_asks_the_script() -> None:
    for name in USERS:
        text = (REPO / name).read_text()
        assert "scripts/iced-target-dir.sh" in text, name
        assert "ided/iced-target}" not in text, f"{name} still names the shared target dir"
