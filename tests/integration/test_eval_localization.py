"""The localization golden set: real scikit-learn issues over a real snapshot, against its frozen baseline.

It runs the ranking every front uses (lexical, no vectors) and must fail when the ranking regresses:
the second test turns off what the ranking adds to plain BM25 and checks the baseline catches it.
The rest run a set over one checkout per task (the layout of the larger dev-set set, which needs the
dev set's checkouts and runs from ``just eval-localization-devset``) on checkouts written here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

import daemon.index.ranking as ranking
from daemon.retrieval.localization import LocalizationBaseline, LocalizationSet, aggregate, regressions
from daemon.service.commands.localization_eval import TaskDone, load_localization_set, score_localization_set

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


LEARNED_SETS = [SET.parent / "localization_learned.yaml", SET.parent / "localization_titles.yaml"]


@pytest.mark.parametrize("learned_set", LEARNED_SETS, ids=["issues", "titles"])
def test_the_learned_ranker_holds_its_frozen_baselines(learned_set: Path) -> None:
    spec, scores = score_localization_set(learned_set)
    assert spec.ranker == "learned" and len(scores) == 20
    baseline = LocalizationBaseline.model_validate_json((learned_set.parent / spec.baseline).read_text())
    assert regressions(scores, baseline) == []


def test_a_model_that_puts_tests_first_breaks_the_learned_baseline(monkeypatch: pytest.MonkeyPatch) -> None:
    from daemon.index import learned_ranker
    from daemon.index.ranking import FEATURES

    test = FEATURES.index("test")
    stump = {"feature": [test, -1, -1], "threshold": [0.5, 0, 0], "left": [1, 0, 0], "right": [2, 0, 0]}
    model: dict[str, object] = {"format": "ided-ranker", "version": 1, "features": list(FEATURES)}
    model["trees"] = [stump | {"value": [0.0, 0.0, 9.0]}]
    bundled = f"bundled:{learned_ranker.BUNDLED_MODEL}"
    monkeypatch.setitem(learned_ranker._LOADED, bundled, learned_ranker.parse_model(model, name=bundled))
    spec, scores = score_localization_set(LEARNED_SETS[1])
    baseline = LocalizationBaseline.model_validate_json((SET.parent / spec.baseline).read_text())
    assert regressions(scores, baseline), "a ranker that lists tests first must not pass the frozen baseline"


# -- a set over one checkout per task (the dev set's layout), as `just eval-localization-devset` runs --------

CHECKOUTS = {
    "demo__shop-1": {
        "shop/cart.py": "def add_item(cart, item, quantity=1):\n    '''Put quantity of item in the cart.'''\n"
        "    cart[item] = cart.get(item, 0) + quantity\n    return cart\n",
        "shop/tax.py": "def vat(amount, rate=0.2):\n    '''The value added tax on an amount.'''\n"
        "    return amount * rate\n",
    },
    "demo__shop-2": {
        "shop/cart.py": "def add_item(cart, item):\n    cart.append(item)\n    return cart\n",
        "shop/tax.py": "def vat(amount, rate=0.2):\n    '''The value added tax on an amount.'''\n"
        "    return round(amount * rate, 2)\n",
    },
}
TASKS = [
    {
        "id": "demo__shop-1",
        "query": "add_item ignores the quantity\nAdding an item twice to the cart with a quantity counts it once.",
        "gold_files": ["shop/cart.py"],
        "gold_functions": ["shop/cart.py::add_item"],
    },
    {
        "id": "demo__shop-2",
        "query": "The value added tax is rounded wrongly\nvat(10.005) gives too many decimals for an amount.",
        "gold_files": ["shop/tax.py"],
        "gold_functions": ["shop/tax.py::vat"],
    },
]


def _checkouts_set(tmp_path: Path, **extra: str) -> Path:
    folder = tmp_path / "checkouts"
    for task_id, files in CHECKOUTS.items():
        for rel, text in files.items():
            (folder / task_id / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / task_id / rel).write_text(text, encoding="utf-8")
    spec = {"version": 1, "source": "written by the test", "checkouts": "checkouts", "baseline": "base.json"}
    path = tmp_path / "set.yaml"
    path.write_text(yaml.safe_dump({**spec, **extra, "tasks": TASKS}), encoding="utf-8")
    return path


def test_a_set_names_exactly_one_workspace_source() -> None:
    both: dict[str, object] = {
        "version": 1,
        "source": "s",
        "baseline": "b.json",
        "tasks": [],
        "archive": "a.tar.xz",
        "checkouts": "c",
    }
    with pytest.raises(ValidationError, match="exactly one"):
        LocalizationSet.model_validate(both)
    with pytest.raises(ValidationError, match="exactly one"):
        LocalizationSet.model_validate({k: v for k, v in both.items() if k not in ("archive", "checkouts")})


def test_a_checkouts_set_indexes_each_task_in_its_own_checkout_and_can_keep_the_indexes(tmp_path: Path) -> None:
    set_path = _checkouts_set(tmp_path)
    states = tmp_path / "states"
    heard: list[TaskDone] = []
    _, scores = score_localization_set(set_path, state_root=states, progress=heard.append)
    assert [(s.id, s.file_rank, s.fn_recall) for s in scores] == [("demo__shop-1", 1, 1.0), ("demo__shop-2", 1, 1.0)]
    assert [(h.done, h.total) for h in heard] == [(1, 2), (2, 2)] and all(h.index_s is not None for h in heard)
    assert sorted(p.name for p in states.iterdir()) == ["demo__shop-1", "demo__shop-2"]
    _, again = score_localization_set(set_path, state_root=states)
    assert again == scores


def test_a_missing_checkout_is_named_before_anything_is_indexed(tmp_path: Path) -> None:
    set_path = _checkouts_set(tmp_path)
    shutil.rmtree(tmp_path / "checkouts" / "demo__shop-2")
    states = tmp_path / "states"
    with pytest.raises(ValueError, match=r"1 of the set's 2 checkouts are missing .*demo__shop-2.*materialize\.sh"):
        score_localization_set(set_path, state_root=states)
    assert not states.exists()


def _ided_eval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_CACHE_HOME": str(cwd / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "daemon", "eval", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def test_ided_eval_runs_a_checkouts_set_against_its_frozen_baseline(tmp_path: Path) -> None:
    set_path = _checkouts_set(tmp_path)
    moved = tmp_path / "elsewhere"
    (tmp_path / "checkouts").rename(moved)
    kept = tmp_path / "kept"
    frozen = _ided_eval(
        "--localization",
        str(set_path),
        "--checkouts",
        str(moved),
        "--state-root",
        str(kept),
        "--update-baseline",
        cwd=tmp_path,
    )
    assert frozen.returncode == 0, frozen.stderr
    assert "[2/2] demo__shop-2: gold file at 1" in frozen.stderr
    assert LocalizationBaseline.model_validate_json((tmp_path / "base.json").read_text()).metrics["R@1"] == 1.0
    assert sorted(p.name for p in kept.iterdir()) == sorted(CHECKOUTS)
    checked = _ided_eval("--localization", str(set_path), "--checkouts", str(moved), cwd=tmp_path)
    assert checked.returncode == 0 and checked.stderr.rstrip().endswith("PASS"), checked.stderr
    assert not (tmp_path / "cache").exists()  # without --state-root no index outlives its task
    missing = _ided_eval("--localization", str(set_path), cwd=tmp_path)  # the set's own folder was moved
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert "checkouts folder" in missing.stderr and "--checkouts DIR" in missing.stderr
    malformed = _checkouts_set(tmp_path, archive="x.tar.xz")
    both = _ided_eval("--localization", str(malformed), cwd=tmp_path)
    assert both.returncode != 0 and "Traceback" not in both.stderr and "exactly one" in both.stderr


def test_the_committed_dev_set_set_is_well_formed_and_its_baseline_covers_it() -> None:
    """The larger set runs only where the dev set's checkouts are (``just eval-localization-devset``);
    CI checks that it loads and that its frozen baseline scores exactly its tasks."""
    devset = SET.parent / "localization_devset.yaml"
    spec = load_localization_set(devset)
    ids = [t.id for t in spec.tasks]
    assert spec.checkouts and spec.archive is None and len(ids) == len(set(ids)) == 79
    frozen = LocalizationBaseline.model_validate_json((devset.parent / spec.baseline).read_text(encoding="utf-8"))
    assert frozen.version == spec.version and sorted(frozen.tasks) == sorted(ids)
