"""After a real red pytest in a scripted run, the retry's context holds the failing test, the run's code and the
failure, read from the run branch through the overlay, and none of the run's own decision-log notes."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from daemon.config import load_config
from daemon.core.run_models import DecisionKind, RunStatus
from daemon.index.workspace_index import WorkspaceIndex
from daemon.service.pipeline.opening import open_pipeline
from daemon.vcs.worktrees import RunWorktrees
from tests.pipeline_support import FAST_RESILIENCE, WAIT, choose, write_script
from tests.vcs_support import make_repo

FEATURE = "feature_with_iterative_testing"
PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"

ORIGINAL = "def add(a, b):\n    return a + b\n\n\ndef scale(values, factor):\n    return [v * factor for v in values]\n"
MARK = "Weighted product of the basket, rounded to cents (run branch)."
"""Text only the run branch holds: the docstring of the function the coder writes."""
BUGGY = (
    ORIGINAL
    + f'\n\ndef basket_product(prices, weights):\n    """{MARK}"""\n    return round(sum(prices) + sum(weights), 2)\n'
)
FIXED = BUGGY.replace("sum(prices) + sum(weights)", "sum(p * w for p, w in zip(prices, weights))")
TEST = (
    "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parents[1] / 'src'))\n"
    "from basket import basket_product\n\n\n"
    "def test_basket_product_weights_each_price():\n    assert basket_product([2.0, 3.0], [1.0, 3.0]) == 11.0\n"
)


def _project(root: Path) -> Path:
    return make_repo(
        root, {"src/basket.py": ORIGINAL, "pytest.ini": "[pytest]\n", ".gitignore": "__pycache__/\n.pytest_cache/\n"}
    )


def _script() -> list[dict[str, Any]]:
    done: dict[str, Any] = {"status": "success", "summary": "done", "evidence": []}
    return [
        {
            "role": "orchestrator",
            "answer": choose(FEATURE, requirements_analysis="SKIP", code_review="SKIP", documentation="SKIP"),
        },
        {
            "role": "coder",
            "match": r"Attempt: 1\b",
            "tool_calls": [{"name": "write_file", "args": {"path": "src/basket.py", "content": BUGGY}}],
        },
        {"role": "coder", "match": r"Attempt: 1\b", "answer": {**done, "summary": "basket_product added"}},
        {
            "role": "test_writer",
            "match": r"Attempt: 1\b",
            "tool_calls": [{"name": "write_file", "args": {"path": "tests/test_basket.py", "content": TEST}}],
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
            "match": r"Attempt: 2\b",
            "tool_calls": [{"name": "write_file", "args": {"path": "src/basket.py", "content": FIXED}}],
        },
        {"role": "coder", "match": r"Attempt: 2\b", "answer": {**done, "summary": "basket_product fixed"}},
        {"role": "test_runner", "match": r"Attempt: 2\b", "answer": {**done, "summary": "green"}},
    ]


async def test_the_retry_after_a_red_pytest_sees_the_failing_test_and_the_run_s_code(tmp_path: Path) -> None:
    repo = _project(tmp_path / "repo")
    script = write_script(tmp_path / "script.yaml", _script())
    config = load_config(
        repo,
        env={"HOME": str(tmp_path / "home")},
        overrides={
            "state_dir": str(tmp_path / "state"),
            "embedding": {"enabled": False},
            "pipeline": {"replay_script": str(script), "resilience": FAST_RESILIENCE.model_dump()},
            "agents": {"commands": {"test": PYTEST}, "command_timeout_seconds": 120},
        },
    )
    with WorkspaceIndex.open(config) as index:
        index.index()  # the workspace index holds the user's tree: no basket_product, no test file
    async with open_pipeline(
        config, models_needed=True, env={}, worktrees=RunWorktrees(repo, tmp_path / "runs")
    ) as runtime:
        started = await runtime.start("Add basket_product: the weighted product of prices and weights")
        record = await runtime.wait(started.run_id, wait_seconds=WAIT)
        log = await runtime.decision_log(record.run_id)
        state = await runtime.state(record.run_id)

    assert record.status is RunStatus.SUCCEEDED, record.stop
    assert state is not None
    red = state.stage_results["test_execution"][0]
    assert red.failed and "exited with code 1" in red.summary, red.model_dump_json(indent=1)[:3000]
    retry = state.enriched_context["implementation"]
    text = "\n".join(s.text for s in retry)
    assert retry[0].source == "failure"
    assert "test_basket_product_weights_each_price" in retry[0].text  # the failing test, named by pytest
    assert "assert 9.0 == 11.0" in text  # the failure
    code = [s for s in retry[1:] if s.path == "src/basket.py"]
    assert code and any(MARK in s.text for s in code), [(s.source, s.path) for s in retry]  # the run's code
    tests = [s for s in retry[1:] if s.path == "tests/test_basket.py"]
    assert tests and "basket_product([2.0, 3.0], [1.0, 3.0])" in tests[0].text  # the failing test's code
    own = f"run {record.run_id}"
    assert not [s for s in retry if s.source == "decisions" and own in s.text], "the run's own notes came back"
    enrichment = next(e for e in log if e.kind is DecisionKind.ENRICHMENT and e.data.get("mode") != "upfront")
    assert "src/basket.py" in {s.get("path") for s in enrichment.data["snippets"]}
    # the user's tree and its index never saw the run's code
    assert MARK not in (repo / "src" / "basket.py").read_text(encoding="utf-8")
