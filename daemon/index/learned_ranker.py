"""The learned ranker: a small tree ensemble (LambdaMART) over each candidate's ranking evidence.

The model is trained by ``bench/train_ranker.py`` with LightGBM on (query, candidate, features,
label) rows mined from public repositories' history (``bench/mine_pairs.py``,
``bench/ranker_data.py``; docs/search.md says what and how), then written as a plain JSON file of
trees that ships inside the package (``daemon/index/models/ranker-v*.json``). Running it needs no
LightGBM: each tree is a few arrays, and all trees are walked at once with numpy over every
candidate of a query, each (row, tree) pair leaving the walk once it reaches its leaf (about 4.5 ms
of CPU for a query's 300 candidates and 193 trees).

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
import math
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
    """A loaded ensemble (implements :class:`daemon.index.ranking.Scorer`).

    Every tree's nodes are laid out in one flat array, each inner node's two children side by side
    (the right child is the left one's next), and each leaf points at itself with a threshold no value
    exceeds: one step of the walk is then ``node = left[node] + (x[feature[node]] > threshold[node])``
    for every (row, tree) at once, and a row that has reached its leaf stays there."""

    name: str
    features: tuple[str, ...]
    roots: npt.NDArray[np.int64]
    """Each tree's root in the flat arrays."""
    feature: npt.NDArray[np.int64]
    """The column each node splits on (0 at a leaf: read, never decisive)."""
    threshold: npt.NDArray[np.float64]
    """A row goes right when its value exceeds this (+inf at a leaf)."""
    left: npt.NDArray[np.int64]
    """The left child's flat index (the right child is the next); a leaf's own index."""
    value: npt.NDArray[np.float64]
    """A leaf's output (0 at an inner node)."""
    inner: npt.NDArray[np.bool_]
    """Whether a node is an inner one (not a leaf)."""
    depth: int
    """The deepest leaf's depth: steps of the walk at most."""
    meta: dict[str, Any]

    def score(self, rows: Sequence[Sequence[float]]) -> list[float]:
        if not rows:
            return []
        x = np.asarray(rows, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != len(self.features):
            raise ValueError(f"expected rows of {len(self.features)} features, got shape {x.shape}")
        n, trees = x.shape[0], self.roots.shape[0]
        flat_x = x.ravel()
        row_base = np.repeat(np.arange(n, dtype=np.int64) * x.shape[1], trees)
        node = np.tile(self.roots, n)
        feature, threshold, left, inner = self.feature, self.threshold, self.left, self.inner
        # the (row, tree) pairs still walking: most reach their leaf within a few steps
        walking = np.arange(node.shape[0], dtype=np.int64)
        at, base = node, row_base
        for _ in range(self.depth):
            at = left[at] + (flat_x[base + feature[at]] > threshold[at])
            going = inner[at]
            if going.all():
                continue
            node[walking] = at
            walking, at, base = walking[going], at[going], base[going]
            if not walking.size:
                break
        node[walking] = at
        return cast(list[float], self.value[node].reshape(n, trees).sum(axis=1).tolist())


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
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    value: list[float] = []
    roots: list[int] = []
    depth = 1
    for i, (f, th, lf, rt, v) in enumerate(trees):
        n = len(f)
        for child in (*lf, *rt):
            if not 0 <= child < n:
                raise RankerModelError(f"{name}: tree {i} points at node {child}, outside its {n} nodes")
        if any(c >= len(features) for c in f):
            raise RankerModelError(f"{name}: tree {i} splits on a feature the model does not list")
        # breadth first from the root: each inner node's children get two adjacent flat slots
        base = len(feature)
        slot = {0: base}
        queue = [(0, 0)]
        seen = {0}
        feature.append(0)
        threshold.append(math.inf)
        left.append(base)
        value.append(0.0)
        while queue:
            node, level = queue.pop(0)
            at = slot[node]
            if f[node] < 0:  # a leaf: it stays where it is
                value[at] = v[node]
                depth = max(depth, level)
                continue
            if lf[node] in seen or rt[node] in seen or lf[node] == rt[node]:
                raise RankerModelError(f"{name}: tree {i} is not a tree (node {node} leads back to a node seen before)")
            first = len(feature)
            for k, child in enumerate((lf[node], rt[node])):
                seen.add(child)
                slot[child] = first + k
                feature.append(0)
                threshold.append(math.inf)
                left.append(first + k)
                value.append(0.0)
                queue.append((child, level + 1))
            feature[at], threshold[at], left[at] = f[node], th[node], first
        roots.append(base)
    meta = {k: v for k, v in d.items() if k not in ("trees", "features")}
    return LearnedRanker(
        name,
        features,
        np.asarray(roots, dtype=np.int64),
        np.asarray(feature, dtype=np.int64),
        np.asarray(threshold, dtype=np.float64),
        np.asarray(left, dtype=np.int64),
        np.asarray(value, dtype=np.float64),
        np.asarray(left, dtype=np.int64) != np.arange(len(left), dtype=np.int64),
        depth,
        meta,
    )


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
