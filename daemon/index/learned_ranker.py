"""The learned ranker: a small tree ensemble (LambdaMART) over each candidate's ranking evidence.

The model is trained by ``bench/train_ranker.py`` with LightGBM on (query, candidate, features,
label) rows mined from public repositories' history (``bench/mine_pairs.py``,
``bench/ranker_data.py``; docs/search.md says what and how), then written as a plain JSON file of
trees that ships inside the package (``daemon/index/models/ranker-v*.json``). Running it needs no
LightGBM: each tree is a few arrays, and all trees are walked at once with numpy over every
candidate of a query (about a millisecond for a thousand candidates).

The file (``format: ided-ranker``, ``version: 1``) holds ``features``, the names of the row's
columns in order (:data:`daemon.index.ranking.FEATURES` when it was trained); each tree's ``feature``,
``threshold``, ``left``, ``right`` (child node indices; a leaf has feature -1) and ``value`` (a
leaf's output) as equal-length lists; and what it was trained on. A row goes left when its value
is at most the threshold. A file that is missing, not JSON, of another format or version, or whose
features are not the ranking's, is refused with :class:`RankerModelError` naming what is wrong.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from daemon.config import Config
from daemon.errors import DaemonError, ErrorCode
from daemon.index.ranking import FEATURES

__all__ = [
    "BUNDLED_MODEL",
    "MODEL_FORMAT",
    "MODEL_VERSION",
    "LearnedRanker",
    "RankerModelError",
    "learned_ranker",
    "load_ranker",
]

logger = logging.getLogger(__name__)

MODEL_FORMAT = "ided-ranker"
MODEL_VERSION = 1
BUNDLED_MODEL = "ranker-v1.json"
"""The model file shipped in ``daemon/index/models``."""


class RankerModelError(DaemonError):
    """The learned ranker's model file cannot be used (missing, corrupted, or for other features)."""

    default_code = ErrorCode.CONFIG_INVALID


