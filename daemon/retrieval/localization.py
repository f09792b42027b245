"""File and function localization on real issues: the scoring and the golden set's models and check.

A *localization task* is a real issue (its text is the query) with the files and functions its
merged fix changed. Hits (path, first line) are scored as the SWE-bench-Lite development set's
``score.py`` scores them: reduced to distinct files in order, file recall at 1/5/10, and FnR@10, the
gold functions among the first 10 distinct (file, innermost function/class holding the hit's first
line) pairs. ``bench/localization.py`` uses this on the whole development set; ``ided eval
--localization`` on the committed golden subset (``tests/golden/localization.yaml``), whose frozen
baseline a ranking regression breaks.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Self

from pydantic import Field, model_validator

from daemon.core.frozen_model import FrozenModel

__all__ = [
    "FN_K",
    "KS",
    "LocalizationBaseline",
    "LocalizationSet",
    "LocalizationTask",
    "Symbol",
    "TaskScore",
    "aggregate",
    "python_symbols",
    "regressions",
    "score_hits",
]

KS = (1, 5, 10)
FN_K = 10


class LocalizationTask(FrozenModel):
    id: str
    query: str = Field(description="The issue text, as a user or an agent would paste it.")
    gold_files: tuple[str, ...]
    gold_functions: tuple[str, ...] = Field(default=(), description='"path::Class.method" or "path::function".')


class LocalizationSet(FrozenModel):
    """A set names one workspace for every task (``archive``) or one checkout per task (``checkouts``)."""

    version: int
    source: str = Field(description="Where the workspace and the tasks come from (repository, commit, licence).")
    archive: str | None = Field(
        default=None, description="One workspace for every task, as a .tar.xz, relative to this file."
    )
    checkouts: str | None = Field(
        default=None,
        description="A folder of checkouts, one per task, named by the task's id (as the SWE-bench-Lite dev set's "
        "materialize.sh writes them); '~' expanded, relative to this file unless absolute.",
    )
    baseline: str = Field(description="The frozen baseline (JSON), relative to this file.")
    ranker: Literal["formula", "learned", "auto"] | None = Field(
        default=None, description="The ranking the set measures (search.ranker); unset: the built-in default."
    )
    tasks_from: str | None = Field(
        default=None,
        description="Another set file (relative to this one) whose tasks this set asks, when it lists none itself: "
        "the same questions measured with another ranker, against a baseline of their own.",
    )
    tasks: tuple[LocalizationTask, ...] = ()

    @model_validator(mode="after")
    def _one_workspace_source(self) -> Self:
        if (self.archive is None) == (self.checkouts is None):
            raise ValueError(
                "a localization set names either `archive` (one snapshot for every task) or `checkouts` "
                "(a folder of one checkout per task), exactly one of them"
            )
        if not self.tasks and self.tasks_from is None:
            raise ValueError("a localization set lists `tasks` or names a set to take them from (`tasks_from`)")
        return self


class TaskScore(FrozenModel):
    id: str
    file_rank: int | None = Field(description="1-based rank of the first gold file among distinct files; None past 50.")
    recall: dict[str, float] = Field(description="R@1, R@5, R@10 (share of gold files among the first k files).")
    fn_recall: float | None = Field(description="FnR@10; None when the task names no gold function.")
    top_files: tuple[str, ...] = ()
    top_symbols: tuple[str, ...] = ()


class LocalizationBaseline(FrozenModel):
    version: int
    justification: str
    metrics: dict[str, float]
    tasks: dict[str, TaskScore]


@dataclass(frozen=True, slots=True)
class Symbol:
    qualname: str
    start: int
    end: int
    depth: int


def python_symbols(source: str) -> list[Symbol]:
    """Every def/class with its lines (decorators included) and depth; functions nested in
    functions fold into the outer one. Unparsable source has none."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out: list[Symbol] = []
    stack: list[tuple[list[ast.stmt], str, int]] = [(tree.body, "", 0)]
    while stack:
        body, prefix, depth = stack.pop()
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                qual = f"{prefix}{node.name}"
                out.append(Symbol(qual, start, node.end_lineno or node.lineno, depth))
                if isinstance(node, ast.ClassDef):
                    stack.append((node.body, qual + ".", depth + 1))
    return out


def _innermost(symbols: Sequence[Symbol], line: int) -> Symbol | None:
    best: Symbol | None = None
    for s in symbols:
        if s.start <= line <= s.end and (best is None or s.depth > best.depth):
            best = s
    return best


def score_hits(
    task_id: str,
    gold_files: Sequence[str],
    gold_functions: Sequence[str],
    hits: Sequence[tuple[str, int | None]],
    read_source: Callable[[str], str | None],
) -> TaskScore:
    """Score ranked hits ``(path, first line)``; ``read_source(path)`` gives a file's text (None: unreadable)."""
    gold = list(dict.fromkeys(gold_files))
    files = list(dict.fromkeys(path for path, _ in hits))
    recall = {f"R@{k}": sum(1 for g in gold if g in files[:k]) / len(gold) if gold else 0.0 for k in KS}
    ranks = [files.index(g) + 1 for g in gold if g in files]
    symbols: list[str] = []
    if gold_functions:
        cache: dict[str, list[Symbol]] = {}
        seen: set[str] = set()
        for path, line in hits:
            if line is None or not path.endswith(".py"):
                continue
            if path not in cache:
                cache[path] = python_symbols(read_source(path) or "")
            s0, s1 = _innermost(cache[path], line), _innermost(cache[path], line + 1)
            s = s1 if s1 is not None and (s0 is None or s1.depth > s0.depth) else s0
            key = f"{path}::{s.qualname}" if s is not None else None
            if key is None or key in seen:
                continue
            seen.add(key)
            symbols.append(key)
            if len(symbols) == FN_K:
                break
    fn = sum(1 for g in gold_functions if g in symbols) / len(gold_functions) if gold_functions else None
    return TaskScore(
        id=task_id,
        file_rank=min(ranks) if ranks else None,
        recall=recall,
        fn_recall=fn,
        top_files=tuple(files[:10]),
        top_symbols=tuple(symbols),
    )


def aggregate(scores: Sequence[TaskScore]) -> dict[str, float]:
    """Mean R@1/5/10 over the tasks and FnR@10 over the tasks that name gold functions."""
    out = {key: sum(s.recall[key] for s in scores) / len(scores) if scores else 0.0 for key in ("R@1", "R@5", "R@10")}
    fn = [s.fn_recall for s in scores if s.fn_recall is not None]
    out[f"FnR@{FN_K}"] = sum(fn) / len(fn) if fn else 0.0
    return out


def regressions(scores: Sequence[TaskScore], baseline: LocalizationBaseline) -> list[str]:
    """What got worse than the frozen baseline: an aggregate under its frozen value, or a task whose
    gold file left the top 5 (each named with its ranks)."""
    problems: list[str] = []
    now = aggregate(scores)
    for key, frozen in baseline.metrics.items():
        if now.get(key, 0.0) < frozen - 1e-9:
            problems.append(f"{key} fell from {frozen:.3f} to {now.get(key, 0.0):.3f}")
    for s in scores:
        before = baseline.tasks.get(s.id)
        if before is None:
            problems.append(f"{s.id}: not in the baseline")
            continue
        was_top5 = before.file_rank is not None and before.file_rank <= 5
        is_top5 = s.file_rank is not None and s.file_rank <= 5
        if was_top5 and not is_top5:
            problems.append(f"{s.id}: the gold file fell from rank {before.file_rank} to {s.file_rank or '>50'}")
    return problems
