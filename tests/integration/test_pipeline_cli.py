"""The pipeline's command line: ided run / runs / resume / cancel / workflows, in process with typer's runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from daemon.cli.app import app
from daemon.core.run_models import ExecutionProgress, ProgressKind, RunRecord, RunStatus
from daemon.trust import TrustStore
from tests.pipeline_support import answer, choose, everyone_succeeds, write_script
from tests.vcs_support import make_repo

runner = CliRunner()


@pytest.fixture
def workspace(tmp_path: Path, isolated_home: Path) -> Path:
    """A git repository: code-mode runs whose plan edits need one (elsewhere they fail, not_a_repository)."""
    root = make_repo(
        tmp_path / "ws",
        {".ided.toml": f'state_dir = "{tmp_path / "state"}"\n', "calc.py": "def add(a, b):\n    return a + b\n"},
    )
    TrustStore.default().add(root)  # your own project: its .ided.toml chooses the state dir
    return root


def ided(workspace: Path, *args: str, script: Path | None = None) -> Result:
    settings = ["--set", f"pipeline.replay_script={script}"] if script else []
    settings += ["--set", "pipeline.resilience.cache=false"]
    return runner.invoke(app, [*settings, *args], catch_exceptions=False, env={"PWD": str(workspace)})


def test_workflows_list_shows_every_shipped_workflow(workspace: Path) -> None:
    result = ided(workspace, "workflows", "list", "-w", str(workspace))
    assert result.exit_code == 0
    for name in ("feature_with_iterative_testing", "architecture_discussion", "bug_fix", "security_audit"):
        assert name in result.stdout


def test_workflows_show_mermaid_prints_the_compiled_graph(workspace: Path) -> None:
    result = ided(workspace, "workflows", "show", "architecture_discussion", "--mermaid", "-w", str(workspace))
    assert result.exit_code == 0
    assert result.stdout.startswith("---") and "graph TD;" in result.stdout
    assert "trade_off_review -. &nbsp;retry&nbsp; .-> adaptive_retrieval;" in result.stdout


def test_workflows_validate_passes_the_shipped_files_and_reports_a_bad_workspace_file(workspace: Path) -> None:
    ok = ided(workspace, "workflows", "validate", "-w", str(workspace))
    assert ok.exit_code == 0 and "9 workflow file(s) valid" in ok.stderr
    own = workspace / ".ided" / "workflows"
    own.mkdir(parents=True)
    bad = own / "mine.yaml"
    bad.write_text(
        (Path("workflows") / "bug_fix.yaml")
        .read_text()
        .replace("next_stage_on_success: fix", "next_stage_on_success: fixx")
    )
    failed = ided(workspace, "workflows", "validate", "-w", str(workspace))
    assert failed.exit_code == 1
    assert "stage 'diagnosis': routing.next_stage_on_success 'fixx' is not a stage id" in failed.stderr
    single = ided(workspace, "workflows", "validate", str(bad))
    assert single.exit_code == 1 and "did you mean 'fix'" in single.stderr


def test_run_without_a_model_shows_selection_and_plan_and_how_to_configure_one(workspace: Path) -> None:
    result = ided(workspace, "run", "Fix the crash when the config is empty", "-w", str(workspace), "--json")
    assert result.exit_code == 3
    assert "workflow bug_fix  (selected by: deterministic_no_model)" in result.stderr
    assert "regression_testing [test_runner; any_fails, max 3; budget 4000]" in result.stderr
    assert "[pipeline.models.default]" in result.stderr
    record = RunRecord.model_validate_json(result.stdout)
    assert record.status is RunStatus.PLANNED
    listed = ided(workspace, "runs", "-w", str(workspace), "--json")
    assert [r["run_id"] for r in json.loads(listed.stdout)] == [record.run_id]
    cancelled = ided(workspace, "cancel", record.run_id, "-w", str(workspace))
    assert cancelled.exit_code == 0 and "cancelled" in cancelled.stderr


def test_dry_run_shows_the_graph_and_executes_nothing(workspace: Path, tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [{"role": "orchestrator", "answer": choose("refactor", code_review="INCLUDE", documentation="SKIP")}],
    )
    result = ided(workspace, "run", "Split the scanner", "--dry-run", "-w", str(workspace), script=script)
    assert result.exit_code == 0
    assert "selected by: llm" in result.stderr
    assert "refactoring -. &nbsp;retry&nbsp; .-> adaptive_retrieval;" in result.stderr
    assert "run " in result.stderr and "planned" in result.stderr


def test_run_streams_progress_events_as_json_lines_and_runs_show_has_the_decision_log(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"role": "orchestrator", "answer": choose("bug_fix", code_review="SKIP")},
            answer("test_runner", "failure", "still failing", attempt=1),
            everyone_succeeds(),
        ],
    )
    result = ided(workspace, "run", "Fix the crash", "--events", "-w", str(workspace), script=script)
    assert result.exit_code == 0, result.stderr
    events = [ExecutionProgress.model_validate_json(line) for line in result.stdout.splitlines()]
    assert events[0].event is ProgressKind.RUN_STARTED and events[-1].event is ProgressKind.RUN_FINISHED
    assert events[-1].status == "succeeded"
    run_id = events[0].run_id
    shown = ided(workspace, "runs", "show", run_id, "-w", str(workspace), "--json")
    payload = json.loads(shown.stdout)
    kinds = [d["kind"] for d in payload["decisions"]]
    assert kinds[0] == "selection" and kinds[-1] == "stop"
    assert "retry" in kinds and "enrichment" in kinds
    human = ided(workspace, "runs", "show", run_id, "-w", str(workspace))
    assert "decision log:" in human.stdout and "regression_testing -> adaptive_retrieval" in human.stdout


def test_a_failed_run_exits_non_zero_and_resume_refuses_a_finished_run(workspace: Path, tmp_path: Path) -> None:
    script = write_script(
        tmp_path / "s.yaml",
        [
            {"role": "orchestrator", "answer": choose("bug_fix", code_review="SKIP")},
            {"role": "debugger", "answer": {"status": "failure", "summary": "no idea"}, "repeat": True},
            everyone_succeeds(),
        ],
    )
    result = ided(workspace, "run", "Fix the crash", "--json", "-w", str(workspace), script=script)
    assert result.exit_code == 1
    record = RunRecord.model_validate_json(result.stdout)
    assert record.status is RunStatus.ABORTED
    again = ided(workspace, "resume", record.run_id, "-w", str(workspace), script=script)
    assert again.exit_code == 1 and "already ended (aborted)" in again.stderr
    missing = ided(workspace, "runs", "show", "20000101-000000-000000", "-w", str(workspace))
    assert missing.exit_code == 1 and "no run with id" in missing.stderr


def test_a_dry_run_adds_no_security_review_for_a_file_whose_name_only_contains_auth(workspace: Path) -> None:
    (workspace / "AUTHORS.rst").write_text("Ada\n")
    (workspace / "tokenizer.py").write_text("x = 1\n")
    args = ("run", "Add a multiply function", "--dry-run", "--workflow", "spec_feature_with_iterative_testing")
    plain = ided(workspace, *args, "-w", str(workspace))
    (workspace / "app").mkdir()
    (workspace / "app" / "oauth_client.py").write_text("x = 1\n")
    secure = ided(workspace, *args, "-w", str(workspace))
    assert plain.exit_code == secure.exit_code == 0
    assert "SKIP    security_review" in plain.stderr and "AUTHORS.rst" not in plain.stderr
    assert "INCLUDE security_review" in secure.stderr and "app/oauth_client.py" in secure.stderr, secure.stderr
