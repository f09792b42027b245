"""``ided eval --localization SET``: real issues over real repository snapshots, against a frozen baseline.

The set is indexed and searched by :mod:`daemon.service.commands.localization_eval`; this prints each task as it
is scored, then the aggregates against the frozen baseline. A ranking regression (an aggregate under
its frozen value, or a gold file that leaves the top 5) fails the run; ``--update-baseline`` freezes
a new one, and needs a higher version.
"""

from __future__ import annotations

from pathlib import Path

from daemon.cli.context import CliState
from daemon.service.commands.localization_eval import (
    LocalizationBaseline,
    TaskDone,
    aggregate,
    regressions,
    score_localization_set,
)

__all__ = ["run_localization_set"]


def run_localization_set(
    state: CliState,
    set_path: Path,
    *,
    checkouts: Path | None,
    state_root: Path | None,
    update_baseline: bool,
    as_json: bool,
) -> bool:
    """Run the set and print the report; True when nothing regressed (or the baseline was written)."""

    def progress(step: TaskDone) -> None:
        s = step.score
        rank = s.file_rank if s.file_rank is not None else ">50"
        fn = "-" if s.fn_recall is None else f"{s.fn_recall:.2f}"
        indexed = "" if step.index_s is None else f" (indexed in {step.index_s:.1f} s)"
        state.err.print(
            f"[{step.done}/{step.total}] {s.id}: gold file at {rank}, FnR@10 {fn}{indexed}", highlight=False
        )

    spec, scores = score_localization_set(set_path, checkouts=checkouts, state_root=state_root, progress=progress)
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
        frozen = ", ".join(f"{k} {v:.3f}" for k, v in old.metrics.items())
        state.err.print(
            "now:    " + ", ".join(f"{k} {v:.3f}" for k, v in now.items()) + f"\nfrozen: {frozen}", highlight=False
        )
        for problem in problems:
            state.err.print(f"FAIL {problem}", highlight=False)
        state.err.print("PASS" if not problems else "FAIL")
    return not problems
