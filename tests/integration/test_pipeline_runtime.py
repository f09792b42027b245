"""The runtime contract: records, decision logs, progress events, cancel, planned runs, model trouble, retrieval."""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
import sys
from collections.abc import AsyncGenerator
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from pydantic import PrivateAttr

from daemon.config import CheckpointConfig, PipelineConfig, load_config
from daemon.core.run_models import (
    PROGRESS_MESSAGE_TYPE,
    DecisionKind,
    ExecutionProgress,
    ProgressKind,
    RunStatus,
    StopStatus,
)
from daemon.core.selection_models import SelectionPath
from daemon.errors import ErrorCode, PipelineError
from daemon.index.workspace_index import WorkspaceIndex
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.progress import Subscription
from daemon.orchestration.resilience import ResilienceLayer
from tests.pipeline_support import (
    FAST_RESILIENCE,
    WAIT,
    answer,
    choose,
    everyone_succeeds,
    open_runtime,
    outcomes,
    replay_config,
    trail,
    write_script,
)
from tests.scripted_models import AsyncScriptedChatModel

FEATURE = "feature_with_iterative_testing"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "workspaces"


class GatedChatModel(AsyncScriptedChatModel):
    """A scripted LLM that holds every call until the test releases it (to act while a node is in flight)."""

    _entered: asyncio.Event = PrivateAttr(default_factory=asyncio.Event)
    _release: asyncio.Event = PrivateAttr(default_factory=asyncio.Event)

    async def answer(self, messages: list[BaseMessage]) -> AIMessage:
        self._entered.set()
        await self._release.wait()
        content = json.dumps({"status": "success", "summary": "done"})
        return AIMessage(content=content)

    async def wait_entered(self) -> None:
        await asyncio.wait_for(self._entered.wait(), WAIT)

    def release(self) -> None:
        self._release.set()


def gated_registry(gated: GatedChatModel) -> ModelRegistry:
    orchestrator = GenericFakeChatModel(
        messages=iter(
            [json.dumps(choose(FEATURE, requirements_analysis="SKIP", code_review="SKIP", documentation="SKIP"))]
        )
    )
    return ModelRegistry.from_models({"orchestrator": orchestrator, "agents": gated}, ResilienceLayer(FAST_RESILIENCE))


async def test_cancel_mid_run_lets_the_node_in_flight_finish_and_starts_no_further_node(tmp_path: Path) -> None:
    gated = GatedChatModel()
    config = PipelineConfig(resilience=FAST_RESILIENCE)
    async with open_runtime(tmp_path / "state", config, models=gated_registry(gated)) as runtime:
        record = await runtime.start("Add a multiply function")
        await gated.wait_entered()
        requested = await runtime.cancel(record.run_id)
        assert requested.cancel_requested
        gated.release()
        final = await runtime.wait(record.run_id, wait_seconds=WAIT)
        events = await runtime.events(record.run_id)
        state = await runtime.state(record.run_id)
        log = await runtime.decision_log(record.run_id)
    assert final.status is RunStatus.CANCELLED
    assert final.stop is not None and final.stop.status is StopStatus.CANCELLED
    assert trail(events) == ["implementation"]
    assert outcomes(events) == [("implementation", "succeeded")]
    assert state is not None and list(state.stage_results) == ["implementation"]
    kinds = [e.kind for e in log]
    assert kinds.index(DecisionKind.CANCEL) < kinds.index(DecisionKind.STOP) == len(kinds) - 1


async def test_cancel_from_another_runtime_reaches_the_executing_one_through_the_run_store(tmp_path: Path) -> None:
    gated = GatedChatModel()
    config = PipelineConfig(resilience=FAST_RESILIENCE)
    async with open_runtime(tmp_path / "state", config, models=gated_registry(gated)) as runtime:
        record = await runtime.start("Add a multiply function")
        await gated.wait_entered()
        async with open_runtime(
            tmp_path / "state", config, models=ModelRegistry.none(ResilienceLayer(FAST_RESILIENCE))
        ) as other:
            seen = await other.cancel(record.run_id)
        assert seen.status is RunStatus.RUNNING and seen.cancel_requested
        gated.release()
        final = await runtime.wait(record.run_id, wait_seconds=WAIT)
    assert final.status is RunStatus.CANCELLED


