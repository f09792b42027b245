"""``ided eval``: run the golden retrieval set and diff it against the frozen baseline (docs/retrieval.md).

Each fixture workspace is copied to a temporary folder, indexed (lexical + dense) with its own
state, and the retrieval agent runs every task over it (no language servers, no user config: the
run is reproducible). One JSON artifact per task is written to ``--out``. Exit status 1 when the
run regresses against the baseline (the report says what), 0 otherwise.
"""

from __future__ import annotations

import asyncio
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from daemon.cli.context import CliState
from daemon.errors import DaemonError

__all__ = ["AnswerMode", "eval_command"]

GOLDEN_DEFAULT = Path("tests/golden/retrieval_golden.yaml")
HARNESS_DEFAULT = Path("tests/golden/harness.yaml")


class AnswerMode(StrEnum):
    EXTRACTIVE = "extractive"
    MODEL = "model"


def _localization(
    state: CliState,
    path: Path,
    *,
    checkouts: Path | None,
    state_root: Path | None,
    update_baseline: bool,
    as_json: bool,
) -> None:
    from daemon.cli.eval_localization import run_localization_set

    if not path.is_file():
        state.fail(f"ided eval: the localization set {path} does not exist (--localization PATH)")
    try:
        ok = run_localization_set(
            state, path, checkouts=checkouts, state_root=state_root, update_baseline=update_baseline, as_json=as_json
        )
    except (OSError, ValueError, DaemonError) as exc:
        state.fail(f"ided eval: {exc}")
    if not ok:
        raise typer.Exit(1)


def eval_command(
    ctx: typer.Context,
    golden: Annotated[Path, typer.Option("--golden", help="The golden set (YAML).")] = GOLDEN_DEFAULT,
    harness: Annotated[Path, typer.Option("--harness", help="The harness config (YAML).")] = HARNESS_DEFAULT,
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder for the per-task JSON artifacts (default: a temp folder).")
    ] = None,
    update_baseline: Annotated[
        bool,
        typer.Option(
            "--update-baseline",
            help="Write this run as the new baseline; needs a higher baseline_version and a new justification "
            "in the harness config.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON on stdout.")] = False,
    answers: Annotated[
        AnswerMode,
        typer.Option(
            "--answers",
            help="Who writes each task's answer: 'extractive' (no model: a claim per top piece) or 'model' (the "
            "chat model configured for this workspace, role 'answer' -> agents -> default; pipeline.replay_script "
            "scripts it). Every claim is checked against the workspace text either way.",
        ),
    ] = AnswerMode.EXTRACTIVE,
    localization: Annotated[
        Path | None,
        typer.Option(
            "--localization",
            help="Run a localization set instead (real issues over real repository snapshots: "
            "tests/golden/localization.yaml, 20 scikit-learn issues over a committed snapshot, or "
            "tests/golden/localization_devset.yaml, dev-set issues over their own checkouts): the search's file "
            "and function ranking against its frozen baseline.",
        ),
    ] = None,
    checkouts: Annotated[
        Path | None,
        typer.Option(
            "--checkouts",
            help="With --localization: the folder of one checkout per task, instead of the set's own.",
            file_okay=False,
        ),
    ] = None,
    state_root: Annotated[
        Path | None,
        typer.Option(
            "--state-root",
            help="With --localization over checkouts: keep each checkout's index here (a folder per task; a "
            "django one takes about 160 MB), so that the next run only searches. Default: none is kept.",
            file_okay=False,
        ),
    ] = None,
) -> None:
    """Run the golden retrieval set (or, with --localization, a localization set) against its frozen baseline."""
    from daemon.service.commands.evaluation import (
        Baseline,
        HarnessConfig,
        check,
        load_yaml_model,
        make_baseline,
        run_with_answers,
    )

    state = ctx.obj
    assert isinstance(state, CliState)
    if localization is not None:
        _localization(
            state,
            localization,
            checkouts=checkouts,
            state_root=state_root,
            update_baseline=update_baseline,
            as_json=as_json,
        )
        return
    for what, path, option in (("golden set", golden, "--golden"), ("harness config", harness, "--harness")):
        if not path.is_file():
            state.fail(
                f"ided eval: the {what} {path} does not exist; run from the ided repository's root "
                f"or pass {option} PATH"
            )
    try:
        config = load_yaml_model(harness, HarnessConfig)
        baseline_path = harness.parent / config.baseline
        artifacts = asyncio.run(
            run_with_answers(
                golden,
                config,
                state.overrides,
                model_answers=answers is AnswerMode.MODEL,
                workspace_config=state.config,
            )
        )
    except (OSError, ValueError, DaemonError) as exc:
        state.fail(f"ided eval: {exc}")
    folder = out or Path(tempfile.mkdtemp(prefix="ided-eval-artifacts-"))
    folder.mkdir(parents=True, exist_ok=True)
    for art in artifacts:
        (folder / f"{art.task_id}.json").write_text(art.model_dump_json(indent=2) + "\n", encoding="utf-8")
    if update_baseline:
        old = Baseline.model_validate_json(baseline_path.read_text()) if baseline_path.is_file() else None
        if old is not None and (
            config.baseline_version <= old.version or config.baseline_justification == old.justification
        ):
            state.fail(
                f"refusing to change the baseline (version {old.version}): raise baseline_version and write a new "
                f"baseline_justification in {harness} first"
            )
        baseline_path.write_text(make_baseline(artifacts, config).model_dump_json(indent=2) + "\n", encoding="utf-8")
        state.err.print(f"baseline v{config.baseline_version} written to {baseline_path}")
        return
    baseline = Baseline.model_validate_json(baseline_path.read_text())
    report = check(artifacts, baseline, config)
    if as_json:
        print(report.model_dump_json(indent=2))
    else:
        for item in report.checks:
            art = next(a for a in artifacts if a.task_id == item.task_id)
            mark = "ok  " if item.ok else "FAIL"
            state.err.print(
                f"{mark} {item.task_id}: recall@{config.k} {art.recall_at_k:.2f} MRR {art.mrr:.2f} "
                f"coverage {art.citation_coverage:.2f} ungrounded {art.ungrounded_rate:.2f} "
                f"tokens {art.tokens}/{art.token_budget} {art.seconds:.2f}s"
                + "".join(f"\n     - {p}" for p in item.problems)
            )
        for problem in report.problems:
            state.err.print(f"FAIL {problem}")
        state.err.print(
            f"mean recall@{config.k} {report.mean_recall_at_k:.3f}, mean MRR {report.mean_mrr:.3f}; "
            f"artifacts in {folder}; {'PASS' if report.ok else 'FAIL'}"
        )
    if not report.ok:
        raise typer.Exit(1)
