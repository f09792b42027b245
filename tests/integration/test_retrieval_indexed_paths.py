"""A path glob no indexed file matches is not searched; a file indexed later that matches it is found."""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import replace
from pathlib import Path

from daemon.core.models import SearchFilters, SearchResult
from daemon.core.workflow_schema import RetrievalStrategyConfig
from daemon.index.workspace_index import WorkspaceIndex
from daemon.retrieval.agent import RetrievalAgent
from daemon.retrieval.indexed_paths import IndexedPaths
from daemon.retrieval.models import RetrievalRequest, SourceName, StageHints, WorkflowKind
from daemon.retrieval.ports import IndexSearch
from daemon.service.pipeline.retrieval_sources import build_retrieval_agent
from tests.integration.conftest import FIXTURES, make_config


class _Counting:
    """The real index port, noting the path glob of each search that reaches it."""

    def __init__(self, inner: IndexSearch) -> None:
        self.inner = inner
        self.globs: list[str | None] = []

    async def search(self, query: str, *, k: int, filters: SearchFilters | None) -> SearchResult:
        self.globs.append(filters.path_glob if filters is not None else None)
        return await self.inner.search(query, k=k, filters=filters)


_TASK = "Why are money amounts kept as Decimal in apply_discount?"
_ADR = Path("docs/adr/0001-money-as-decimal.md")


async def test_a_decision_glob_no_indexed_file_matches_makes_no_search_until_a_matching_file_is_indexed(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "retrieval_shop", root)
    adr_text = (root / _ADR).read_text(encoding="utf-8")
    shutil.rmtree(root / "docs" / "adr")
    config = make_config(root, tmp_path / "state", embedding={"enabled": False})
    globs = config.retrieval.decision_globs
    assert "*adr/*" in globs
    request = RetrievalRequest(task=_TASK, workflow_kind=WorkflowKind.CODE, stage=StageHints(stage_id="code"))
    strategy = RetrievalStrategyConfig()
    with WorkspaceIndex.open(config) as index:
        await asyncio.to_thread(index.index)
        built = build_retrieval_agent(config, index=index)
        assert built.parts.index is not None and isinstance(built.parts.paths, IndexedPaths)
        counting = _Counting(built.parts.index)
        agent = RetrievalAgent(built.config, replace(built.parts, index=counting))

        before = await agent.retrieve(request, strategy)
        searched_before = list(counting.globs)

        (root / _ADR).parent.mkdir(parents=True)
        (root / _ADR).write_text(adr_text, encoding="utf-8")
        await asyncio.to_thread(index.index)
        counting.globs.clear()
        after = await agent.retrieve(request, strategy)
        searched_after = list(counting.globs)

    decisions = before.source(SourceName.DECISIONS)
    assert decisions is not None and decisions.candidates == 0
    assert searched_before and not set(globs) & set(searched_before)  # the task was searched, no decision glob
    # the new ADR matches "*adr/*" only: that glob is searched again, the others still are not
    assert set(globs) & set(searched_after) == {"*adr/*"}
    found = [c for c in after.candidates if c.source is SourceName.DECISIONS]
    assert found and all(_ADR.as_posix() in c.cite for c in found)


def test_the_answer_follows_the_manifest_and_an_unreadable_manifest_searches_every_glob(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "retrieval_shop", root)
    config = make_config(root, tmp_path / "state", embedding={"enabled": False})
    missing = IndexedPaths.in_state_dir(tmp_path / "nowhere")
    assert missing.may_match("*adr/*")  # no index yet: nothing is skipped
    with WorkspaceIndex.open(config) as index:
        index.index()
        paths = IndexedPaths.in_state_dir(config.state_path)
        assert paths.may_match("*adr/*") and paths.may_match("shop/*.py")
        assert not paths.may_match("*decisions/*") and not paths.may_match("*ADR-*")
        (root / "docs" / "decisions").mkdir()
        (root / "docs" / "decisions" / "0002-stock.md").write_text("# Stock\n\nCounted per order.\n", "utf-8")
        assert not paths.may_match("*decisions/*")  # not indexed yet
        index.index()
        assert paths.may_match("*decisions/*")
        shutil.rmtree(root / "docs" / "adr")
        index.index()
        assert not paths.may_match("*adr/*")
        paths.close()
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "manifest.sqlite3").write_text(json.dumps({"not": "sqlite"}), "utf-8")
    assert IndexedPaths.in_state_dir(broken).may_match("*adr/*")
