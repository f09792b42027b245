"""Runs in code and ask mode: worktrees, the edit lock, non-git folders, dry runs, attachments, follow-ups."""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolCall
from pydantic import PrivateAttr

from daemon.config import PipelineConfig
from daemon.core.run_models import Attachment, DecisionKind, ProgressKind, RunStatus
from daemon.errors import EditLockHeld, ErrorCode, VcsError
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.resilience import ResilienceLayer
from daemon.orchestration.runtime import PipelineRuntime
from daemon.vcs.worktrees import RunWorktrees
from tests.pipeline_support import FAST_RESILIENCE, WAIT, builtin_catalog, choose, replay_config, write_script
from tests.scripted_models import AsyncScriptedChatModel

FEATURE = "feature_with_iterative_testing"
GIT = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"]
ORIGINAL = "def add(a, b):\n    return a + b\n"


def folder(root: Path, *, git: bool = True) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "calc.py").write_text(ORIGINAL, encoding="utf-8")
    if git:
        subprocess.run([*GIT, "init", "-q"], cwd=root, check=True)
        subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
        subprocess.run([*GIT, "commit", "-q", "-m", "init"], cwd=root, check=True)
    return root


def ok(summary: str = "done", **extra: Any) -> dict[str, Any]:
    return {"answer": {"status": "success", "summary": summary, "evidence": []}, **extra}


def coder_writes(content: str, **extra: Any) -> dict[str, Any]:
    return {
        "role": "coder",
        "tool_calls": [{"name": "write_file", "args": {"path": "src/calc.py", "content": content}}],
        **extra,
    }


ONLY_IMPLEMENTATION = {
    "role": "orchestrator",
    "answer": choose(FEATURE, requirements_analysis="SKIP", code_review="SKIP", documentation="SKIP"),
}


@asynccontextmanager
async def runtime_for(tmp_path: Path, repo: Path, entries: list[dict[str, Any]]) -> AsyncGenerator[PipelineRuntime]:
    config = replay_config(write_script(tmp_path / "script.yaml", entries))
    models = ModelRegistry.from_config(config, env={}, layer=ResilienceLayer(config.resilience))
    async with PipelineRuntime.open(
        catalog=builtin_catalog(),
        models=models,
        state_dir=tmp_path / "state",
        config=config,
        worktrees=RunWorktrees(repo, tmp_path / "state"),
    ) as runtime:
        yield runtime
    models.close()


def rest_succeeds() -> dict[str, Any]:
    return {"role": "*", **ok("fine"), "repeat": True}


async def test_ask_mode_reads_the_workspace_offers_no_write_tool_and_makes_no_branch(tmp_path: Path) -> None:
    repo = folder(tmp_path / "repo")
    entries = [
        ONLY_IMPLEMENTATION,
        {"role": "coder", "tool_calls": [{"name": "read_file", "args": {"path": "src/calc.py"}}]},
        coder_writes("broken"),
        {"role": "coder", "match": "no tool named 'write_file'", **ok("read only, as asked")},
        rest_succeeds(),
    ]
    async with runtime_for(tmp_path, repo, entries) as runtime:
        record = await runtime.run("Add a multiply function", mode="ask", wait_seconds=WAIT)
        state = await runtime.state(record.run_id)
        events = await runtime.events(record.run_id)
    assert record.mode == "ask" and record.changes is None
    assert state is not None
    assert state.stage_results["implementation"][0].agents[0].summary == "read only, as asked"
    assert (repo / "src" / "calc.py").read_text() == ORIGINAL
    reads = [e for e in events if e.event is ProgressKind.TOOL_CALL_UPDATE and e.title == "read_file src/calc.py"]
    assert reads and "return a + b" in (reads[0].output or "")
    assert not any(e.event is ProgressKind.REVIEW for e in events)


async def test_a_code_run_on_a_folder_that_is_not_a_repository_fails_clearly_and_ask_mode_still_works(
    tmp_path: Path,
) -> None:
    plain = folder(tmp_path / "plain", git=False)
    async with runtime_for(tmp_path, plain, [ONLY_IMPLEMENTATION, ONLY_IMPLEMENTATION, rest_succeeds()]) as runtime:
        with pytest.raises(VcsError) as caught:
            await runtime.start("Add a multiply function")
        failed = (await runtime.list_runs())[0]
        asked = await runtime.run("Add a multiply function", mode="ask", wait_seconds=WAIT)
    assert caught.value.code is ErrorCode.NOT_A_REPOSITORY
    assert "not a git repository" in caught.value.message and "Read-only runs still work" in caught.value.message
    assert failed.status is RunStatus.FAILED and failed.error is not None
    assert asked.status is RunStatus.SUCCEEDED


