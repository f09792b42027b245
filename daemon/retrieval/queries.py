"""Query generation: a model writes queries per source (structured output), or a deterministic generator does.

The deterministic generator reads the task, the stage's ``focus_on`` hints (a hint's query names
the hint and the task query it refines: upfront retrieval answers it from the task's hits, see
``focus``) and, in adaptive mode, the failure: identifiers (snake_case, CamelCase, dotted names,
backticked terms), the names and files of failing tests (pytest ``FAILED path::test``), the
functions of traceback frames (``File "x.py", line N, in func``) and the error lines
(``NameError: ...``). It always asks the task itself too. Both generators' queries go to the
decision log with their purpose.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import Field

from daemon.core.frozen_model import FrozenModel
from daemon.retrieval.lexical import ENGLISH_STOP_WORDS
from daemon.retrieval.model_json import ask_json
from daemon.retrieval.models import PlannedQuery, RetrievalRequest, SourceName
from daemon.retrieval.ports import QueryModel

__all__ = ["QueryPlan", "deterministic_queries", "extract_signals", "model_queries"]


_IDENT = re.compile(
    r"`([^`\n]{2,80})`|\b([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|[A-Za-z_][A-Za-z0-9_]*)\b"
)
_FAILED_TEST = re.compile(r"(?:FAILED|ERROR)\s+([\w./-]+\.py)::([\w\[\]:.-]+)")
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\w+)')
_PY_LOCATION = re.compile(r"^([\w./-]+\.py):(\d+):", re.MULTILINE)
_ERROR_LINE = re.compile(
    r"^(?:E\s+(\S.*)"  # pytest's "E   assert 6 == 0"
    r"|\s*((?:[A-Z]\w*(?:Error|Exception|Failure|Warning))\b:?.*)"  # "KeyError: 'sku'"
    r"|[\w./-]+:\d+: (\w+(?:Error|Exception)))$",  # "test_x.py:5: AssertionError"
    re.MULTILINE,
)
_ADVISORY_ID = re.compile(r"\b(CVE-\d{4}-\d{4,}|GHSA(?:-[23456789cfghjmpqrvwx]{4}){3}|PYSEC-\d{4}-\d+)\b", re.I)
_PINNED = re.compile(r"\b([A-Za-z][\w.-]*)(?:==|@)(\d[\w.+-]*)\b")
_STOP = ENGLISH_STOP_WORDS | frozenset(
    [
        "add",
        "make",
        "use",
        "fix",
        "bug",
        "test",
        "tests",
        "code",
        "file",
        "files",
        "function",
        "functions",
        "class",
        "method",
        "new",
        "run",
        "runs",
        "error",
        "fails",
        "failed",
    ]
)


def _is_identifier(word: str) -> bool:
    """snake_case, CamelCase, dotted or containing a digit: looks like code, not prose."""
    if "." in word or "_" in word.strip("_"):
        return True
    return any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)


@dataclass(frozen=True, kw_only=True)
class Signals:
    """What the deterministic generator found in the task and the failure."""

    identifiers: tuple[str, ...]
    failing_tests: tuple[str, ...]
    frames: tuple[str, ...]
    files: tuple[str, ...]
    errors: tuple[str, ...]
    advisories: tuple[str, ...]
    packages: tuple[str, ...]


def _unique(items: Iterable[str], limit: int) -> tuple[str, ...]:
    out: dict[str, None] = {}
    for item in items:
        item = item.strip()
        if item and item.lower() not in {k.lower() for k in out}:
            out[item] = None
        if len(out) >= limit:
            break
    return tuple(out)


def extract_signals(*texts: str) -> Signals:
    """Identifiers, failing tests, traceback frames, error lines, advisory ids and pinned packages."""
    text = "\n".join(t for t in texts if t)
    idents: list[str] = []
    for match in _IDENT.finditer(text):
        quoted, word = match.group(1), match.group(2)
        if quoted:
            idents.append(quoted.strip("()"))
        elif word and word.lower() not in _STOP and _is_identifier(word) and not word.endswith((".py", ".ts")):
            idents.append(word)
    failing = [m.group(2).split("[")[0] for m in _FAILED_TEST.finditer(text)]
    frames = [m.group(3) for m in _FRAME.finditer(text) if m.group(3) != "<module>"]
    files = [m.group(1) for m in _FAILED_TEST.finditer(text)]
    files += [m.group(1) for m in _FRAME.finditer(text)] + [m.group(1) for m in _PY_LOCATION.finditer(text)]
    errors = [(m.group(1) or m.group(2) or m.group(3))[:200] for m in _ERROR_LINE.finditer(text)]
    return Signals(
        identifiers=_unique([*failing, *frames, *idents], 24),
        failing_tests=_unique(failing, 10),
        frames=_unique(frames, 10),
        files=_unique((f for f in files if not f.startswith(("/", "<"))), 10),
        errors=_unique(errors, 5),
        advisories=_unique((m.group(1).upper() for m in _ADVISORY_ID.finditer(text)), 10),
        packages=_unique((f"{m.group(1)}=={m.group(2)}" for m in _PINNED.finditer(text)), 10),
    )


@dataclass(frozen=True, kw_only=True)
class QueryPlan:
    queries: tuple[PlannedQuery, ...]
    writer: str
    symbols: tuple[str, ...]
    """Symbols for the language-server facts (identifiers the queries name)."""
    files: tuple[str, ...]
    """Files named by the failure (tracebacks, failing tests): their AST map is wanted."""
    notes: tuple[str, ...] = ()

    def for_source(self, source: SourceName) -> list[PlannedQuery]:
        return [q for q in self.queries if q.source is source]


def _task_phrase(task: str) -> str:
    return " ".join(task.split())[:300]


_Query = tuple[str, str, str | None]
"""(query, purpose, the focus hint it stands for)."""


def _search_queries(request: RetrievalRequest, signals: Signals, task: str) -> list[_Query]:
    """Queries for an index source: failure first, then identifiers, task, focus_on (each refining the task)."""
    out: list[_Query] = []
    if request.failure is not None:
        out.extend(
            (test.replace("test_", " ").replace("_", " ") + " " + test, "failing test " + test, None)
            for test in signals.failing_tests[:2]
        )
        out.extend((error, "error text of the failed attempt", None) for error in signals.errors[:2])
        if signals.frames:
            out.append((" ".join(signals.frames[:4]), "functions in the traceback", None))
    named = [i for i in signals.identifiers if i not in signals.failing_tests][:4]
    if named:
        out.append((" ".join(named), "identifiers named in the task or failure", None))
    out.append((task, "the task itself", None))
    out.extend((f"{hint} {task[:120]}", f"focus_on: {hint}", hint) for hint in request.stage.focus_on[:3])
    return out


def _source_queries(source: SourceName, request: RetrievalRequest, signals: Signals, task: str) -> list[_Query]:
    if source in (SourceName.CODE, SourceName.DOCS, SourceName.LIBRARIES):
        return _search_queries(request, signals, task)
    if source is SourceName.DECISIONS:
        return [(task, "decisions about the task", None)]
    if source is SourceName.WEB:
        errors = (
            [(signals.errors[0], "the error message on the web", None)] if request.failure and signals.errors else []
        )
        return [*errors, (task, "the task on the web", None)]
    if source is SourceName.ADVISORIES:
        ids: list[_Query] = [(a, "advisory id named in the task", None) for a in signals.advisories]
        return ids + [(p, "pinned package named in the task", None) for p in signals.packages]
    return []


def deterministic_queries(request: RetrievalRequest, sources: Sequence[SourceName], *, max_queries: int) -> QueryPlan:
    """Queries from identifiers and key phrases of the task and failure, the focus_on terms and the task."""
    failure = request.failure
    signals = extract_signals(request.task, *((failure.summary, failure.output) if failure else ()))
    task = _task_phrase(request.task)
    planned: list[PlannedQuery] = []
    for source in sources:
        seen: set[str] = set()
        for text, purpose, focus in _source_queries(source, request, signals, task):
            text = " ".join(text.split())[:300]
            if text and text.lower() not in seen and len(seen) < max_queries:
                seen.add(text.lower())
                refines = task if focus is not None and task.lower() in seen else None
                planned.append(
                    PlannedQuery(
                        source=source,
                        text=text,
                        purpose=purpose,
                        focus=focus if refines is not None else None,
                        refines=refines,
                    )
                )
    symbols = tuple(i for i in signals.identifiers if re.fullmatch(r"[A-Za-z_][\w.]*", i))[:8]
    return QueryPlan(queries=tuple(planned), writer="deterministic", symbols=symbols, files=signals.files)


class _ModelQuery(FrozenModel):
    source: SourceName
    query: str = Field(min_length=1, max_length=400)
    purpose: str = Field(min_length=1, max_length=200)


class _ModelQueries(FrozenModel):
    queries: list[_ModelQuery] = Field(min_length=1, max_length=30)
    symbols: list[str] = Field(default_factory=list[str], max_length=12, description="Code symbols to look up.")


async def model_queries(
    model: QueryModel, request: RetrievalRequest, sources: Sequence[SourceName], *, max_queries: int
) -> QueryPlan:
    """Queries written by ``model`` as JSON (``{"queries": [{source, query, purpose}], "symbols": [...]}``).

    Raises:
        ValueError: the answer is not valid against that schema (the caller falls back).
    """
    failure = request.failure
    failure_text = ""
    if failure is not None:
        failure_text = (
            f"\nThe stage '{failure.stage_id}' failed: {failure.summary}\nIts output:\n{failure.output[:3000]}"
        )
    parsed = await ask_json(
        model,
        system="You write search queries for a code/document workspace retrieval agent. Be specific.",
        prompt=f"Task: {request.task}\nWorkflow: {request.workflow_kind.value}; stage: {request.stage.stage_id}; "
        f"focus on: {'; '.join(request.stage.focus_on) or '-'}; avoid: {'; '.join(request.stage.avoid) or '-'}"
        f"{failure_text}\nSources you may use: {', '.join(s.value for s in sources)}. Write up to {max_queries} "
        f"queries per source, each with its purpose, and the code symbols worth looking up.",
        schema=_ModelQueries,
        invalid="query model answer is invalid",
    )
    allowed = set(sources)
    counts: dict[SourceName, int] = {}
    queries: list[PlannedQuery] = []
    dropped = 0
    for item in parsed.queries:
        if item.source not in allowed or counts.get(item.source, 0) >= max_queries:
            dropped += 1
            continue
        counts[item.source] = counts.get(item.source, 0) + 1
        queries.append(PlannedQuery(source=item.source, text=item.query.strip(), purpose=item.purpose.strip()))
    if not queries:
        raise ValueError("query model answer names no allowed source")
    signals = extract_signals(request.task, *((failure.summary, failure.output) if failure else ()))
    notes = (f"{dropped} model query(ies) for sources that are off were dropped",) if dropped else ()
    return QueryPlan(
        queries=tuple(queries),
        writer=f"model {model.label}",
        symbols=_unique(parsed.symbols, 8),
        files=signals.files,
        notes=notes,
    )
