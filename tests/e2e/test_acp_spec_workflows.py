"""``ided acp`` over real stdio: a dry run of the specification's own workflow file (its spelling, unchanged)
plans its stages and lists the fields ided mapped or only records, with the reason."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.e2e.acp_support import WAIT_S, env_for, fixture_repo, initialize, plan_statuses, prompt_text, spawn_ided_acp
from tests.pipeline_support import choose, write_script

pytestmark = pytest.mark.e2e

SPEC = Path(__file__).parents[1] / "fixtures" / "spec_workflows" / "architecture_discussion.yaml"


async def test_a_dry_run_of_the_specifications_file_shows_its_stages_and_its_informational_fields(
    tmp_path: Path,
) -> None:
    repo = fixture_repo(tmp_path)
    (repo / ".ided" / "workflows").mkdir(parents=True)
    (repo / ".ided" / "workflows" / SPEC.name).write_bytes(SPEC.read_bytes())
    orchestrator = {"role": "orchestrator", "answer": choose("architecture_discussion", decision_documentation="SKIP")}
    script = write_script(tmp_path / "script.yaml", [orchestrator])
    async with spawn_ided_acp(tmp_path, env_for(tmp_path, script)) as agent:
        await initialize(agent.conn)
        session = await agent.conn.new_session(cwd=str(repo), mcp_servers=[])
        sid = session.session_id
        reply = await asyncio.wait_for(
            agent.conn.prompt(session_id=sid, prompt=prompt_text("/dry-run discuss the architecture of calc")), WAIT_S
        )
        messages = agent.client.messages(sid)
        (plan,) = agent.client.plans(sid)

    assert reply.stop_reason == "end_turn"
    assert plan_statuses(plan) == [("architectural_analysis", "pending"), ("decision_documentation", "skipped")]
    assert "Written in the specification's spelling:" in messages
    assert "- retrieval_strategy_config.strategy_name = document_domain_discussion: informational: a label" in messages
    assert "- stages[0].stage_id = 1: mapped: stage id 'architectural_analysis'" in messages