async def test_progress_events_follow_the_langgraph_execution_progress_shape(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {
                "role": "orchestrator",
                "answer": choose(FEATURE, requirements_analysis="SKIP", code_review="SKIP", documentation="SKIP"),
            },
            answer("test_runner", "failure", "red", attempt=1),
            everyone_succeeds(),
        ],
    )
    async with open_runtime(tmp_path / "state", replay_config(script)) as runtime:
        subscription = runtime.subscribe()
        record = await runtime.start("Add a multiply function")
        live = [e async for e in _until_finished(subscription, record.run_id)]
        stored = await runtime.events(record.run_id)
    assert live == stored
    assert all(e.type == PROGRESS_MESSAGE_TYPE and e.run_id == record.run_id for e in stored)
    assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
    assert stored[0].event is ProgressKind.RUN_STARTED and stored[-1].event is ProgressKind.RUN_FINISHED
    assert stored[-1].stop is not None and stored[-1].stop.status is StopStatus.SUCCESS
    started = [e.node for e in stored if e.event is ProgressKind.NODE_STARTED]
    finished = [e.node for e in stored if e.event is ProgressKind.NODE_FINISHED]
    assert started == finished
    routing = [e for e in stored if e.event is ProgressKind.ROUTING_DECISION]
    assert len(routing) == len(started) - 1  # every node but the terminal routes
    assert all(e.routing is not None and e.routing.condition for e in routing)
    assert {e.planned_stages for e in stored} == {("implementation", "test_writing", "test_execution")}
    assert stored[-2].completed_stages == ("implementation", "test_writing", "test_execution")


async def _until_finished(subscription: Subscription, run_id: str) -> AsyncGenerator[ExecutionProgress]:
    async with asyncio.timeout(WAIT):
        async for event in subscription:
            yield event
            if event.event is ProgressKind.RUN_FINISHED and event.run_id == run_id:
                break
    subscription.close()


async def test_without_a_model_selection_and_plan_still_work_and_execution_says_what_is_missing(tmp_path: Path) -> None:
    config = PipelineConfig(resilience=FAST_RESILIENCE)
    async with open_runtime(
        tmp_path / "state", config, models=ModelRegistry.none(ResilienceLayer(FAST_RESILIENCE))
    ) as runtime:
        record = await runtime.prepare("Fix the crash when the config file is empty")
        assert record.status is RunStatus.PLANNED
        assert record.selection is not None and record.selection.path is SelectionPath.DETERMINISTIC_NO_MODEL
        assert record.plan is not None and record.plan.workflow == "bug_fix"
        assert runtime.missing_models(record.plan) == ["test_writer", "debugger", "coder", "test_runner", "reviewer"]
        with pytest.raises(PipelineError) as caught:
            await runtime.execute(record.run_id)
        log = await runtime.decision_log(record.run_id)
    assert caught.value.code is ErrorCode.MODEL_UNAVAILABLE
    assert "pipeline.models.default" in caught.value.message
    assert [e.kind for e in log][:1] == [DecisionKind.SELECTION]
    assert sum(e.kind is DecisionKind.STAGE_DECISION for e in log) == 5


async def test_a_planned_run_executes_on_resume_and_a_finished_one_cannot_be_resumed(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [{"role": "orchestrator", "answer": choose("bug_fix", code_review="SKIP")}, everyone_succeeds()],
    )
    async with open_runtime(tmp_path / "state", replay_config(script)) as runtime:
        planned = await runtime.prepare("Fix the crash on empty input")
        started = await runtime.resume(planned.run_id)
        assert started.status is RunStatus.RUNNING and started.resumed == 0
        final = await runtime.wait(planned.run_id, wait_seconds=WAIT)
        with pytest.raises(PipelineError, match="already ended"):
            await runtime.resume(planned.run_id)
    assert final.status is RunStatus.SUCCEEDED


async def test_cancelling_a_planned_run_ends_it_at_once_with_a_stop_decision(tmp_path: Path) -> None:
    config = PipelineConfig(resilience=FAST_RESILIENCE)
    async with open_runtime(
        tmp_path / "state", config, models=ModelRegistry.none(ResilienceLayer(FAST_RESILIENCE))
    ) as runtime:
        planned = await runtime.prepare("Refactor the scanner")
        cancelled = await runtime.cancel(planned.run_id)
        listed = await runtime.list_runs()
    assert cancelled.status is RunStatus.CANCELLED
    assert cancelled.stop is not None and "nothing was running" in cancelled.stop.reason
    assert [r.run_id for r in listed] == [planned.run_id]


async def test_an_unknown_run_id_is_a_run_not_found_error(tmp_path: Path) -> None:
    config = PipelineConfig(resilience=FAST_RESILIENCE)
    async with open_runtime(
        tmp_path / "state", config, models=ModelRegistry.none(ResilienceLayer(FAST_RESILIENCE))
    ) as runtime:
        with pytest.raises(PipelineError) as caught:
            await runtime.get("20000101-000000-abcdef")
    assert caught.value.code is ErrorCode.RUN_NOT_FOUND


