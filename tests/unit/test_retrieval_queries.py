"""Query generation: deterministic queries from a real failing test's output, and model-written queries."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import BaseMessage

from daemon.retrieval.models import (
    FailureContext,
    RetrievalMode,
    RetrievalRequest,
    SourceName,
    StageHints,
    WorkflowKind,
)
from daemon.retrieval.queries import deterministic_queries, extract_signals, model_queries


class ScriptedModel:
    """The sanctioned double: langchain-core's fake chat model behind the QueryModel port."""

    def __init__(self, *answers: str) -> None:
        self._model = FakeListChatModel(responses=list(answers))

    @property
    def label(self) -> str:
        return "scripted"

    async def complete(self, messages: Sequence[BaseMessage]) -> str:
        return str((await self._model.ainvoke(list(messages))).content)


def _failing_pytest_output(tmp_path: Path) -> str:
    (tmp_path / "ledger.py").write_text(
        "def release_units(reserved, quantity):\n    return reserved + quantity  # bug: should subtract\n"
    )
    (tmp_path / "test_ledger.py").write_text(
        "from ledger import release_units\n\n\ndef test_release_gives_units_back():\n"
        "    assert release_units(3, 3) == 0\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", "test_ledger.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 1, run.stdout
    return run.stdout


def test_adaptive_queries_name_the_failing_test_and_the_function_from_real_pytest_output(tmp_path: Path) -> None:
    output = _failing_pytest_output(tmp_path)
    request = RetrievalRequest(
        task="Releasing units must give them back",
        workflow_kind=WorkflowKind.CODE,
        stage=StageHints(stage_id="fix", focus_on=("the faulty function",)),
        mode=RetrievalMode.ADAPTIVE,
        failure=FailureContext(stage_id="test_execution", summary="a test failed", output=output),
    )
    plan = deterministic_queries(request, [SourceName.CODE], max_queries=6)
    texts = [q.text for q in plan.queries]
    assert any("test_release_gives_units_back" in t for t in texts), texts
    assert any("AssertionError" in t for t in texts), texts
    assert "release_units" in plan.symbols
    assert "test_ledger.py" in plan.files
    assert plan.writer == "deterministic"
    assert {q.purpose for q in plan.queries} >= {"the task itself", "error text of the failed attempt"}


def test_signals_read_traceback_frames_and_advisory_ids() -> None:
    signals = extract_signals(
        'File "shop/stock.py", line 31, in release\nKeyError: sku\nsee CVE-2024-3651 and idna==3.6'
    )
    assert signals.frames == ("release",)
    assert signals.files == ("shop/stock.py",)
    assert signals.advisories == ("CVE-2024-3651",)
    assert signals.packages == ("idna==3.6",)


async def test_model_written_queries_are_kept_per_allowed_source_with_their_purpose() -> None:
    answer = {
        "queries": [
            {"source": "code", "query": "release reserved units", "purpose": "the faulty method"},
            {"source": "web", "query": "python dict get default", "purpose": "not allowed here"},
        ],
        "symbols": ["StockLedger.release"],
    }
    request = RetrievalRequest(task="fix release", workflow_kind=WorkflowKind.CODE, stage=StageHints(stage_id="fix"))
    plan = await model_queries(ScriptedModel(json.dumps(answer)), request, [SourceName.CODE], max_queries=4)
    assert [(q.source, q.text, q.purpose) for q in plan.queries] == [
        (SourceName.CODE, "release reserved units", "the faulty method")
    ]
    assert plan.symbols == ("StockLedger.release",)
    assert plan.writer == "model scripted"
    assert plan.notes == ("1 model query(ies) for sources that are off were dropped",)
