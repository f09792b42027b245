"""Scoring a localization set: real issues over real repository snapshots, searched as every front searches.

A set names one workspace for every task (``archive``: unpacked into a temporary folder and indexed
there, in seconds) or one checkout per task (``checkouts``: a folder such as the one the
SWE-bench-Lite dev set's ``materialize.sh`` writes; each checkout is indexed in a temporary folder
removed once its task is scored, so a run holds one index at a time, or under ``state_root`` when one
is given, kept between runs, so that a second run re-reads nothing). Either way the index is lexical with its
own state (no user config, no vectors: the run is reproducible); each task's issue text goes through
``WorkspaceIndex.search`` — the ranking every front uses — and is scored by
:mod:`daemon.retrieval.localization`. ``ided eval --localization`` (``daemon.cli.eval_localization``)
prints the scores against the frozen baseline; it reads the set's models from here.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
import time
from collections.abc import Callable, Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from daemon.config import load_config
from daemon.core.models import SearchMode
from daemon.retrieval.localization import (
    LocalizationBaseline,
    LocalizationSet,
    LocalizationTask,
    TaskScore,
    aggregate,
    regressions,
    score_hits,
)

if TYPE_CHECKING:
    from daemon.index.workspace_index import WorkspaceIndex

__all__ = [
    "LocalizationBaseline",
    "LocalizationSet",
    "Progress",
    "TaskDone",
    "TaskScore",
    "aggregate",
    "load_localization_set",
    "regressions",
    "score_localization_set",
]

SEARCH_K = 50


@dataclass(frozen=True, slots=True)
class TaskDone:
    """One task scored: where it stands in the run, and what indexing its workspace cost (None for a
    task of an archive set after the first: they share one index)."""

    done: int
    total: int
    score: TaskScore
    index_s: float | None


Progress = Callable[[TaskDone], None]


def load_localization_set(set_path: Path) -> LocalizationSet:
    """The set at ``set_path``, with the tasks of the set it names in ``tasks_from`` when it lists none."""
    spec = LocalizationSet.model_validate(yaml.safe_load(set_path.read_text(encoding="utf-8")))
    if spec.tasks or spec.tasks_from is None:
        return spec
    source = set_path.parent / spec.tasks_from
    if not source.is_file():
        raise ValueError(f"{set_path}: tasks_from names {source}, which does not exist")
    other = LocalizationSet.model_validate(yaml.safe_load(source.read_text(encoding="utf-8")))
    if not other.tasks:
        raise ValueError(f"{set_path}: tasks_from names {source}, which lists no tasks of its own")
    return spec.model_copy(update={"tasks": other.tasks})


def _read(root: Path, rel: str) -> str | None:
    try:
        return (root / rel).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


@contextmanager
def _lexical_index(
    root: Path, state: Path, scratch: Path, ranker: str | None = None
) -> Generator[tuple[WorkspaceIndex, float]]:
    """``root`` indexed lexically under ``state``, and the seconds that took; searched with ``ranker``
    (``search.ranker``) when given."""
    from daemon.index.workspace_index import WorkspaceIndex

    overrides: dict[str, object] = {"state_dir": str(state), "embedding": {"enabled": False}}
    if ranker is not None:
        overrides["search"] = {"ranker": ranker}
    config = load_config(root, env={}, user_file=scratch / "no-user-config.toml", overrides=overrides)
    with WorkspaceIndex.open(config) as ws:
        started = time.perf_counter()
        ws.index()
        yield ws, time.perf_counter() - started


def _score(ws: WorkspaceIndex, root: Path, task: LocalizationTask) -> TaskScore:
    result = ws.search(task.query, k=SEARCH_K, mode=SearchMode.LEXICAL)
    hits = [(h.chunk.path, h.chunk.start_line) for h in result.hits]
    return score_hits(task.id, task.gold_files, task.gold_functions, hits, lambda rel: _read(root, rel))


def _checkouts_folder(set_path: Path, spec: LocalizationSet, override: Path | None) -> Path:
    # the set's own folder is relative to the set (an absolute one stays as it is); --checkouts to the caller
    folder = override if override is not None else set_path.parent / Path(spec.checkouts or "").expanduser()
    if not folder.is_dir():
        raise ValueError(
            f"the set's checkouts folder {folder} does not exist: write one checkout per task there "
            "(for the SWE-bench-Lite dev set, its materialize.sh) or pass --checkouts DIR"
        )
    missing = [t.id for t in spec.tasks if not (folder / t.id).is_dir()]
    if missing:
        raise ValueError(
            f"{len(missing)} of the set's {len(spec.tasks)} checkouts are missing from {folder} "
            f"(e.g. {', '.join(missing[:3])}): write them first (for the SWE-bench-Lite dev set, its materialize.sh)"
        )
    return folder


def score_localization_set(
    set_path: Path,
    *,
    checkouts: Path | None = None,
    state_root: Path | None = None,
    progress: Progress | None = None,
) -> tuple[LocalizationSet, list[TaskScore]]:
    """Index and search every task of the set; the tasks' scores, in order.

    ``checkouts`` replaces a checkouts set's own folder; ``state_root``, when given, is where its
    indexes are kept between runs (one folder per task), else each is removed once its task is
    scored. ``progress`` hears of each task as it is scored.

    Raises:
        ValueError: the set is malformed, or a checkouts set's folder or one of its checkouts is missing.
    """
    spec = load_localization_set(set_path)
    total = len(spec.tasks)
    scores: list[TaskScore] = []

    def done(score: TaskScore, index_s: float | None) -> None:
        scores.append(score)
        if progress is not None:
            progress(TaskDone(done=len(scores), total=total, score=score, index_s=index_s))

    with tempfile.TemporaryDirectory(prefix="ided-eval-localization-") as tmp:
        scratch = Path(tmp)
        if spec.archive is not None:
            root = scratch / "workspace"
            root.mkdir()
            with tarfile.open(set_path.parent / spec.archive) as tar:
                tar.extractall(root, filter="data")
            with _lexical_index(root, scratch / "state", scratch, spec.ranker) as (ws, index_s):
                for i, task in enumerate(spec.tasks):
                    done(_score(ws, root, task), index_s if i == 0 else None)
            return spec, scores
        folder = _checkouts_folder(set_path, spec, checkouts)
        for task in spec.tasks:
            root = folder / task.id
            state = (state_root or scratch / "states") / task.id
            with _lexical_index(root, state, scratch, spec.ranker) as (ws, index_s):
                done(_score(ws, root, task), index_s)
            if state_root is None:
                shutil.rmtree(state, ignore_errors=True)  # one index on disk at a time (a django one: ~160 MB)
    return spec, scores