async def test_an_agent_model_that_keeps_failing_fails_its_stage_and_the_run_aborts(tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"role": "orchestrator", "answer": choose("bug_fix", code_review="SKIP")},
            {"role": "test_writer", "answer": {"status": "success", "summary": "repro"}},
            {"role": "debugger", "error": "503 service unavailable", "repeat": True},
        ],
    )
    async with open_runtime(tmp_path / "state", replay_config(script)) as runtime:
        record = await runtime.run("Fix the crash on empty input", wait_seconds=WAIT)
        state = await runtime.state(record.run_id)
    assert record.status is RunStatus.ABORTED
    assert state is not None
    diagnosis = state.stage_results["diagnosis"]
    assert len(diagnosis) == 3
    assert diagnosis[0].agents[0].error is not None and "503 service unavailable" in diagnosis[0].agents[0].error


async def test_postgres_checkpoints_without_the_driver_fail_with_an_install_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "langgraph.checkpoint.postgres.aio", None)  # as if the package were absent
    config = PipelineConfig(
        resilience=FAST_RESILIENCE, checkpoint=CheckpointConfig(backend="postgres", postgres_url="postgresql://x/y")
    )
    with pytest.raises(PipelineError, match="langgraph-checkpoint-postgres") as caught:
        async with open_runtime(
            tmp_path / "state", config, models=ModelRegistry.none(ResilienceLayer(FAST_RESILIENCE))
        ):
            pass
    assert caught.value.code is ErrorCode.DRIVER_MISSING


async def test_adaptive_retrieval_puts_workspace_index_hits_into_the_retried_stage(tmp_path: Path) -> None:
    from daemon.service.pipeline.opening import WorkspaceRetriever
    from daemon.service.workspace.local import LocalWorkspace

    workspace = tmp_path / "ws"
    shutil.copytree(FIXTURES / "polyglot", workspace)
    config = load_config(
        workspace,
        env={"HOME": str(tmp_path / "home")},
        overrides={"state_dir": str(tmp_path / "index"), "embedding": {"enabled": False}},
    )
    with WorkspaceIndex.open(config) as ws:
        ws.index()
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"role": "orchestrator", "answer": choose("bug_fix", code_review="SKIP")},
            answer("test_runner", "failure", "circle area is wrong for radius 2", attempt=1),
            everyone_succeeds(),
        ],
    )
    async with LocalWorkspace.open_index(config) as workspace:
        retriever = WorkspaceRetriever(workspace)
        async with open_runtime(tmp_path / "state", replay_config(script), retriever=retriever) as runtime:
            record = await runtime.run("Fix the circle area computation", wait_seconds=WAIT)
            log = await runtime.decision_log(record.run_id)
            state = await runtime.state(record.run_id)
    enrichment = next(e for e in log if e.kind is DecisionKind.ENRICHMENT)
    paths = {s.get("path") for s in enrichment.data["snippets"]} - {None}
    assert "src/geometry.py" in paths, enrichment.summary
    assert state is not None
    fix_context = state.enriched_context["fix"]
    assert fix_context[0].source == "failure"
    assert any(s.path in paths for s in fix_context[1:])
    assert record.status is RunStatus.SUCCEEDED


class RendezvousChatModel(AsyncScriptedChatModel):
    """A scripted LLM that answers only once ``parties`` calls are in flight together (proves concurrency)."""

    parties: int
    _arrived: int = PrivateAttr(default=0)
    _all_here: asyncio.Event = PrivateAttr(default_factory=asyncio.Event)

    async def answer(self, messages: list[BaseMessage]) -> AIMessage:
        self._arrived += 1
        if self._arrived == self.parties:
            self._all_here.set()
        await asyncio.wait_for(self._all_here.wait(), 10)
        content = json.dumps({"status": "success", "summary": f"{self._arrived} together"})
        return AIMessage(content=content)


async def test_the_parallel_agents_of_a_stage_run_concurrently(tmp_path: Path) -> None:
    reviewers = RendezvousChatModel(parties=3)
    orchestrator = GenericFakeChatModel(
        messages=iter([json.dumps(choose("architecture_discussion", prior_art_research="SKIP"))])
    )
    others = GenericFakeChatModel(messages=itertools.repeat(json.dumps({"status": "success", "summary": "ok"})))
    models = {
        "orchestrator": orchestrator,
        "performance_reviewer": reviewers,
        "maintainability_reviewer": reviewers,
        "operations_reviewer": reviewers,
        "agents": others,
    }
    registry = ModelRegistry.from_models(models, ResilienceLayer(FAST_RESILIENCE))
    async with open_runtime(tmp_path / "state", PipelineConfig(resilience=FAST_RESILIENCE), models=registry) as runtime:
        record = await runtime.run("Which approach for caching?", wait_seconds=WAIT)
        state = await runtime.state(record.run_id)
    assert record.status is RunStatus.SUCCEEDED
    assert state is not None
    review = state.stage_results["trade_off_review"][0]
    assert [a.summary for a in review.agents] == ["3 together"] * 3
