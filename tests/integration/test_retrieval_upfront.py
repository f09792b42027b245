"""Upfront mode: a run whose retriever is the retrieval agent starts its planned stages with context; the
stages' retrievals run concurrently, share their searches and one time budget, and give what stage after
stage gives."""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import replace
from pathlib import Path

from daemon.core.models import SearchFilters, SearchResult
from daemon.core.run_models import DecisionKind, RunStatus
from daemon.core.workflow_schema import RetrievalStrategyConfig
from daemon.index.workspace_index import WorkspaceIndex
from daemon.retrieval.agent import RetrievalAgent
from daemon.retrieval.models import RetrievalRequest, RetrievalResult, SourceName, SourceState, StageHints, WorkflowKind
from daemon.retrieval.ports import IndexSearch
from daemon.service.pipeline.retrieval_sources import agent_retriever, build_retrieval_agent
from tests.integration.conftest import FIXTURES, make_config
from tests.pipeline_support import choose, everyone_succeeds, open_runtime, replay_config, write_script


async def test_every_planned_stage_gets_upfront_context_logged_before_its_first_attempt(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "retrieval_shop", root)
    config = make_config(root, tmp_path / "state")
    script = write_script(
        tmp_path / "script.yaml",
        [{"role": "orchestrator", "answer": choose("bug_fix")}, everyone_succeeds()],
    )
    with WorkspaceIndex.open(config) as index:
        await asyncio.to_thread(index.index)
        retriever = agent_retriever(build_retrieval_agent(config, index=index))
        async with open_runtime(tmp_path / "pipeline", replay_config(script), retriever=retriever) as runtime:
            record = await runtime.run(
                "Fix the rounding of apply_discount so that discounts round to whole cents",
                workflow="bug_fix",
                wait_seconds=120,
            )
            decisions = await runtime.decision_log(record.run_id)
            state = await runtime.state(record.run_id)

    assert record.status is RunStatus.SUCCEEDED
    upfront = [d for d in decisions if d.kind is DecisionKind.ENRICHMENT and d.data.get("mode") == "upfront"]
    assert len(upfront) == 1
    pieces: dict[str, int] = upfront[0].data["pieces"]
    assert record.plan is not None
    planned = {s.stage_id for s in record.plan.stages}
    assert set(pieces) <= planned and pieces
    assert state is not None
    fix_results = state.stage_results["fix"]
    assert fix_results[0].context_snippets == pieces["fix"] > 0
    paths = {s.path for s in state.enriched_context["fix"]}
    assert any(p and p.endswith(".py") for p in paths)


class _Counting:
    """The real index port, counting the searches that reach it."""

    def __init__(self, inner: IndexSearch) -> None:
        self.inner = inner
        self.calls = 0
        self.queries: list[tuple[str, str]] = []
        """(query, filters) of each search."""

    async def search(self, query: str, *, k: int, filters: SearchFilters | None) -> SearchResult:
        self.calls += 1
        self.queries.append((query, filters.model_dump_json() if filters is not None else ""))
        return await self.inner.search(query, k=k, filters=filters)


_STAGES = [
    StageHints(stage_id="code", focus_on=("existing patterns",), token_budget=3000),
    StageHints(stage_id="tests", focus_on=("existing test functions",), token_budget=3000),
    StageHints(stage_id="review", focus_on=("input handling",), token_budget=2000),
    StageHints(stage_id="docs", focus_on=("style guides",), avoid=("test code",), token_budget=1500),
]
_TASK = "Fix the rounding of apply_discount so that discounts round to whole cents"


