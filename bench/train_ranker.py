"""Train the learned ranker (LambdaMART, LightGBM) on ``bench/ranker_data.py``'s rows and write its model.

Rows of the training repositories (``bench/mine_pairs.py``'s ``TRAIN_REPOS``) train; the held-out
repositories' rows (``HELD_OUT_REPOS``) are never trained on and only measured. The settings are
chosen by leave-repositories-out cross-validation on the training repositories (``--folds`` groups of
whole repositories, so a fold never sees its own repositories' queries), by mean NDCG@10; the final
model is trained on every training repository with the chosen number of trees.

Printed, on the CV folds and on the held-out repositories, per query type: function MRR@10 and R@5
(the answer functions among the first 5 distinct (file, symbol) pairs), file R@5, for the formula's
order (the rows are stored in it) and the learned one.

The model is written as ided's own JSON format (:mod:`daemon.index.learned_ranker`: no LightGBM at
run time) and checked against LightGBM's own predictions before it is written.

Needs the ``train`` dependency group: ``uv sync --group train``.

    python bench/train_ranker.py --rows ~/.cache/ided/ranker/rows --out daemon/index/models/ranker-v1.json
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


@dataclass
class Query:
    repo: str
    type: str
    held_out: bool
    x: npt.NDArray[np.float32]
    y: npt.NDArray[np.int8]
    cands: list[tuple[str, str, int]]
    gold_files: list[str]
    gold_functions: list[str]


def load(rows_dir: Path) -> list[Query]:
    queries: list[Query] = []
    for npz in sorted(rows_dir.glob("*.npz")):
        data = np.load(npz)
        meta = json.loads(npz.with_suffix(".json").read_text())
        x, qid, y = data["x"], data["qid"], data["y"]
        starts = np.searchsorted(qid, np.arange(len(meta["queries"])))
        ends = np.searchsorted(qid, np.arange(len(meta["queries"])), side="right")
        for m, a, b in zip(meta["queries"], starts, ends, strict=True):
            queries.append(
                Query(
                    m["repo"],
                    m["type"],
                    m["held_out"],
                    x[a:b],
                    y[a:b],
                    [(c[0], c[1], c[2]) for c in m["kept"]],
                    m["gold_files"],
                    m["gold_functions"],
                )
            )
    return queries


def measures(q: Query, order: Sequence[int]) -> dict[str, float]:
    """Function MRR@10 and R@5 over distinct (file, symbol) pairs, file R@5 over distinct files."""
    seen_fn: list[str] = []
    seen_file: list[str] = []
    for i in order:
        path, qual, _ = q.cands[i]
        key = f"{path}::{qual}"
        if key not in seen_fn:
            seen_fn.append(key)
        if path not in seen_file:
            seen_file.append(path)
    gold = set(q.gold_functions)
    first = next((r for r, k in enumerate(seen_fn[:10], 1) if k in gold), None)
    return {
        "MRR@10": 1.0 / first if first else 0.0,
        "FnR@5": len(gold & set(seen_fn[:5])) / len(gold),
        "FnR@10": len(gold & set(seen_fn[:10])) / len(gold),
        "FileR@5": len(set(q.gold_files) & set(seen_file[:5])) / len(q.gold_files),
    }


def table(title: str, queries: list[Query], scores: list[npt.NDArray[np.float64]]) -> str:
    """Formula against learned, per query type and all."""
    rows: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for q, s in zip(queries, scores, strict=True):
        formula = measures(q, range(len(q.cands)))
        learned = measures(q, sorted(range(len(q.cands)), key=lambda i: (-s[i], i)))
        for t in (q.type, "ALL"):
            for k, v in formula.items():
                rows[t]["formula " + k].append(v)
            for k, v in learned.items():
                rows[t]["learned " + k].append(v)
    keys = ("MRR@10", "FnR@5", "FnR@10", "FileR@5")
    lines = [f"{title}", f"{'type':<11}{'n':>6}  " + "  ".join(f"{k:>17}" for k in keys)]
    for t in sorted(rows, key=lambda t: (t == "ALL", t)):
        r = rows[t]
        n = len(r["formula MRR@10"])
        cells = [f"{np.mean(r['formula ' + k]):.3f} -> {np.mean(r['learned ' + k]):.3f}" for k in keys]
        lines.append(f"{t:<11}{n:>6}  " + "  ".join(f"{c:>17}" for c in cells))
    return "\n".join(lines)


def stack(queries: list[Query]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int8], list[int]]:
    return np.concatenate([q.x for q in queries]), np.concatenate([q.y for q in queries]), [len(q.y) for q in queries]


def params(leaves: int, rate: float, min_data: int, seed: int) -> dict[str, Any]:
    return {
        "objective": "lambdarank",
        "metric": "ndcg",
        "ndcg_eval_at": [10],
        "lambdarank_truncation_level": 20,
        "num_leaves": leaves,
        "learning_rate": rate,
        "min_data_in_leaf": min_data,
        "feature_fraction": 0.8,
        "bagging_fraction": 0.8,
        "bagging_freq": 1,
        "lambda_l2": 1.0,
        "num_threads": 2,
        "seed": seed,
        "deterministic": True,
        "force_row_wise": True,
        "max_bin": 63,
        "verbose": -1,
    }


@dataclass
class _Flat:
    """One tree as ided's arrays (a leaf has feature -1)."""

    feature: list[int]
    threshold: list[float]
    left: list[int]
    right: list[int]
    value: list[float]
    depth: int = 1

    def add(self, node: dict[str, Any], depth: int) -> int:
        self.depth = max(self.depth, depth)
        i = len(self.feature)
        self.feature.append(-1)
        self.threshold.append(0.0)
        self.left.append(0)
        self.right.append(0)
        self.value.append(0.0)
        if "leaf_value" in node:
            self.value[i] = float(node["leaf_value"])
            return i
        if node.get("decision_type", "<=") != "<=":
            raise SystemExit(f"unsupported split {node.get('decision_type')}")
        self.feature[i] = int(node["split_feature"])
        self.threshold[i] = float(node["threshold"])
        self.left[i] = self.add(node["left_child"], depth + 1)
        self.right[i] = self.add(node["right_child"], depth + 1)
        return i


