"""The library-docs source: a question about a dependency's API finds the dependency's own definition,
read from real installed packages (a real virtual environment holding httpx as pip installed it, and
node_modules holding TypeScript's published declarations), in its own scope."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from daemon.config import Config
from daemon.core.workflow_schema import RetrievalStrategyConfig
from daemon.index.workspace_index import WorkspaceIndex
from daemon.retrieval.library_docs import LibraryShelf
from daemon.retrieval.models import RetrievalRequest, RetrievalResult, SourceName, SourceState, StageHints, WorkflowKind
from daemon.service.pipeline.retrieval_sources import build_retrieval_agent
from tests.integration.conftest import FIXTURES, make_config

SITE = Path(sysconfig.get_paths()["purelib"])
TYPESCRIPT = Path(__file__).parents[2] / ".tools" / "node" / "node_modules" / "typescript"


def _install_copy(site: Path, dist: str, package: str) -> None:
    """The installed files of ``dist`` (its dist-info and its package), as pip laid them out."""
    info = next(SITE.glob(f"{dist}-*.dist-info"))
    shutil.copytree(info, site / info.name)
    shutil.copytree(SITE / package, site / package, ignore=shutil.ignore_patterns("__pycache__"))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, WorkspaceIndex, Config]]:
    base = tmp_path_factory.mktemp("libs")
    root = base / "ws"
    shutil.copytree(FIXTURES / "retrieval_shop", root)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "shop"\nversion = "0.1.0"\ndependencies = ["httpx>=0.27"]\n'
    )
    (root / ".gitignore").write_text(".venv/\nnode_modules/\n")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True, timeout=120)
    site = next((root / ".venv").glob("lib/python*/site-packages"))
    _install_copy(site, "httpx", "httpx")
    _install_copy(site, "packaging", "packaging")  # installed, but the workspace does not depend on it
    if TYPESCRIPT.is_dir():
        (root / "package.json").write_text(json.dumps({"name": "shop-web", "devDependencies": {"typescript": "^5"}}))
        target = root / "node_modules" / "typescript"
        (target / "lib").mkdir(parents=True)
        for name in ("package.json", "README.md", "lib/typescript.d.ts"):
            shutil.copy(TYPESCRIPT / name, target / name)
    config = make_config(root, base / "state")
    with WorkspaceIndex.open(config) as index:
        index.index()
        index.embed()
        yield root, index, config


async def _ask(workspace: Any, task: str, **retrieval: Any) -> RetrievalResult:
    _, index, config = workspace
    config = config.model_copy(update={"retrieval": config.retrieval.model_copy(update=retrieval)})
    agent = build_retrieval_agent(config, index=index)
    request = RetrievalRequest(
        task=task, workflow_kind=WorkflowKind.CODE, stage=StageHints(stage_id="code", token_budget=6000)
    )
    return await asyncio.wait_for(agent.retrieve(request, RetrievalStrategyConfig()), 120)


async def test_a_question_about_a_dependencys_api_finds_its_definition_in_the_environment(workspace: Any) -> None:
    result = await _ask(workspace, "Set a timeout on the httpx AsyncClient that fetches exchange rates")
    status = result.source(SourceName.LIBRARIES)
    assert status is not None and status.state is SourceState.OK and status.candidates > 0
    found = [c for c in result.candidates if c.source is SourceName.LIBRARIES]
    assert found[0].cite.startswith(".venv/lib/python") and "site-packages/httpx/_client.py:" in found[0].cite
    assert found[0].cite.endswith("(AsyncClient)")
    root = workspace[0]
    cited = found[0].cite.split(":")[0]
    start = int(found[0].cite.split(":")[1].split("-")[0])
    assert (root / cited).read_text().splitlines()[start - 1].startswith("class AsyncClient")
    # its own scope: the workspace index never holds the environment's files, and nothing else cites them
    assert not any(".venv/" in c.cite for c in result.candidates if c.source is not SourceName.LIBRARIES)
    piece = next((p for p in result.context if p.source is SourceName.LIBRARIES), None)
    assert piece is None or piece.text.startswith("httpx 0.")


async def test_a_question_naming_no_dependency_asks_nothing_and_undeclared_packages_are_not_read(
    workspace: Any,
) -> None:
    plain = await _ask(workspace, "Fix the rounding of apply_discount so that discounts round to whole cents")
    status = plain.source(SourceName.LIBRARIES)
    assert status is not None and status.state is SourceState.OK and status.candidates == 0
    undeclared = await _ask(workspace, "Compare versions with packaging Version and SpecifierSet")
    assert not any(c.source is SourceName.LIBRARIES for c in undeclared.candidates)
    off = await _ask(workspace, "Set a timeout on the httpx AsyncClient", libraries=False)
    switched = off.source(SourceName.LIBRARIES)
    assert (
        switched is not None and switched.state is SourceState.OFF and switched.reason == "retrieval.libraries is false"
    )


@pytest.mark.skipif(not TYPESCRIPT.is_dir(), reason="TypeScript's package is not in .tools/node (./dev setup)")
def test_node_modules_declarations_answer_for_an_npm_dependency(workspace: Any) -> None:
    shelf = LibraryShelf(workspace[0])
    assert {(lib.name, lib.ecosystem) for lib in shelf.libraries()} == {("httpx", "PyPI"), ("typescript", "npm")}
    top = shelf.search("typescript createSourceFile for a tsx file", k=3)
    assert top and top[0][1].chunk.qualified_name == "ts.createSourceFile"
    assert top[0][1].chunk.path == "node_modules/typescript/lib/typescript.d.ts"
