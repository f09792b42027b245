"""Language servers see what ided excludes: a file too large for the index is left out of basedpyright's analysis."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from daemon.intel.lsp.registry import exclusion_settings
from daemon.service.intel.code_intel import CodeIntelService
from daemon.service.intel.params import WorkspaceSymbolsParams
from daemon.service.intel.server_exclusions import server_exclusions
from tests.intel_tools import require_server, workspace_config

GENERATED = "def generated_lookup_table_marker() -> int:\n    return 0\n\n\n" + "".join(
    f"VALUE_{i} = {i}\n" for i in range(2000)
)
SMALL = "def handwritten_lookup_marker() -> int:\n    return 1\n"


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "gen").mkdir(parents=True)
    (root / "gen" / "table.py").write_text(GENERATED)
    (root / "app.py").write_text(SMALL)
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "huge.py").write_text(GENERATED)
    return root


def test_the_globs_name_the_too_large_code_files_and_the_skipped_directories(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    globs = server_exclusions(root, max_file_bytes=4000, extra=("docs/**",))
    assert "gen/table.py" in globs and "app.py" not in globs
    assert {"**/node_modules", "**/.*", "docs/**"} <= set(globs)
    assert not any(g.startswith("node_modules/") for g in globs)  # pruned, covered by **/node_modules
    based = exclusion_settings("basedpyright", {}, globs)
    assert based["basedpyright"]["analysis"]["exclude"] == globs
    assert exclusion_settings("pyright", {}, globs)["python"]["analysis"]["exclude"] == globs
    assert "-**/node_modules" in exclusion_settings("gopls", {}, globs)["gopls"]["directoryFilters"]
    mine = {"basedpyright": {"analysis": {"exclude": ["mine/**"]}}}
    assert exclusion_settings("basedpyright", mine, globs)["basedpyright"]["analysis"]["exclude"] == ["mine/**"]


def test_a_code_file_the_index_skips_as_secret_is_excluded_unless_secrets_are_included(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    (root / "deploy.py").write_text('AWS_SECRET_ACCESS_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8f3kR2Lm"\n')
    assert "deploy.py" in server_exclusions(root, max_file_bytes=4000)
    assert "app.py" not in server_exclusions(root, max_file_bytes=4000)
    assert "deploy.py" not in server_exclusions(root, max_file_bytes=4000, include_secrets=True)


def test_what_git_ignores_is_excluded_too(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    (root / ".gitignore").write_text("generated/\n*.log\n")
    (root / "generated").mkdir()
    (root / "generated" / "client.py").write_text(SMALL)
    (root / "run.log").write_text("x\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    globs = server_exclusions(root, max_file_bytes=4000)
    assert {"generated", "run.log"} <= set(globs)
    assert "app.py" not in globs and not any(g.startswith("node_modules") for g in globs)
    assert "generated" not in server_exclusions(root, max_file_bytes=4000, respect_gitignore=False)


async def _symbols(root: Path, state: Path, max_file_bytes: int) -> set[str]:
    config = workspace_config(root, state, index={"max_file_bytes": max_file_bytes})
    async with CodeIntelService.open(config) as intel:
        found = await asyncio.wait_for(
            intel.workspace_symbols(WorkspaceSymbolsParams(query="lookup_marker", language="python")), 90
        )
        return {s.location.path for s in found.symbols}


async def test_basedpyright_does_not_analyse_a_file_the_index_skips_as_too_large(tmp_path: Path) -> None:
    require_server("python")
    root = _workspace(tmp_path)
    # The control: with a limit that keeps the file, the server finds the symbol in it.
    assert await _symbols(root, tmp_path / "state-big", 10_000_000) == {"app.py", "gen/table.py"}
    assert await _symbols(root, tmp_path / "state-small", 4000) == {"app.py"}