async def test_a_second_editing_run_while_one_holds_the_edit_lock_is_refused_and_records_nothing(
    tmp_path: Path,
) -> None:
    repo = folder(tmp_path / "repo")
    worktrees = RunWorktrees(repo, tmp_path / "state")
    async with runtime_for(tmp_path, repo, [ONLY_IMPLEMENTATION, rest_succeeds()]) as runtime:
        with worktrees.edit_lock("20990101-000000-abcdef"), pytest.raises(EditLockHeld) as caught:
            await runtime.start("Add a multiply function")
        assert await runtime.list_runs() == []
    assert caught.value.code is ErrorCode.EDIT_LOCK_HELD
    assert "20990101-000000-abcdef" in caught.value.message


async def test_a_dry_run_emits_the_plan_and_the_reasoning_and_opens_no_worktree(tmp_path: Path) -> None:
    repo = folder(tmp_path / "repo")
    async with runtime_for(tmp_path, repo, [ONLY_IMPLEMENTATION]) as runtime:
        record = await runtime.start("Add a multiply function", dry_run=True)
        events = await runtime.events(record.run_id)
    assert record.status is RunStatus.PLANNED and record.changes is None
    assert events[0].event is ProgressKind.PLAN
    assert [(p.stage_id, p.status) for p in events[0].plan] == [
        ("implementation", "pending"),
        ("test_writing", "pending"),
        ("test_execution", "pending"),
        ("requirements_analysis", "skipped"),
        ("code_review", "skipped"),
        ("documentation", "skipped"),
    ]
    thoughts = [e.text or "" for e in events if e.event is ProgressKind.THOUGHT]
    assert thoughts[0].startswith(f"Workflow {FEATURE}") and any("code_review: skip" in t for t in thoughts)
    assert not (tmp_path / "state" / "worktrees").exists()


async def test_feedback_runs_the_last_editing_stage_that_committed_again_on_the_same_branch_and_asks_for_review_again(
    tmp_path: Path,
) -> None:
    repo = folder(tmp_path / "repo")
    entries = [
        ONLY_IMPLEMENTATION,
        coder_writes(ORIGINAL + "\n\ndef multiply(a, b):\n    return a * b\n", match=r"Attempt: 1\b"),
        {"role": "coder", "match": r"Attempt: 1\b", **ok("multiply added")},
        coder_writes(
            ORIGINAL + '\n\ndef multiply(a, b):\n    """The product."""\n    return a * b\n',
            match=r"(?s)Feedback from the person reviewing.*add a docstring",
        ),
        {"role": "coder", "match": "add a docstring", **ok("docstring added")},
        rest_succeeds(),
    ]
    attachment = Attachment(kind="selection", path="src/calc.py", text="def add(a, b):", start_line=1, end_line=1)
    async with runtime_for(tmp_path, repo, entries) as runtime:
        started = await runtime.start("Add a multiply function", attachments=[attachment])
        first = await runtime.wait(started.run_id, wait_seconds=WAIT)
        subscription = runtime.subscribe(first.run_id)
        await runtime.follow_up(first.run_id, "please add a docstring")
        second = await runtime.wait(first.run_id, wait_seconds=WAIT)
        live = [e async for e in subscription]
        log = await runtime.decision_log(first.run_id)
        with pytest.raises(Exception, match="feedback is empty"):
            await runtime.follow_up(first.run_id, "  ")
    assert first.status is RunStatus.SUCCEEDED and first.attachments == (attachment,)
    assert first.changes is not None and len(first.changes.commits) == 1
    assert second.status is RunStatus.SUCCEEDED and second.follow_ups == 1
    assert second.changes is not None and second.changes.branch == first.changes.branch
    assert second.changes.commits[0] == first.changes.commits[0] and len(second.changes.commits) == 2
    assert second.stop is not None and "implementation attempt 2 succeeded" in second.stop.reason
    assert [e.event for e in live][-2:] == [ProgressKind.REVIEW, ProgressKind.RUN_FINISHED]
    assert any(e.event is ProgressKind.NODE_STARTED and e.node == "implementation" and e.attempt == 2 for e in live)
    kinds = [e.kind for e in log]
    assert kinds.count(DecisionKind.REVIEW) == 2 and DecisionKind.FOLLOW_UP in kinds
    assert (repo / "src" / "calc.py").read_text() == ORIGINAL


async def test_attachments_reach_the_agents_prompt(tmp_path: Path) -> None:
    repo = folder(tmp_path / "repo")
    entries = [
        ONLY_IMPLEMENTATION,
        {"role": "coder", "match": r"(?s)attached by the user: notes.md.*MAGIC-WORD", **ok("saw the note")},
        rest_succeeds(),
    ]
    note = Attachment(kind="file", path="notes.md", text="MAGIC-WORD")
    async with runtime_for(tmp_path, repo, entries) as runtime:
        started = await runtime.start("Add a multiply function", attachments=[note])
        record = await runtime.wait(started.run_id, wait_seconds=WAIT)
        state = await runtime.state(record.run_id)
    assert state is not None
    assert state.stage_results["implementation"][0].agents[0].summary == "saw the note"


