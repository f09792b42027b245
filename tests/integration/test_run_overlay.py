"""A run's overlay over a real workspace index and a real run worktree: the run's code found, the originals masked."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon.config import Config, load_config
from daemon.core.models import SearchFilters
from daemon.index.workspace_index import WorkspaceIndex
from daemon.retrieval.ports import BlockingIndexSearch
from daemon.retrieval.run_overlay import OverlaySearch, OverlayWorkspace, RunTreeOverlay
from daemon.service.intel.capabilities import SEARCH_CODE
from daemon.service.intel.params import SearchCodeParams
from daemon.service.workspace.local import LocalWorkspace
from daemon.vcs.worktrees import RunWorktrees

GIT = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"]

CALC = "def scale_total(values, factor):\n    return sum(values) * factor\n"
LEGACY = "def legacy_rounding(value):\n    return round(value, 2)\n"
OTHER = "def parse_header(line):\n    return line.split(':', 1)\n"
RUN_CALC = "def frobnicate_total(values, factor):\n    return sum(v * factor for v in values)\n"
RUN_EXTRA = "def quantize_bucket(value):\n    return int(value) // 10\n"


def _repo(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    for name, text in (("calc.py", CALC), ("legacy.py", LEGACY), ("other.py", OTHER)):
        (root / "src" / name).write_text(text, encoding="utf-8")
    subprocess.run([*GIT, "init", "-q"], cwd=root, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "init"], cwd=root, check=True)
    return root


@pytest.fixture
def indexed(tmp_path: Path) -> Iterator[tuple[Config, WorkspaceIndex]]:
    repo = _repo(tmp_path / "repo")
    config = load_config(
        repo,
        env={"HOME": str(tmp_path / "home")},
        overrides={"state_dir": str(tmp_path / "state"), "embedding": {"enabled": False}},
    )
    with WorkspaceIndex.open(config) as index:
        index.index()
        yield config, index


async def _paths_and_texts(search: OverlaySearch, query: str) -> list[tuple[str, str]]:
    result = await search.search(query, k=10, filters=SearchFilters())
    return [(h.chunk.path, h.chunk.text) for h in result.hits]


async def test_the_run_s_changes_are_searched_in_the_run_s_tree_and_the_originals_are_masked(
    tmp_path: Path, indexed: tuple[Config, WorkspaceIndex]
) -> None:
    config, index = indexed
    branch = RunWorktrees(config.workspace_path, tmp_path / "runs").create("overlay1")
    (branch.workdir / "src" / "calc.py").write_text(RUN_CALC, encoding="utf-8")  # changed
    (branch.workdir / "src" / "legacy.py").unlink()  # deleted
    (branch.workdir / "src" / "extra.py").write_text(RUN_EXTRA, encoding="utf-8")  # added, untracked
    overlay = RunTreeOverlay(branch.workdir, branch.start_commit)
    search = OverlaySearch(BlockingIndexSearch(index), overlay)

    assert ("src/calc.py", RUN_CALC.rstrip("\n")) in await _paths_and_texts(search, "frobnicate total values")
    assert ("src/extra.py", RUN_EXTRA.rstrip("\n")) in await _paths_and_texts(search, "quantize bucket")
    # the original of the changed file and the deleted file are found in the workspace index, not in the run
    assert any(p == "src/calc.py" for p, _ in await _paths_and_texts(_base(index), "scale total"))
    assert all(t != CALC.rstrip("\n") for _, t in await _paths_and_texts(search, "scale total"))
    assert all(p != "src/legacy.py" for p, _ in await _paths_and_texts(search, "legacy rounding value"))
    # what the run did not touch is still the workspace index's
    assert ("src/other.py", OTHER.rstrip("\n")) in await _paths_and_texts(search, "parse header line")
    assert overlay.masked == {"src/calc.py", "src/legacy.py", "src/extra.py"}

    # an edit after the first search is seen by the next one; reverting a file hands it back to the index
    (branch.workdir / "src" / "extra.py").write_text(RUN_EXTRA.replace("quantize", "tessellate"), encoding="utf-8")
    assert any("tessellate" in t for _, t in await _paths_and_texts(search, "tessellate bucket"))
    (branch.workdir / "src" / "calc.py").write_text(CALC, encoding="utf-8")  # back as it was
    assert ("src/calc.py", CALC.rstrip("\n")) in await _paths_and_texts(search, "scale total")

    overlay.close()  # the run ended: the overlay is dropped, searches see the workspace index alone
    assert overlay.masked == frozenset()
    assert any(p == "src/legacy.py" for p, _ in await _paths_and_texts(search, "legacy rounding value"))
    assert all(p != "src/extra.py" for p, _ in await _paths_and_texts(search, "tessellate bucket"))


def _base(index: WorkspaceIndex) -> OverlaySearch:
    """The workspace index alone, through the same port (an overlay that was closed holds nothing)."""
    empty = RunTreeOverlay(Path("/nonexistent"), "HEAD")
    empty.close()
    return OverlaySearch(BlockingIndexSearch(index), empty)


def test_searches_asked_before_a_refresh_began_share_it_and_later_ones_refresh_again(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    branch = RunWorktrees(repo, tmp_path / "runs").create("overlay2")
    overlay = RunTreeOverlay(branch.workdir, branch.start_commit)
    asked = overlay.refreshes
    first = overlay.refresh(after=asked)
    assert first is not None and first.changed == 0
    assert overlay.refresh(after=asked) is None  # asked before the first began: it saw what they would
    (branch.workdir / "src" / "extra.py").write_text(RUN_EXTRA, encoding="utf-8")
    later = overlay.refresh(after=overlay.refreshes)
    assert later is not None and later.changed == 1 and overlay.masked == {"src/extra.py"}


def test_a_tree_taken_as_checked_out_asks_git_nothing_until_the_agents_may_have_written(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    branch = RunWorktrees(repo, tmp_path / "runs").create("overlay3")
    overlay = RunTreeOverlay(branch.workdir, branch.start_commit)
    overlay.pristine = True  # a new run's upfront retrieval: no agent has run
    report = overlay.refresh(after=overlay.refreshes)
    assert report is not None and report.changed == 0 and overlay.refreshes == 0
    (branch.workdir / "src" / "extra.py").write_text(RUN_EXTRA, encoding="utf-8")
    overlay.pristine = False  # the agents start
    later = overlay.refresh(after=overlay.refreshes)
    assert later is not None and later.changed == 1 and overlay.masked == {"src/extra.py"}
    overlay.pristine = True  # what the overlay already holds is never dropped by the assumption
    again = overlay.refresh(after=overlay.refreshes)
    assert again is not None and again.changed == 1 and overlay.refreshes == 2


async def test_the_agents_search_tool_inside_a_run_finds_the_run_s_code(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    config = load_config(
        repo,
        env={"HOME": str(tmp_path / "home")},
        overrides={"state_dir": str(tmp_path / "state"), "embedding": {"enabled": False}},
    )
    with WorkspaceIndex.open(config) as index:
        index.index()
    branch = RunWorktrees(repo, tmp_path / "runs").create("overlay3")
    (branch.workdir / "src" / "calc.py").write_text(RUN_CALC, encoding="utf-8")
    async with LocalWorkspace.open_index(config) as workspace:
        view = OverlayWorkspace(workspace, RunTreeOverlay(branch.workdir, branch.start_commit))
        found = await SEARCH_CODE.run(view, SearchCodeParams(query="frobnicate total values", detail=True))
        original = await SEARCH_CODE.run(view, SearchCodeParams(query="scale total", detail=True))
        await view.aclose()  # the run ended: its view drops the overlay, the workspace stays open
        after = await SEARCH_CODE.run(workspace, SearchCodeParams(query="scale total", detail=True))
    assert [h.text for h in found.hits if h.path == "src/calc.py"] == [RUN_CALC.rstrip("\n")]
    assert all(h.text != CALC.rstrip("\n") for h in original.hits)
    assert any("run overlay" in n for n in found.notes)
    assert [h.text for h in after.hits if h.path == "src/calc.py"] == [CALC.rstrip("\n")]