def export(booster: Any, features: Sequence[str], meta: dict[str, Any]) -> dict[str, Any]:
    """The booster as ided's model JSON (:mod:`daemon.index.learned_ranker`)."""
    trees: list[dict[str, Any]] = []
    max_depth = 1
    for info in booster.dump_model()["tree_info"]:
        flat = _Flat([], [], [], [], [])
        flat.add(info["tree_structure"], 1)
        max_depth = max(max_depth, flat.depth)
        trees.append(
            {"feature": flat.feature, "threshold": flat.threshold, "left": flat.left, "right": flat.right}
            | {"value": flat.value}
        )
    return {
        "format": "ided-ranker",
        "version": 1,
        **meta,
        "max_depth": max_depth,
        "features": list(features),
        "trees": trees,
    }


def main(argv: list[str] | None = None) -> int:
    try:  # the train dependency group: not installed by default, so typed loosely here
        lgb: Any = importlib.import_module("lightgbm")
    except ImportError:
        print("LightGBM is not installed: run `uv sync --group train` first", file=sys.stderr)
        return 2
    from daemon.index.learned_ranker import parse_model
    from daemon.index.ranking import FEATURES

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=Path, required=True, help="bench/ranker_data.py's output folder")
    p.add_argument("--out", type=Path, help="the model file to write (ided JSON)")
    p.add_argument("--folds", type=int, default=4, help="leave-repositories-out folds")
    p.add_argument("--rounds", type=int, default=400, help="boosting rounds at most")
    p.add_argument("--leaves", default="7,15", help="num_leaves values to try")
    p.add_argument("--rates", default="0.05", help="learning rates to try")
    p.add_argument("--min-data", type=int, default=50, help="min_data_in_leaf")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--version-name", default="ranker-v1", help="the name recorded in the model")
    args = p.parse_args(argv)
    queries = load(args.rows)
    train = [q for q in queries if not q.held_out]
    held = [q for q in queries if q.held_out]
    if not train:
        p.error(f"no training rows under {args.rows}")
    repos = sorted({q.repo for q in train})
    print(
        f"{len(train)} training queries from {len(repos)} repositories, {len(held)} held-out queries "
        f"({sum(len(q.y) for q in train)} training rows)",
        file=sys.stderr,
    )
    folds = [repos[i :: args.folds] for i in range(args.folds)]
    best: tuple[float, int, float, int] | None = None
    cv_scores: dict[tuple[int, float], list[npt.NDArray[np.float64]]] = {}
    cv_queries: list[Query] = []
    for leaves in (int(v) for v in args.leaves.split(",")):
        for rate in (float(v) for v in args.rates.split(",")):
            curves: list[list[float]] = []
            scores: list[npt.NDArray[np.float64]] = []
            fold_queries: list[Query] = []
            for fold in folds:
                tr = [q for q in train if q.repo not in fold]
                va = [q for q in train if q.repo in fold]
                xt, yt, gt = stack(tr)
                xv, yv, gv = stack(va)
                ev: dict[str, Any] = {}
                booster = lgb.train(
                    params(leaves, rate, args.min_data, args.seed),
                    lgb.Dataset(xt, yt, group=gt, feature_name=list(FEATURES)),
                    num_boost_round=args.rounds,
                    valid_sets=[lgb.Dataset(xv, yv, group=gv)],
                    valid_names=["cv"],
                    callbacks=[lgb.record_evaluation(ev)],
                )
                curves.append(list(ev["cv"]["ndcg@10"]))
                pred = booster.predict(xv)
                at = 0
                for q in va:
                    scores.append(np.asarray(pred[at : at + len(q.y)], dtype=np.float64))
                    at += len(q.y)
                fold_queries.extend(va)
            mean_curve = np.mean(np.asarray(curves), axis=0)
            rounds = int(np.argmax(mean_curve)) + 1
            print(
                f"leaves {leaves} rate {rate}: CV NDCG@10 {mean_curve[rounds - 1]:.4f} at {rounds} rounds "
                f"(at {args.rounds}: {mean_curve[-1]:.4f})",
                file=sys.stderr,
            )
            cv_scores[(leaves, rate)] = scores
            cv_queries = fold_queries
            if best is None or mean_curve[rounds - 1] > best[0]:
                best = (float(mean_curve[rounds - 1]), leaves, rate, rounds)
    assert best is not None
    _, leaves, rate, rounds = best
    print(
        table(
            f"CV (leave repositories out, {args.folds} folds; all {args.rounds} rounds), leaves {leaves} rate {rate}:",
            cv_queries,
            cv_scores[(leaves, rate)],
        )
    )
    x, y, g = stack(train)
    booster = lgb.train(
        params(leaves, rate, args.min_data, args.seed),
        lgb.Dataset(x, y, group=g, feature_name=list(FEATURES)),
        num_boost_round=rounds,
    )
    meta = {
        "name": args.version_name,
        "trained_on": repos,
        "held_out": sorted({q.repo for q in held}),
        "queries": len(train),
        "rows": len(y),
        "num_leaves": leaves,
        "learning_rate": rate,
        "rounds": rounds,
        "cv_ndcg10": round(best[0], 4),
    }
    model = export(booster, FEATURES, meta)
    mine = parse_model(json.loads(json.dumps(model)), name="check")
    sample = x[: min(len(x), 20000)].astype(np.float64)
    diff = np.max(np.abs(np.asarray(mine.score(sample.tolist())) - booster.predict(sample)))
    if diff > 1e-6:
        raise SystemExit(f"the exported model disagrees with LightGBM by {diff}")
    if held:
        scores = [np.asarray(mine.score(q.x.astype(np.float64).tolist())) for q in held]
        print(table("held-out repositories (never trained on):", held, scores))
    importance = booster.feature_importance("gain")
    top = sorted(zip(FEATURES, importance, strict=True), key=lambda kv: -kv[1])[:12]
    print("gain: " + ", ".join(f"{k} {v / max(importance.sum(), 1e-9):.2f}" for k, v in top))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(model, separators=(",", ":")) + "\n")
        print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KiB, {rounds} trees, {leaves} leaves)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
