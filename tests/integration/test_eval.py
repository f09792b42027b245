"""``ided eval``: the golden harness passes on its baseline and fails when a change lowers recall."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from daemon.cli.app import app
from daemon.retrieval.harness import TaskArtifact, artifact_schema_hash

ROOT = Path(__file__).parents[2]
GOLDEN = {
    "version": 1,
    "workspaces": str(ROOT / "tests" / "fixtures" / "workspaces"),
    "tasks": [
        {
            "id": "discount",
            "workspace": "retrieval_shop",
            "workflow_type": "code",
            "task": "Fix the rounding of apply_discount",
            "stage": {"stage_id": "fix", "token_budget": 1200},
            "expected": ["shop/pricing.py::apply_discount"],
        },
        {
            "id": "reservations",
            "workspace": "retrieval_shop",
            "workflow_type": "document",
            "task": "what happens to stock reservations when an order is cancelled",
            "stage": {"stage_id": "docs", "token_budget": 800},
            "expected": ["docs/guide.md::Shop guide > Stock > Reservations"],
        },
    ],
}
JUSTIFICATION = "Baseline of the test golden set: two tasks over retrieval_shop, lexical only."


def _write(tmp_path: Path, version: int = 1, justification: str = JUSTIFICATION) -> tuple[Path, Path]:
    golden = tmp_path / "golden.yaml"
    golden.write_text(yaml.safe_dump(GOLDEN))
    harness = tmp_path / "harness.yaml"
    harness.write_text(
        yaml.safe_dump(
            {"baseline": "baseline.json", "k": 10, "baseline_version": version, "baseline_justification": justification}
        )
    )
    return golden, harness


def _eval(golden: Path, harness: Path, out: Path, *extra: str) -> tuple[int, str]:
    args = ["--set", "embedding.enabled=false", "eval", "--golden", str(golden), "--harness", str(harness)]
    result = CliRunner().invoke(app, [*args, "--out", str(out), *extra])
    return result.exit_code, result.output


def test_eval_writes_artifacts_passes_on_its_baseline_and_fails_when_recall_drops(
    tmp_path: Path, isolated_home: Path
) -> None:
    golden, harness = _write(tmp_path)
    code, output = _eval(golden, harness, tmp_path / "a", "--update-baseline")
    assert code == 0, output
    baseline = json.loads((tmp_path / "baseline.json").read_text())
    assert baseline["tasks"]["discount"]["recall_at_k"] == 1.0 and baseline["schema_hash"] == artifact_schema_hash()

    code, output = _eval(golden, harness, tmp_path / "b")
    assert code == 0, output
    assert "PASS" in output
    artifact = TaskArtifact.model_validate_json((tmp_path / "b" / "discount.json").read_text())
    assert artifact.ranked[0] == "shop/pricing.py::apply_discount"
    assert artifact.claims and all(c.grounded and c.citations[0] in artifact.citations for c in artifact.claims)
    assert artifact.candidates and artifact.events and artifact.inputs_hash

    # a change that lowers recall: the code source switched off
    args = ["--set", "embedding.enabled=false", "--set", "retrieval.code=false", "eval"]
    result = CliRunner().invoke(
        app, [*args, "--golden", str(golden), "--harness", str(harness), "--out", str(tmp_path / "c")]
    )
    assert result.exit_code == 1, result.output
    assert "FAIL discount" in result.output and "recall@k fell from 1.000 to 0.000" in result.output


def test_the_baseline_changes_only_with_a_new_version_and_justification(tmp_path: Path, isolated_home: Path) -> None:
    golden, harness = _write(tmp_path)
    assert _eval(golden, harness, tmp_path / "a", "--update-baseline")[0] == 0
    code, output = _eval(golden, harness, tmp_path / "b", "--update-baseline")
    assert code == 1 and "refusing to change the baseline" in output
    _write(tmp_path, version=2, justification=JUSTIFICATION + " Version 2: re-measured after a fix.")
    code, output = _eval(golden, harness, tmp_path / "c")
    assert code == 1 and "baseline version 1 != harness baseline_version 2" in output
    assert _eval(golden, harness, tmp_path / "d", "--update-baseline")[0] == 0
    assert json.loads((tmp_path / "baseline.json").read_text())["version"] == 2


def test_eval_names_a_missing_golden_set_and_the_option_that_sets_it(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", "--golden", str(tmp_path / "none.yaml"), "--out", str(tmp_path)])
    assert result.exit_code == 1
    assert f"the golden set {tmp_path / 'none.yaml'} does not exist" in result.output
    assert "--golden PATH" in result.output
