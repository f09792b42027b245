"""FileCache: a file's lines and syntax tree are reused while the file stays the same, read again once it changes."""

from __future__ import annotations

from pathlib import Path

from daemon.intel.file_cache import FileCache
from daemon.intel.syntax_budget import DEFAULT_BUDGET

SOURCE = "class Cart:\n    def add(self, item):\n        self.items.append(item)\n"


def test_lines_and_trees_are_kept_until_the_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "cart.py"
    path.write_text(SOURCE)
    reads: list[Path] = []

    def read(p: Path) -> list[str] | None:
        reads.append(p)
        return p.read_text().split("\n")

    cache = FileCache(read)
    lines = cache.lines(path)
    assert lines is not None and cache.lines(path) is lines
    assert reads == [path]
    first = cache.syntax(path, "python", lines, DEFAULT_BUDGET)
    again = cache.syntax(path, "python", lines, DEFAULT_BUDGET)
    assert again.tree is first.tree  # not parsed twice
    assert [s.qualified_name for s in again.scopes_at(3, 9)] == ["Cart.add", "Cart"]

    path.write_text(SOURCE.replace("add", "add_item"))  # a new size: read and parsed again
    changed = cache.lines(path)
    assert changed is not None and reads == [path, path]
    fresh = cache.syntax(path, "python", changed, DEFAULT_BUDGET)
    assert fresh.tree is not first.tree
    assert [s.qualified_name for s in fresh.scopes_at(3, 9)] == ["Cart.add_item", "Cart"]


def test_only_the_most_recent_files_are_kept(tmp_path: Path) -> None:
    reads: list[str] = []

    def read(p: Path) -> list[str] | None:
        reads.append(p.name)
        return p.read_text().split("\n")

    cache = FileCache(read, size=2)
    paths = [tmp_path / f"m{i}.py" for i in range(3)]
    for p in paths:
        p.write_text(SOURCE)
        cache.lines(p)
    cache.lines(paths[2])
    cache.lines(paths[0])  # evicted by m2: read again
    assert reads == ["m0.py", "m1.py", "m2.py", "m0.py"]
