"""``ided eval --localization SET``: real issues over a real repository snapshot, against a frozen baseline.

The set's archive is unpacked into a temporary folder and indexed lexically with its own state (no
user config, no vectors: the run is reproducible and takes seconds); each task's issue text goes
through ``WorkspaceIndex.search`` — the ranking every front uses — and is scored by
:mod:`daemon.retrieval.localization`. A ranking regression (an aggregate under its frozen value, or a
gold file that leaves the top 5) fails the run; ``--update-baseline`` freezes a new one, and needs a
higher version and a new justification.
"""

from __future__ import annotations

import tarfile
import tempfile
from pathlib import Path

import yaml

from daemon.cli.context import CliState
from daemon.config import load_config
from daemon.core.models import SearchMode
from daemon.retrieval.localization import (
    LocalizationBaseline,
    LocalizationSet,
    TaskScore,
    aggregate,
    regressions,
    score_hits,
)

__all__ = ["run_localization_set", "score_localization_set"]

SEARCH_K = 50


def _read(root: Path, rel: str) -> str | None:
    try:
        return (root / rel).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def score_localization_set(set_path: Path) -> tuple[LocalizationSet, list[TaskScore]]:
    """Unpack, index and search every task of the set; the tasks' scores, in order."""
    from daemon.index.workspace_index import WorkspaceIndex

    spec = LocalizationSet.model_validate(yaml.safe_load(set_path.read_text(encoding="utf-8")))
    archive = set_path.parent / spec.archive
    with tempfile.TemporaryDirectory(prefix="ided-eval-localization-") as tmp:
        root = Path(tmp) / "workspace"
        root.mkdir()
        with tarfile.open(archive) as tar:
            tar.extractall(root, filter="data")
        config = load_config(
            root,
            env={},
            user_file=Path(tmp) / "no-user-config.toml",
            overrides={"state_dir": str(Path(tmp) / "state"), "embedding": {"enabled": False}},
        )
        scores: list[TaskScore] = []
        with WorkspaceIndex.open(config) as ws:
            ws.index()
            for task in spec.tasks:
                result = ws.search(task.query, k=SEARCH_K, mode=SearchMode.LEXICAL)
                hits = [(h.chunk.path, h.chunk.start_line) for h in result.hits]
                scores.append(
                    score_hits(task.id, task.gold_files, task.gold_functions, hits, lambda rel: _read(root, rel))
                )
    return spec, scores


def run_localization_set(state: CliState, set_path: Path, *, update_baseline: bool, as_json: bool) -> bool:
    """Run the set and print the report; True when nothing regressed (or the baseline was written)."""
    spec, scores = score_localization_set(set_path)
    now = aggregate(scores)
    baseline_path = set_path.parent / spec.baseline
    old = (
        LocalizationBaseline.model_validate_json(baseline_path.read_text(encoding="utf-8"))
        if baseline_path.is_file()
        else None
    )
    if update_baseline:
        if old is not None and spec.version <= old.version:
            state.fail(f"refusing to change the baseline (version {old.version}): raise `version` in {set_path} first")
        fresh = LocalizationBaseline(
            version=spec.version,
            justification=f"frozen from a run of {len(scores)} tasks",
            metrics=now,
            tasks={s.id: s for s in scores},
        )
        baseline_path.write_text(fresh.model_dump_json(indent=1) + "\n", encoding="utf-8")
        state.err.print(f"baseline v{spec.version} written to {baseline_path}")
        return True
    if old is None:
        state.fail(f"no baseline at {baseline_path}: run with --update-baseline to freeze one")
    problems = regressions(scores, old)
    if as_json:
        print(
            LocalizationBaseline(
                version=spec.version, justification="this run", metrics=now, tasks={s.id: s for s in scores}
            ).model_dump_json(indent=1)
        )
    else:
        for s in scores:
            rank = s.file_rank if s.file_rank is not None else ">50"
            fn = "-" if s.fn_recall is None else f"{s.fn_recall:.2f}"
            state.err.print(f"{s.id}: gold file at {rank}, FnR@10 {fn}", highlight=False)
        frozen = ", ".join(f"{k} {v:.3f}" for k, v in old.metrics.items())
        state.err.print(
            "now:    " + ", ".join(f"{k} {v:.3f}" for k, v in now.items()) + f"\nfrozen: {frozen}", highlight=False
        )
        for problem in problems:
            state.err.print(f"FAIL {problem}", highlight=False)
        state.err.print("PASS" if not problems else "FAIL")
    return not problems
