"""Scoring a localization set: real issues over a real repository snapshot, searched as every front searches.

The set's archive is unpacked into a temporary folder and indexed lexically with its own state (no
user config, no vectors: the run is reproducible and takes seconds); each task's issue text goes
through ``WorkspaceIndex.search`` — the ranking every front uses — and is scored by
:mod:`daemon.retrieval.localization`. ``ided eval --localization`` (``daemon.cli.eval_localization``)
prints the scores against the frozen baseline; it reads the set's models from here.
"""

from __future__ import annotations

import tarfile
import tempfile
from pathlib import Path

import yaml

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

__all__ = [
    "LocalizationBaseline",
    "LocalizationSet",
    "TaskScore",
    "aggregate",
    "regressions",
    "score_localization_set",
]

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
