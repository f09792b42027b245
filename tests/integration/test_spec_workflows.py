"""The specification's two workflow files, unchanged, run end to end with scripted models on real git repos:
real pytest in the test stage, real ruff in lint_and_format, commits on the run branch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from daemon.cli.app import app
from daemon.config import AgentsConfig
from daemon.core.run_models import ProgressKind, RunRecord, RunStatus
from daemon.orchestration.llm_providers import ModelRegistry
from daemon.orchestration.resilience import ResilienceLayer
from daemon.orchestration.runtime import PipelineRuntime
from daemon.orchestration.state import ExecutionState
from daemon.orchestration.workflow_loader import WorkflowCatalog, builtin_workflow_dir
from daemon.vcs.worktrees import RunWorktrees
from tests.pipeline_support import WAIT, choose, replay_config, write_script

SPEC = Path(__file__).parents[1] / "fixtures" / "spec_workflows"
FEATURE = "feature_with_iterative_testing"
ARCHITECTURE = "architecture_discussion"
SHIPPED_FEATURE = "spec_feature_with_iterative_testing"
PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"
GIT = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"]

UGLY = "import os\ndef multiply( a,b ):\n  return a*b\n"
FORMATTED = "def multiply(a, b):\n    return a * b\n"
TEST = (
    "import pathlib\nimport sys\n\nsys.path.insert(0, str(pathlib.Path(__file__).parents[1] / 'src'))\n\n"
    "from calc import multiply\n\n\ndef test_multiply():\n    assert multiply(3, 4) == 12\n"
)
DONE: dict[str, Any] = {"status": "success", "summary": "done", "evidence": []}


@pytest.fixture
def ruff_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment's own ruff (a real formatter) is on PATH, as in a project's activated venv."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def git_project(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "calc.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    (root / "tests").mkdir()
    (root / "docs").mkdir()
    (root / "docs" / "architecture.md").write_text("# Architecture\n\nOne process, no cache.\n", encoding="utf-8")
    (root / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n", encoding="utf-8")
    subprocess.run([*GIT, "init", "-q"], cwd=root, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "init"], cwd=root, check=True)
    return root


def git_show(repo: Path, ref: str) -> str:
    return subprocess.run(["git", "show", ref], cwd=repo, check=True, capture_output=True, text=True).stdout


def spec_catalog() -> WorkflowCatalog:
    """The built-in workflows with the two specification files over those of the same names."""
    catalog = WorkflowCatalog.load([builtin_workflow_dir(), SPEC])
    assert catalog.problems == ()
    assert catalog.sources[FEATURE].startswith(str(SPEC))
    return catalog


async def run_scripted(
    tmp_path: Path, entries: list[dict[str, Any]], request: str
) -> tuple[Path, RunRecord, ExecutionState, list[str]]:
    repo = git_project(tmp_path / "repo")
    state_dir = tmp_path / "state"
    config = replay_config(write_script(tmp_path / "script.yaml", entries))
    models = ModelRegistry.from_config(config, env={}, layer=ResilienceLayer(config.resilience))
    async with PipelineRuntime.open(
        catalog=spec_catalog(),
        models=models,
        state_dir=state_dir,
        config=config,
        worktrees=RunWorktrees(repo, state_dir),
        agents_config=AgentsConfig(commands={"test": PYTEST}, command_timeout_seconds=120),
    ) as runtime:
        started = await runtime.start(request)
        record = await runtime.wait(started.run_id, wait_seconds=WAIT)
        state = await runtime.state(record.run_id)
        log = [e.summary for e in await runtime.decision_log(record.run_id)]
        events = await runtime.events(record.run_id)
    models.close()
    assert state is not None
    titles = [e.title or "" for e in events if e.event is ProgressKind.TOOL_CALL]
    return repo, record, state, [*log, *titles]


def feature_script(code: str, workflow: str = FEATURE, **decisions: str) -> list[dict[str, Any]]:
    return [
        {"role": "orchestrator", "answer": choose(workflow, **decisions)},
        {
            "role": "code_agent",
            "match": r"Stage: code_generation\b",
            "tool_calls": [{"name": "write_file", "args": {"path": "src/calc.py", "content": code}}],
        },
        {"role": "code_agent", "match": r"Stage: code_generation\b", "answer": {**DONE, "summary": "multiply"}},
        {
            "role": "test_agent",
            "match": r"Attempt: 1\b",
            "tool_calls": [
                {"name": "write_file", "args": {"path": "tests/test_multiply.py", "content": TEST}},
                {"name": "run_command", "args": {"name": "test"}},
            ],
        },
        {"role": "test_agent", "answer": {**DONE, "summary": "test written and green"}},
        {"role": "security_agent", "answer": {**DONE, "summary": "no secrets, no input handling"}},
        {"role": "code_agent", "match": r"Stage: lint_and_format\b", "answer": {**DONE, "summary": "nothing to add"}},
        {"role": "formatter_agent", "answer": {**DONE, "summary": "formatted"}},
    ]


@pytest.mark.parametrize("workflow", [FEATURE, SHIPPED_FEATURE], ids=["specification-file", "shipped"])
async def test_the_specifications_feature_workflow_runs_its_four_stages_with_real_pytest_and_ruff(
    tmp_path: Path, ruff_on_path: None, workflow: str
) -> None:
    entries = feature_script(UGLY, workflow, security_review="INCLUDE", lint_and_format="INCLUDE")
    repo, record, state, trail = await run_scripted(tmp_path, entries, "Implement a multiply feature in calc")

    assert record.status is RunStatus.SUCCEEDED, record.stop
    assert record.workflow == workflow
    assert [(r.source, r.target) for r in state.routes] == [
        ("code_generation", "test_generation_and_execution"),
        ("test_generation_and_execution", "security_review"),
        ("security_review", "lint_and_format"),
        ("lint_and_format", "done"),
    ]
    assert not any(r.failed for results in state.stage_results.values() for r in results)
    assert any(t.startswith("lint_and_format toolchain: python: ruff") for t in trail)
    assert "run format_ruff" in trail and "run lint_ruff" in trail and "run test" in trail
    changes = record.changes
    assert changes is not None
    assert git_show(repo, f"{changes.branch}:src/calc.py") == FORMATTED  # reformatted, unused import removed
    assert {f.path for f in changes.files} == {"src/calc.py", "tests/test_multiply.py"}
    assert (repo / "src" / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"  # the user's tree untouched


async def test_lint_and_format_with_an_unfixable_finding_fails_the_stage_with_ruffs_report(
    tmp_path: Path, ruff_on_path: None
) -> None:
    code = UGLY.replace("return a*b", "return a*b\ndef unused( x ):\n  return x+undefined_name")
    entries = feature_script(code, security_review="SKIP", lint_and_format="INCLUDE")
    repo, record, state, _ = await run_scripted(tmp_path, entries, "Implement a multiply feature in calc")

    lint = state.stage_results["lint_and_format"][-1]
    formatter = next(a for a in lint.agents if a.agent_id == "formatter_agent")
    assert lint.failed and formatter.failed
    assert "'lint_ruff' exited with code 1" in formatter.summary
    assert any("F821" in e and "undefined_name" in e for e in formatter.evidence)
    assert state.routes[-1].target == "done"  # the specification routes a lint failure to DONE
    changes = record.changes
    assert changes is not None
    branch_file = git_show(repo, f"{changes.branch}:src/calc.py")
    assert branch_file.startswith(FORMATTED) and "def unused(x):\n    return x + undefined_name\n" in branch_file
    assert "security_review" not in state.stage_results


async def test_a_red_test_in_the_shipped_copy_goes_back_to_code_generation_and_the_second_attempt_passes(
    tmp_path: Path, ruff_on_path: None
) -> None:
    def writes(content: str, attempt: int) -> dict[str, Any]:
        return {
            "role": "code_agent",
            "match": rf"Stage: code_generation\b(?s:.*)Attempt: {attempt}\b",
            "tool_calls": [{"name": "write_file", "args": {"path": "src/calc.py", "content": content}}],
        }

    entries: list[dict[str, Any]] = [
        {"role": "orchestrator", "answer": choose(SHIPPED_FEATURE, security_review="SKIP", lint_and_format="SKIP")},
        writes(FORMATTED.replace("a * b", "a + b"), 1),
        {"role": "code_agent", "match": r"Attempt: 1\b", "answer": {**DONE, "summary": "multiply"}},
        {**writes(FORMATTED, 2), "match": r"(?s)Attempt: 2\b.*assert 7 == 12"},  # the red run is in its context
        {"role": "code_agent", "match": r"Attempt: 2\b", "answer": {**DONE, "summary": "multiply fixed"}},
        {
            "role": "test_agent",
            "match": r"Attempt: 1\b",
            "tool_calls": [
                {"name": "write_file", "args": {"path": "tests/test_multiply.py", "content": TEST}},
                {"name": "run_command", "args": {"name": "test"}},
            ],
        },
        {"role": "test_agent", "answer": {**DONE, "summary": "ran the tests"}, "repeat": True},
    ]
    repo, record, state, _ = await run_scripted(tmp_path, entries, "Implement a multiply feature in calc")

    assert record.status is RunStatus.SUCCEEDED, record.stop
    assert [(r.source, r.target) for r in state.routes] == [
        ("code_generation", "test_generation_and_execution"),
        ("test_generation_and_execution", "adaptive_retrieval"),
        ("adaptive_retrieval", "code_generation"),
        ("code_generation", "test_generation_and_execution"),
        ("test_generation_and_execution", "done"),
    ]
    red, green = state.stage_results["test_generation_and_execution"]
    assert red.failed and "exited with code 1" in red.summary and not green.failed
    changes = record.changes
    assert changes is not None
    assert git_show(repo, f"{changes.branch}:src/calc.py") == FORMATTED


async def test_the_specification_file_as_written_retries_a_red_test_stage_then_aborts_at_used_up_code_generation(
    tmp_path: Path,
) -> None:
    entries = feature_script(FORMATTED.replace("a * b", "a + b"), security_review="SKIP", lint_and_format="SKIP")
    entries.append({"role": "test_agent", "answer": {**DONE, "summary": "ran the tests"}, "repeat": True})
    _, record, state, _ = await run_scripted(tmp_path, entries, "Implement a multiply feature in calc")

    assert record.status is RunStatus.ABORTED, record.stop
    assert [(r.source, r.target) for r in state.routes] == [
        ("code_generation", "test_generation_and_execution"),
        ("test_generation_and_execution", "adaptive_retrieval"),
        ("adaptive_retrieval", "test_generation_and_execution"),
        ("test_generation_and_execution", "adaptive_retrieval"),
        ("adaptive_retrieval", "test_generation_and_execution"),
        ("test_generation_and_execution", "abort"),
    ]
    assert "attempts[code_generation]=1 reached max_attempts=1" in state.routes[-1].condition
    assert all(r.failed for r in state.stage_results["test_generation_and_execution"])


async def test_the_specifications_architecture_workflow_analyses_then_records_the_decision(tmp_path: Path) -> None:
    record_text = "# 1. Cache\n\nDecision: no cache until a profile shows the need.\n"
    entries: list[dict[str, Any]] = [
        {"role": "orchestrator", "answer": choose(ARCHITECTURE, decision_documentation="INCLUDE")},
        {"role": "analysis_agent", "answer": {**DONE, "summary": "two options: no cache, or an LRU cache"}},
        {
            "role": "documentation_agent",
            "match": r"Attempt: 1\b",
            "tool_calls": [
                {"name": "write_file", "args": {"path": "docs/decisions/0001-cache.md", "content": record_text}}
            ],
        },
        {"role": "documentation_agent", "answer": {**DONE, "summary": "decision recorded"}},
    ]
    repo, record, state, trail = await run_scripted(tmp_path, entries, "Discuss the architecture of a cache")

    assert record.status is RunStatus.SUCCEEDED, record.stop
    assert record.workflow == ARCHITECTURE and record.plan is not None
    assert record.plan.workflow_type.value == "document"
    assert [(r.source, r.target) for r in state.routes] == [
        ("architectural_analysis", "decision_documentation"),
        ("decision_documentation", "done"),
    ]
    changes = record.changes
    assert changes is not None
    assert git_show(repo, f"{changes.branch}:docs/decisions/0001-cache.md") == record_text
    assert not any(t.startswith("lint_and_format toolchain") for t in trail)


@pytest.mark.parametrize(
    ("workflow", "expected"),
    [
        (
            FEATURE,
            [
                "plan: entry code_generation",
                "code_generation [code_agent; any_fails, max 1; budget 30000]",
                "success -> test_generation_and_execution, failure -> ABORT",
                "informational: retrieval_strategy_config.strategy_name = code_domain_ast_lsp",
                "mapped: stages[0].stage_id = 1: stage id 'code_generation'",
            ],
        ),
        (
            ARCHITECTURE,
            [
                "plan: entry architectural_analysis",
                "architectural_analysis [analysis_agent; any_fails, max 1; budget 15000]",
                "informational: retrieval_strategy_config.retrieval_hints.token_budget.planning = 20000",
                "mapped: metadata.workflow_type = text_analysis: document",
            ],
        ),
    ],
    ids=["feature", "architecture"],
)
def test_ided_run_dry_run_plans_the_specification_file_with_its_informational_fields(
    tmp_path: Path, isolated_home: Path, workflow: str, expected: list[str]
) -> None:
    repo = git_project(tmp_path / "ws")
    (repo / ".ided" / "workflows").mkdir(parents=True)
    for name in (FEATURE, ARCHITECTURE):
        (repo / ".ided" / "workflows" / f"{name}.yaml").write_bytes((SPEC / f"{name}.yaml").read_bytes())
    (repo / ".git" / "info" / "exclude").write_text(".ided/\n")
    script = write_script(tmp_path / "script.yaml", [{"role": "orchestrator", "answer": choose(workflow)}])
    settings = ["--set", f"pipeline.replay_script={script}", "--set", f"state_dir={tmp_path / 'state'}"]

    result = CliRunner().invoke(
        app,
        [*settings, "run", "--dry-run", "--workflow", workflow, "Implement a login feature", "-w", str(repo)],
        catch_exceptions=False,
    )

    assert result.exit_code == 0, result.stderr
    missing = [line for line in expected if line not in result.stderr]
    assert not missing, result.stderr
