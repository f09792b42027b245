"""The localization golden set: real scikit-learn issues over a real snapshot, against its frozen baseline.

It runs the ranking every front uses (lexical, no vectors) and must fail when the ranking regresses:
the second test turns off what the ranking adds to plain BM25 and checks the baseline catches it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import daemon.index.ranking as ranking
from daemon.retrieval.localization import LocalizationBaseline, aggregate, regressions
from daemon.service.localization_eval import score_localization_set

SET = Path(__file__).resolve().parents[1] / "golden" / "localization.yaml"
BASELINE = SET.parent / "localization_baseline.json"


def _baseline() -> LocalizationBaseline:
    return LocalizationBaseline.model_validate_json(BASELINE.read_text(encoding="utf-8"))


def test_the_ranking_holds_its_frozen_baseline() -> None:
    _, scores = score_localization_set(SET)
    assert regressions(scores, _baseline()) == []
    assert aggregate(scores)["R@5"] >= 0.8  # what the set was frozen at, stated plainly


def test_a_ranking_without_issue_analysis_breaks_the_baseline(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = replace(
        ranking.DEFAULT_WEIGHTS,
        name=0.0,
        qualified=0.0,
        path=0.0,
        frame=0.0,
        file=0.0,
        klass=0.0,
        group=(),
        test=1.0,
        docs=1.0,
        headline=0.0,
    )
    monkeypatch.setattr(ranking, "DEFAULT_WEIGHTS", plain)
    monkeypatch.setattr("daemon.index.query_analysis.TITLE_REPEAT", 1)
    monkeypatch.setattr("daemon.index.query_analysis.CODE_TERM_BOOST", 1.0)
    _, scores = score_localization_set(SET)
    problems = regressions(scores, _baseline())
    assert problems, "a plain BM25 ranking must not pass the frozen baseline"