class GatedToolModel(AsyncScriptedChatModel):
    """A scripted coder that writes a file, then holds its answer until the test releases it."""

    _calls: int = PrivateAttr(default=0)
    _entered: asyncio.Event = PrivateAttr(default_factory=asyncio.Event)
    _release: asyncio.Event = PrivateAttr(default_factory=asyncio.Event)

    async def answer(self, messages: list[BaseMessage]) -> AIMessage:
        self._calls += 1
        if self._calls == 1:
            call = ToolCall(
                name="write_file", args={"path": "src/new.py", "content": "X = 1\n"}, id="c1", type="tool_call"
            )
            return AIMessage(content="", tool_calls=[call])
        self._entered.set()
        await self._release.wait()
        content = json.dumps({"status": "success", "summary": "wrote new.py"})
        return AIMessage(content=content)


async def test_cancelling_an_editing_run_keeps_its_branch_with_the_attempt_in_flight_and_frees_the_lock(
    tmp_path: Path,
) -> None:
    repo = folder(tmp_path / "repo")
    gated = GatedToolModel()
    orchestrator = GenericFakeChatModel(
        messages=iter(
            [json.dumps(choose(FEATURE, requirements_analysis="SKIP", code_review="SKIP", documentation="SKIP"))]
        )
    )
    layer = ResilienceLayer(FAST_RESILIENCE)
    models = ModelRegistry.from_models({"orchestrator": orchestrator, "agents": gated}, layer)
    worktrees = RunWorktrees(repo, tmp_path / "state")
    async with PipelineRuntime.open(
        catalog=builtin_catalog(),
        models=models,
        state_dir=tmp_path / "state",
        config=PipelineConfig(resilience=FAST_RESILIENCE),
        worktrees=worktrees,
    ) as runtime:
        record = await runtime.start("Add a multiply function")
        await asyncio.wait_for(gated._entered.wait(), WAIT)
        assert worktrees.registry.is_locked()
        await runtime.cancel(record.run_id)
        gated._release.set()
        final = await runtime.wait(record.run_id, wait_seconds=WAIT)
    assert final.status is RunStatus.CANCELLED
    assert final.changes is not None and len(final.changes.commits) == 1
    assert [f.path for f in final.changes.files] == ["src/new.py"]
    assert not worktrees.registry.is_locked()
    assert worktrees.get(record.run_id).review == "open"
    assert not (repo / "src" / "new.py").exists()


async def test_an_interrupted_editing_run_resumes_in_its_worktree_and_commits_on_the_same_branch(
    tmp_path: Path,
) -> None:
    repo = folder(tmp_path / "repo")
    state_dir = tmp_path / "state"
    worktrees = RunWorktrees(repo, state_dir)
    choice = json.dumps(choose(FEATURE, requirements_analysis="SKIP", code_review="SKIP", documentation="SKIP"))
    gated = GatedToolModel()
    first_models = ModelRegistry.from_models(
        {"orchestrator": GenericFakeChatModel(messages=iter([choice])), "agents": gated},
        ResilienceLayer(FAST_RESILIENCE),
    )
    config = PipelineConfig(resilience=FAST_RESILIENCE)
    async with PipelineRuntime.open(
        catalog=builtin_catalog(), models=first_models, state_dir=state_dir, config=config, worktrees=worktrees
    ) as runtime:
        record = await runtime.start("Add a multiply function")
        await asyncio.wait_for(gated._entered.wait(), WAIT)
    interrupted = record.run_id
    assert not worktrees.registry.is_locked()
    done = json.dumps({"status": "success", "summary": "done"})
    second_models = ModelRegistry.from_models(
        {"default": GenericFakeChatModel(messages=itertools.repeat(done))}, ResilienceLayer(FAST_RESILIENCE)
    )
    async with PipelineRuntime.open(
        catalog=builtin_catalog(), models=second_models, state_dir=state_dir, config=config, worktrees=worktrees
    ) as runtime:
        assert (await runtime.get(interrupted)).status is RunStatus.INTERRUPTED
        await runtime.resume(interrupted)
        final = await runtime.wait(interrupted, wait_seconds=WAIT)
    assert final.status is RunStatus.SUCCEEDED
    assert final.changes is not None and final.changes.branch == f"ided/run/{interrupted}"
    assert [f.path for f in final.changes.files] == ["src/new.py"] and len(final.changes.commits) == 1
    assert not worktrees.registry.is_locked()