@dataclass(frozen=True)
class LearnedRanker:
    """A loaded ensemble (implements :class:`daemon.index.ranking.Scorer`)."""

    name: str
    features: tuple[str, ...]
    feature: npt.NDArray[np.int64]
    """(trees, nodes): the column each node splits on; -1 at a leaf (and in padding)."""
    threshold: npt.NDArray[np.float64]
    left: npt.NDArray[np.int64]
    right: npt.NDArray[np.int64]
    value: npt.NDArray[np.float64]
    depth: int
    meta: dict[str, Any]

    def score(self, rows: Sequence[Sequence[float]]) -> list[float]:
        if not rows:
            return []
        x = np.asarray(rows, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != len(self.features):
            raise ValueError(f"expected rows of {len(self.features)} features, got shape {x.shape}")
        n, trees = x.shape[0], self.feature.shape[0]
        width = self.feature.shape[1]
        feature, threshold = self.feature.ravel(), self.threshold.ravel()
        left, right = self.left.ravel(), self.right.ravel()
        flat_x = x.ravel()
        # one flat node index per (row, tree): tree * width + node; every row starts at each tree's root
        base = np.tile(np.arange(trees, dtype=np.int64) * width, n)
        row_base = np.repeat(np.arange(n, dtype=np.int64) * x.shape[1], trees)
        node = base.copy()
        for _ in range(self.depth):
            feat = feature[node]
            inner = feat >= 0
            if not inner.any():
                break
            values = flat_x[row_base + np.where(inner, feat, 0)]
            child = np.where(values <= threshold[node], left[node], right[node])
            node = np.where(inner, base + child, node)
        leaf_values = self.value.ravel()[node].reshape(n, trees)
        return cast(list[float], leaf_values.sum(axis=1).tolist())


def _tree_arrays(tree: Any, i: int, name: str) -> tuple[list[int], list[float], list[int], list[int], list[float]]:
    if not isinstance(tree, dict):
        raise RankerModelError(f"{name}: tree {i} is not an object")
    t = cast(dict[str, Any], tree)
    try:
        cols = [t["feature"], t["threshold"], t["left"], t["right"], t["value"]]
    except KeyError as exc:
        raise RankerModelError(f"{name}: tree {i} has no {exc.args[0]!r}") from None
    if not all(isinstance(c, list) for c in cols) or len({len(cast(list[Any], c)) for c in cols}) != 1:
        raise RankerModelError(f"{name}: tree {i}: feature/threshold/left/right/value must be lists of one length")
    feature, threshold, left, right, value = (cast(list[Any], c) for c in cols)
    if not feature:
        raise RankerModelError(f"{name}: tree {i} has no nodes")
    try:
        return (
            [int(v) for v in feature],
            [float(v) for v in threshold],
            [int(v) for v in left],
            [int(v) for v in right],
            [float(v) for v in value],
        )
    except (TypeError, ValueError):
        raise RankerModelError(f"{name}: tree {i} holds a value that is not a number") from None


def parse_model(data: Any, *, name: str) -> LearnedRanker:
    """A :class:`LearnedRanker` from a model file's decoded JSON.

    Raises:
        RankerModelError: the data is not an ``ided-ranker`` model for :data:`FEATURES`.
    """
    if not isinstance(data, dict):
        raise RankerModelError(f"{name}: not a ranker model (expected a JSON object)")
    d = cast(dict[str, Any], data)
    if d.get("format") != MODEL_FORMAT or d.get("version") != MODEL_VERSION:
        raise RankerModelError(
            f"{name}: not an {MODEL_FORMAT} model of version {MODEL_VERSION} "
            f"(format {d.get('format')!r}, version {d.get('version')!r})"
        )
    features = tuple(cast(list[str], d.get("features") or []))
    if features != FEATURES:
        raise RankerModelError(
            f"{name}: trained on other features than this version of ided ranks with "
            f"({len(features)} against {len(FEATURES)}): retrain it with bench/train_ranker.py"
        )
    raw_trees = d.get("trees")
    if not isinstance(raw_trees, list) or not raw_trees:
        raise RankerModelError(f"{name}: the model has no trees")
    trees = [_tree_arrays(t, i, name) for i, t in enumerate(cast(list[Any], raw_trees))]
    width = max(len(t[0]) for t in trees)
    feature = np.full((len(trees), width), -1, dtype=np.int64)
    threshold = np.zeros((len(trees), width))
    left = np.zeros((len(trees), width), dtype=np.int64)
    right = np.zeros((len(trees), width), dtype=np.int64)
    value = np.zeros((len(trees), width))
    for i, (f, th, lf, rt, v) in enumerate(trees):
        n = len(f)
        for child in (*lf, *rt):
            if not 0 <= child < n:
                raise RankerModelError(f"{name}: tree {i} points at node {child}, outside its {n} nodes")
        if any(c >= len(features) for c in f):
            raise RankerModelError(f"{name}: tree {i} splits on a feature the model does not list")
        feature[i, :n], threshold[i, :n], left[i, :n], right[i, :n], value[i, :n] = f, th, lf, rt, v
    depth = int(d.get("max_depth") or width)
    meta = {k: v for k, v in d.items() if k not in ("trees", "features")}
    return LearnedRanker(name, features, feature, threshold, left, right, value, max(1, min(depth, width)), meta)


_LOADED: dict[str, LearnedRanker] = {}
_LOCK = threading.Lock()


def load_ranker(path: Path | None = None) -> LearnedRanker:
    """The model at ``path`` (the bundled one when None), loaded once per process.

    Raises:
        RankerModelError: the file is missing, unreadable, not JSON or not a ranker model.
    """
    key = str(path) if path is not None else f"bundled:{BUNDLED_MODEL}"
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
    try:
        if path is None:
            text = resources.files("daemon.index").joinpath("models", BUNDLED_MODEL).read_text(encoding="utf-8")
        else:
            text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RankerModelError(f"cannot read the ranker model {key}: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RankerModelError(f"the ranker model {key} is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    model = parse_model(data, name=key)
    with _LOCK:
        _LOADED[key] = model
    return model


def learned_ranker(config: Config) -> tuple[LearnedRanker | None, str | None]:
    """The ranker ``search.ranker`` asks for: the learned model (``search.ranker_model``, relative to the
    workspace, or the bundled one), or None for the formula; with the reason when the model asked for
    cannot be loaded (then the formula ranks and every answer says so)."""
    search = config.search
    if search.ranker == "formula":
        return None, None
    path: Path | None = None
    if search.ranker_model:
        path = Path(search.ranker_model).expanduser()
        if not path.is_absolute():
            path = config.workspace_path / path
    try:
        return load_ranker(path), None
    except RankerModelError as exc:
        logger.warning("learned ranker unavailable: %s", exc.message)
        return None, f"the learned ranker is unavailable ({exc.message}): ranked by the formula"
