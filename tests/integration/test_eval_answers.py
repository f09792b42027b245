"""Model-written answers in the golden harness: the repository's golden set passes its frozen baseline
with a scripted answer model, and a model that invents a citation or a quote is caught."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage
from typer.testing import CliRunner

from daemon.cli.app import app
from daemon.retrieval.answers import model_answerer
from daemon.retrieval.harness import Baseline, HarnessConfig, check, load_yaml_model
from daemon.retrieval.models import Attribution, ContextPiece, SourceName
from daemon.service.commands.evaluation import run_golden

ROOT = Path(__file__).parents[2]
GOLDEN = ROOT / "tests" / "golden" / "retrieval_golden.yaml"
HARNESS = ROOT / "tests" / "golden" / "harness.yaml"
_PIECE = re.compile(r"^\[(?P<id>[^\]\n]+)\]\n# (?P<cite>[^\n]+)\n(?P<body>.*?)(?=\n\n\[|\n\nAnswer with)", re.S | re.M)


class ScriptedAnswers:
    """The scripted answer model: cites the first two pieces of the prompt and quotes each one's first line."""

    label = "scripted-answers"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def complete(self, messages: Sequence[BaseMessage]) -> str:
        prompt = str(messages[-1].content)
        self.prompts.append(prompt)
        claims: list[dict[str, object]] = []
        for match in list(_PIECE.finditer(prompt))[:2]:
            first = next(line.strip() for line in match["body"].splitlines() if line.strip())
            claims.append({"text": f"{match['cite']} is relevant", "citations": [match["id"]], "quote": first})
        return "```json\n" + json.dumps({"answer": "See the cited pieces.", "claims": claims}) + "\n```"


def test_the_repository_golden_set_passes_its_frozen_baseline_with_a_scripted_answer_model(
    isolated_home: Path,
) -> None:
    harness = load_yaml_model(HARNESS, HarnessConfig)
    baseline = Baseline.model_validate_json((HARNESS.parent / harness.baseline).read_text())
    model = ScriptedAnswers()
    artifacts = asyncio.run(run_golden(GOLDEN, harness, {}, model_answerer(model)))
    report = check(artifacts, baseline, harness)
    assert report.ok, [*report.problems, *(p for c in report.checks for p in c.problems)]
    assert len(model.prompts) == len(artifacts) == len(baseline.tasks)
    for art in artifacts:
        assert art.claims and all(c.grounded and c.quote for c in art.claims)
        assert {cid for c in art.claims for cid in c.citations} <= {p.id for p in art.context}
        assert art.answer == "See the cited pieces."


def _piece(tmp_path: Path) -> tuple[Path, ContextPiece]:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n")
    attribution = Attribution(path="calc.py", start_line=1, end_line=2, symbol="add")
    piece = ContextPiece(
        id="p1",
        source=SourceName.CODE,
        text="def add(a, b):\n    return a + b",
        attribution=attribution,
        score=1.0,
        tokens=12,
    )
    return tmp_path, piece


class FixedAnswer:
    label = "fixed"

    def __init__(self, answer: str) -> None:
        self.answer = answer

    async def complete(self, messages: Sequence[BaseMessage]) -> str:
        return self.answer


def test_an_invented_citation_or_quote_makes_the_claim_ungrounded(tmp_path: Path) -> None:
    root, piece = _piece(tmp_path)
    claims = [
        {"text": "add sums", "citations": ["p1"], "quote": "return   a + b"},  # whitespace does not matter
        {"text": "sub subtracts", "citations": ["p1"], "quote": "return a - b"},  # in the file, not at the lines
        {"text": "mul exists", "citations": ["p9"], "quote": "def add(a, b):"},  # no such piece
    ]
    answer = FixedAnswer(json.dumps({"answer": "a", "claims": claims}))
    _, made = asyncio.run(model_answerer(answer)("what does add do", root, [piece]))
    assert [c.grounded for c in made] == [True, False, False]
    (root / "calc.py").write_text("def add(a, b):\n    return b + a\n")  # the file changed since retrieval
    _, made = asyncio.run(model_answerer(answer)("what does add do", root, [piece]))
    assert not made[0].grounded


def test_an_answer_that_is_not_the_json_asked_for_is_an_error_not_a_guess(tmp_path: Path) -> None:
    root, piece = _piece(tmp_path)
    with pytest.raises(ValueError, match="fixed: the answer is not valid JSON claims"):
        asyncio.run(model_answerer(FixedAnswer("add adds two numbers."))("q", root, [piece]))
    with pytest.raises(ValueError, match="claims"):
        asyncio.run(model_answerer(FixedAnswer('{"answer": "x", "claims": []}'))("q", root, [piece]))


def test_eval_with_model_answers_needs_a_model_and_catches_a_scripted_one_that_cites_nothing_real(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the model comes from the current workspace's configuration
    runner = CliRunner()
    golden = ["--golden", str(GOLDEN), "--harness", str(HARNESS)]
    base = ["eval", *golden, "--answers", "model", "--out", str(tmp_path / "out")]
    result = runner.invoke(app, base)
    assert result.exit_code == 1
    assert "no chat model serves the 'answer' role" in result.output and "replay_script" in result.output
    script = tmp_path / "script.yaml"
    fake = {"answer": "made up", "claims": [{"text": "x", "citations": ["not-a-piece"], "quote": "nothing"}]}
    script.write_text(json.dumps({"responses": [{"role": "answer", "answer": fake, "repeat": True}]}))
    result = runner.invoke(app, ["--set", f"pipeline.replay_script={script}", *base])
    assert result.exit_code == 1
    assert "ungrounded" in result.output and "FAIL" in result.output