async def test_concurrent_upfront_gives_every_stage_what_stage_after_stage_gives_with_fewer_searches(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "retrieval_shop", root)
    config = make_config(root, tmp_path / "state")
    with WorkspaceIndex.open(config) as index:
        await asyncio.to_thread(index.index)
        await asyncio.to_thread(index.embed)
        agent = build_retrieval_agent(config, index=index)
        assert agent.parts.index is not None
        counting = _Counting(agent.parts.index)
        # each focus hint its own search, as stage after stage asks it (focus views: the test below)
        searching = agent.config.model_copy(update={"focus_pool": 0})
        agent = RetrievalAgent(searching, replace(agent.parts, index=counting))
        strategy = RetrievalStrategyConfig()
        before = await agent.upfront(_TASK, WorkflowKind.CODE, strategy, _STAGES, sequential=True)
        sequential_calls, counting.calls = counting.calls, 0
        after = await agent.upfront(_TASK, WorkflowKind.CODE, strategy, _STAGES)

    assert list(after) == [s.stage_id for s in _STAGES]
    for stage in _STAGES:
        old, new = before[stage.stage_id], after[stage.stage_id]
        assert [(p.id, p.text, p.outline) for p in new.context] == [(p.id, p.text, p.outline) for p in old.context]
        assert [(s.source, s.state, s.candidates) for s in new.sources] == [
            (s.source, s.state, s.candidates) for s in old.sources
        ]
        assert any(p.attribution.symbol == "apply_discount" for p in new.context)
    # the task, its identifiers and the decision documents are searched once for all four stages
    assert 0 < counting.calls < sequential_calls


async def test_focus_hints_re_rank_the_tasks_hits_so_only_the_tasks_own_questions_reach_the_index(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "retrieval_shop", root)
    config = make_config(root, tmp_path / "state")
    with WorkspaceIndex.open(config) as index:
        await asyncio.to_thread(index.index)
        await asyncio.to_thread(index.embed)
        built = build_retrieval_agent(config, index=index)
        assert built.parts.index is not None and built.config.focus_pool > built.config.k_per_query
        counting = _Counting(built.parts.index)
        strategy = RetrievalStrategyConfig()
        runs: dict[int, tuple[dict[str, RetrievalResult], list[tuple[str, str]]]] = {}
        for pool in (0, built.config.focus_pool):
            agent = RetrievalAgent(
                built.config.model_copy(update={"focus_pool": pool}), replace(built.parts, index=counting)
            )
            counting.calls, counting.queries = 0, []
            runs[pool] = (await agent.upfront(_TASK, WorkflowKind.CODE, strategy, _STAGES), list(counting.queries))

    (searched, asked_searching), (viewed, asked_viewing) = runs.values()
    hints = [h for s in _STAGES for h in s.focus_on]
    assert all(any(q.startswith(h) for q, _ in asked_searching) for h in hints)
    assert not any(q.startswith(h) for q, _ in asked_viewing for h in hints)  # no hint is searched
    assert len(asked_viewing) == len(set(asked_viewing)) < len(asked_searching)
    for stage in _STAGES:
        result = viewed[stage.stage_id]
        assert any(p.attribution.symbol == "apply_discount" for p in result.context)
        code = result.source(SourceName.CODE)
        old = searched[stage.stage_id].source(SourceName.CODE)
        assert code is not None and old is not None and code.state is old.state is SourceState.OK
        # the hint's query is still planned and logged, and its candidates are there, from the task's hits
        focus = [q for q in result.queries if q.focus is not None and q.source is SourceName.CODE]
        assert [q.focus for q in focus] == list(stage.focus_on)
        assert {c.query for c in result.candidates if c.source is SourceName.CODE} >= {q.text for q in focus}


async def test_a_spent_upfront_budget_leaves_the_sources_unavailable_without_tripping_their_breakers(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURES / "retrieval_shop", root)
    config = make_config(root, tmp_path / "state", embedding={"enabled": False})
    tight = config.model_copy(
        update={"retrieval": config.retrieval.model_copy(update={"upfront_budget_seconds": 1e-9})}
    )
    with WorkspaceIndex.open(config) as index:
        await asyncio.to_thread(index.index)
        agent = build_retrieval_agent(tight, index=index)
        strategy = RetrievalStrategyConfig()
        spent = [
            await agent.upfront(_TASK, WorkflowKind.CODE, strategy, _STAGES[:2])
            for _ in range(tight.retrieval.breaker_failure_threshold + 1)
        ]
        later = await agent.retrieve(
            RetrievalRequest(task=_TASK, workflow_kind=WorkflowKind.CODE, stage=_STAGES[0]), strategy
        )

    code = spent[-1]["code"].source(SourceName.CODE)
    assert code is not None and code.state is SourceState.UNAVAILABLE
    assert "the shared upfront budget ran out" in (code.reason or "")
    again = later.source(SourceName.CODE)
    assert again is not None and again.state is SourceState.OK  # the breaker did not count the spent budget
    assert any(p.attribution.symbol == "apply_discount" for p in later.context)
