"""Upfront mode: a run whose retriever is the retrieval agent starts its planned stages with context."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from daemon.orchestration.run_store import DecisionKind, RunStatus
from daemon.service.retrieval_sources import agent_retriever, build_retrieval_agent
from daemon.service.workspace_index import WorkspaceIndex
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
