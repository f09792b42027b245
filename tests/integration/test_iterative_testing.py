"""feature_with_iterative_testing for real: a scripted coder writes a bug, the real tests fail, adaptive
retrieval runs, the second attempt passes; every routing decision and commit is on the run record."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from daemon.config import AgentsConfig
from daemon.core.run_models import DecisionKind, ProgressKind, RunStatus
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.resilience import ResilienceLayer
from daemon.orchestration.runtime import PipelineRuntime
from daemon.orchestration.workflow_loader import WorkflowCatalog, builtin_workflow_dir
from daemon.vcs.worktrees import RunWorktrees
from tests.pipeline_support import WAIT, builtin_catalog, choose, replay_config, write_script
from tests.vcs_support import make_repo

FEATURE = "feature_with_iterative_testing"
PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"

BUGGY = "def add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    return a + b\n"
FIXED = "def add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    return a * b\n"
TEST = (
    "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parents[1] / 'src'))\n"
    "from calc import multiply\n\n\ndef test_multiply():\n    assert multiply(3, 4) == 12\n"
)


def git_output(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def git_project(root: Path) -> Path:
    files = {
        "src/calc.py": "def add(a, b):\n    return a + b\n",
        "pytest.ini": "[pytest]\n",
        ".gitignore": "__pycache__/\n.pytest_cache/\n",
    }
    return make_repo(root, files)


def script_entries() -> list[dict[str, Any]]:
    done: dict[str, Any] = {"status": "success", "summary": "done", "evidence": []}
    return [
        {
            "role": "orchestrator",
            "answer": choose(FEATURE, requirements_analysis="SKIP", code_review="SKIP", documentation="SKIP"),
        },
        {
            "role": "coder",
            "match": r"Attempt: 1\b",
            "tool_calls": [{"name": "write_file", "args": {"path": "src/calc.py", "content": BUGGY}}],
        },
        {"role": "coder", "match": r"Attempt: 1\b", "answer": {**done, "summary": "multiply added"}},
        {
            "role": "test_writer",
            "match": r"Attempt: 1\b",
            "tool_calls": [{"name": "write_file", "args": {"path": "tests/test_multiply.py", "content": TEST}}],
        },
        {"role": "test_writer", "answer": {**done, "summary": "test written"}, "repeat": True},
        {
            "role": "test_runner",
            "match": r"Attempt: 1\b",
            "tool_calls": [{"name": "run_command", "args": {"name": "test"}}],
        },
        {"role": "test_runner", "match": r"Attempt: 1\b", "answer": {**done, "summary": "ran the tests"}},
        {
            "role": "coder",
            "match": r"(?s)Attempt: 2\b.*exited with code 1.*assert 7 == 12",
            "tool_calls": [
                {
                    "name": "replace_in_file",
                    "args": {
                        "path": "src/calc.py",
                        "old_text": "return a + b\n",
                        "new_text": "return a * b\n",
                        "replace_all": False,
                    },
                }
            ],
        },
        {
            "role": "coder",
            "match": r"old_text occurs 2 times",
            "tool_calls": [{"name": "write_file", "args": {"path": "src/calc.py", "content": FIXED}}],
        },
        {"role": "coder", "match": r"Attempt: 2\b", "answer": {**done, "summary": "multiply fixed"}},
        {"role": "test_runner", "match": r"Attempt: 2\b", "answer": {**done, "summary": "green"}},
    ]


NEVER_GREEN = f'{sys.executable} -c "raise SystemExit(3)"'


def catalog_with_commands(folder: Path, commands: dict[str, str]) -> WorkflowCatalog:
    """The built-in catalog, with feature_with_iterative_testing overridden by a copy that names ``commands``."""
    if not commands:
        return builtin_catalog()
    folder.mkdir()
    data = yaml.safe_load((builtin_workflow_dir() / f"{FEATURE}.yaml").read_text())
    (folder / f"{FEATURE}.yaml").write_text(yaml.safe_dump({**data, "commands": commands}))
    return WorkflowCatalog.load([builtin_workflow_dir(), folder])


@pytest.mark.parametrize(
    ("project", "workflow"),
    [
        ({"test": PYTEST}, {}),  # [agents.commands] of the project
        ({}, {"test": PYTEST}),  # the workflow file's commands
        ({"test": PYTEST}, {"test": NEVER_GREEN}),  # both: the project's wins
    ],
    ids=["project-commands", "workflow-commands", "project-wins"],
)
async def test_a_red_test_run_routes_through_adaptive_retrieval_and_the_second_attempt_passes(
    tmp_path: Path, project: dict[str, str], workflow: dict[str, str]
) -> None:
    repo = git_project(tmp_path / "repo")
    state_dir = tmp_path / "state"
    config = replay_config(write_script(tmp_path / "script.yaml", script_entries()))
    layer = ResilienceLayer(config.resilience)
    models = ModelRegistry.from_config(config, env={}, layer=layer)
    worktrees = RunWorktrees(repo, state_dir)
    async with PipelineRuntime.open(
        catalog=catalog_with_commands(tmp_path / "workflows", workflow),
        models=models,
        state_dir=state_dir,
        config=config,
        worktrees=worktrees,
        agents_config=AgentsConfig(commands=project, command_timeout_seconds=120),
    ) as runtime:
        subscription = runtime.subscribe()
        started = await runtime.start("Add a multiply function to calc")
        record = await runtime.wait(started.run_id, wait_seconds=WAIT)
        subscription.close()
        events = await runtime.events(record.run_id)
        log = await runtime.decision_log(record.run_id)
        state = await runtime.state(record.run_id)
    models.close()

    assert record.status is RunStatus.SUCCEEDED, record.stop
    assert state is not None
    assert [(r.source, r.target) for r in state.routes] == [
        ("implementation", "test_writing"),
        ("test_writing", "test_execution"),
        ("test_execution", "adaptive_retrieval"),
        ("adaptive_retrieval", "implementation"),
        ("implementation", "test_writing"),
        ("test_writing", "test_execution"),
        ("test_execution", "done"),
    ]
    red = state.stage_results["test_execution"][0]
    assert red.failed and "exited with code 1" in red.summary
    assert any("assert 7 == 12" in e for e in red.agents[0].evidence)
    assert not state.stage_results["test_execution"][1].failed
    assert state.enriched_context["implementation"][0].source == "failure"

    kinds = [e.kind for e in log]
    assert DecisionKind.ENRICHMENT in kinds and DecisionKind.RETRY in kinds and DecisionKind.REVIEW in kinds
    commits = [e.data["commit"] for e in log if e.kind is DecisionKind.COMMIT]
    assert len(commits) == 3  # coder 1, test writer 1, coder 2; the unchanged attempts commit nothing
    routed = [e.summary for e in log if e.kind in (DecisionKind.ROUTE, DecisionKind.RETRY)]
    assert any(s.startswith("test_execution -> adaptive_retrieval") for s in routed)
    assert any(s.startswith("adaptive_retrieval -> implementation") for s in routed)

    changes = record.changes
    assert changes is not None and changes.branch == f"ided/run/{record.run_id}"
    assert changes.commits == tuple(commits)
    assert {f.path: f.status for f in changes.files} == {"src/calc.py": "modified", "tests/test_multiply.py": "added"}
    assert (repo / "src" / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"  # the user's tree untouched
    assert not (repo / "tests" / "test_multiply.py").exists()
    message = git_output(repo, "log", "-1", "--format=%B", commits[-1])
    assert f"ided run {record.run_id}: implementation attempt 2 by coder" in message
    branch_file = git_output(repo, "show", f"{changes.branch}:src/calc.py")
    assert branch_file == FIXED

    kinds_seen = [e.event for e in events]
    assert kinds_seen[0] is ProgressKind.RUN_STARTED and kinds_seen[-1] is ProgressKind.RUN_FINISHED
    assert kinds_seen[-2] is ProgressKind.REVIEW
    plans = [e for e in events if e.event is ProgressKind.PLAN]
    assert [p.status for p in plans[0].plan] == ["pending", "pending", "pending", "skipped", "skipped", "skipped"]
    assert [(p.stage_id, p.status) for p in plans[-1].plan][:3] == [
        ("implementation", "completed"),
        ("test_writing", "completed"),
        ("test_execution", "completed"),
    ]
    statuses = [next(p.status for p in e.plan if p.stage_id == "test_execution") for e in plans]
    assert "failed" in statuses and statuses.index("failed") < len(statuses) - 1
    calls = [e for e in events if e.event is ProgressKind.TOOL_CALL]
    updates = {e.tool_call_id: e for e in events if e.event is ProgressKind.TOOL_CALL_UPDATE}
    assert {c.tool_kind for c in calls} == {"edit", "execute"}
    assert all(c.tool_call_id in updates for c in calls)
    runs = [updates[c.tool_call_id] for c in calls if c.tool_kind == "execute"]
    assert [u.tool_status for u in runs] == ["failed", "completed"]
    assert any(e.event is ProgressKind.THOUGHT and "adaptive_retrieval" in (e.text or "") for e in events)


async def test_feedback_runs_the_editing_stage_again_and_then_the_tests_after_it(tmp_path: Path) -> None:
    repo = git_project(tmp_path / "repo")
    state_dir = tmp_path / "state"
    done: dict[str, Any] = {"status": "success", "summary": "done", "evidence": []}
    entries = [
        {
            "role": "orchestrator",
            "answer": choose(FEATURE, requirements_analysis="SKIP", code_review="SKIP", documentation="SKIP"),
        },
        {
            "role": "coder",
            "match": r"Attempt: 1\b",
            "tool_calls": [{"name": "write_file", "args": {"path": "src/calc.py", "content": FIXED}}],
        },
        {"role": "coder", "match": r"Attempt: 1\b", "answer": {**done, "summary": "multiply added"}},
        {
            "role": "test_writer",
            "match": r"Attempt: 1\b",
            "tool_calls": [{"name": "write_file", "args": {"path": "tests/test_multiply.py", "content": TEST}}],
        },
        # the reviewer's feedback asks for a change that breaks the test; the test stage after it says so
        {
            "role": "test_writer",
            "match": "(?s)Feedback from the person reviewing.*sum",
            "tool_calls": [{"name": "write_file", "args": {"path": "src/calc.py", "content": BUGGY}}],
        },
        {"role": "test_writer", "match": "(?s)Feedback.*sum", "answer": {**done, "summary": "now a sum"}},
        {"role": "test_writer", "answer": {**done, "summary": "test written"}, "repeat": True},
        {"role": "test_runner", "answer": {**done, "summary": "ran them"}, "repeat": True},
    ]
    config = replay_config(write_script(tmp_path / "script.yaml", entries))
    models = ModelRegistry.from_config(config, env={}, layer=ResilienceLayer(config.resilience))
    async with PipelineRuntime.open(
        catalog=builtin_catalog(),
        models=models,
        state_dir=state_dir,
        config=config,
        worktrees=RunWorktrees(repo, state_dir),
        agents_config=AgentsConfig(commands={"test": PYTEST}, command_timeout_seconds=120),
    ) as runtime:
        first = await runtime.run("Add a multiply function to calc", wait_seconds=WAIT)
        await runtime.follow_up(first.run_id, "multiply should be the sum")
        after = await runtime.wait(first.run_id, wait_seconds=WAIT)
        events = await runtime.events(first.run_id)
        state = await runtime.state(first.run_id)
    models.close()

    assert first.status is RunStatus.SUCCEEDED, first.stop
    assert state is not None
    # the last editing stage that committed (test_writing), then test_execution again, with the real pytest
    follow_up = [e.node for e in events if e.event is ProgressKind.NODE_STARTED][-2:]
    assert follow_up == ["test_writing", "test_execution"]
    assert [r.attempt for r in state.stage_results["test_execution"]] == [1, 2]
    red = state.stage_results["test_execution"][-1]
    assert red.failed and red.feedback is None
    assert any("assert 7 == 12" in e for a in red.agents for e in a.evidence)
    assert after.status is RunStatus.FAILED and after.stop is not None
    assert "test_writing attempt 2 succeeded: now a sum" in after.stop.reason
    assert "test_execution attempt 2 failed" in after.stop.reason
