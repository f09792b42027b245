"""Load workflow files and validate them, routing graph included; the catalog of available workflows.

Sources, later wins by workflow name: the built-in ``workflows/`` directory, the workspace's
``.ided/workflows/``, then ``pipeline.workflow_dirs``. A file that fails validation is reported with
every problem found (file, stage, what is wrong, how to fix it) and left out of the catalog; the other
workflows stay usable.

Checks beyond the pydantic schema: duplicate stage ids, reserved ids, routing targets that are not a
stage, ``DONE`` or ``ABORT``, retrieval hints and rag-source ``trigger_stages`` for unknown stages,
stages unreachable from the entry (the first stage), loops in the routing graph with no
``max_attempts`` bound on any of their stages, invalid ``applicable_patterns`` regexes and duplicate
agent ids in a stage.

A file may be written in the specification's spelling (integer stage ids, ``agent:``, ``priority:
HIGH`` ...): ``workflow_spelling.normalise`` turns it into ided's before validation, and its notes
(what each such field became, or why it is only recorded) travel on the workflow (``Workflow.notes``).
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import yaml
from pydantic import ValidationError

from daemon.core.regular_files import read_regular
from daemon.core.workflow_schema import ABORT, DONE, RESERVED_STAGE_IDS, Stage, Workflow
from daemon.errors import WorkflowError
from daemon.orchestration.workflow_spelling import normalise

__all__ = [
    "WorkflowCatalog",
    "WorkflowProblem",
    "WorkflowValidationError",
    "builtin_workflow_dir",
    "check_workflow_file",
    "load_workflow_file",
    "parse_workflow",
    "routing_problems",
    "workflow_dirs",
]

logger = logging.getLogger(__name__)

WORKFLOW_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True, kw_only=True)
class WorkflowProblem:
    """One thing wrong with a workflow file."""

    file: str
    stage: str | None
    message: str
    fix: str

    def __str__(self) -> str:
        where = f"{self.file}: stage '{self.stage}'" if self.stage else self.file
        return f"{where}: {self.message} (fix: {self.fix})"


class WorkflowValidationError(WorkflowError):
    """A workflow file failed validation; ``problems`` holds every problem found."""

    def __init__(self, problems: Sequence[WorkflowProblem]) -> None:
        super().__init__("; ".join(str(p) for p in problems))
        self.problems = tuple(problems)


def builtin_workflow_dir() -> Path:
    """The workflows shipped with ided: the checkout's ``workflows/``, or the wheel's copy of it.

    A wheel carries them as ``daemon/builtin_workflows`` (``pyproject.toml``'s force-include); a
    source checkout or editable install reads the top-level folder itself.
    """
    package = Path(__file__).resolve().parents[1]
    checkout = package.parent / "workflows"
    return checkout if checkout.is_dir() else package / "builtin_workflows"


def workflow_dirs(workspace: Path, extra: Iterable[str] = ()) -> list[Path]:
    """Directories searched for workflows, weakest first."""
    dirs = [builtin_workflow_dir(), workspace / ".ided" / "workflows"]
    dirs.extend(Path(d) if Path(d).is_absolute() else workspace / d for d in extra)
    return dirs


# -- one file -------------------------------------------------------------------------------------


def _stage_label(raw: Mapping[str, object], index: int) -> str:
    stages = raw.get("stages")
    if isinstance(stages, list) and index < len(cast("list[object]", stages)):
        entry = cast("list[object]", stages)[index]
        if isinstance(entry, dict):
            sid = cast("dict[str, object]", entry).get("stage_id")
            if isinstance(sid, str):
                return sid
    return f"stages[{index}]"


def _fix_for(error_type: str, field_name: str) -> str:
    if error_type == "missing":
        return f"add '{field_name}'"
    if error_type == "extra_forbidden":
        return f"remove '{field_name}' or correct its spelling (keys: workflows/schema.json)"
    if error_type == "string_pattern_mismatch":
        if field_name.startswith("next_stage") or field_name == "retry_stage":
            return "use a stage id (lower snake_case), DONE or ABORT"
        return "use lower snake_case: letters, digits, underscores, starting with a letter"
    if error_type == "enum":
        return "use one of the values listed"
    return "see workflows/schema.json for the expected shape"


def _schema_problems(exc: ValidationError, raw: Mapping[str, object], source: str) -> list[WorkflowProblem]:
    problems: list[WorkflowProblem] = []
    errors = exc.errors()
    stage_errors = any(len(e["loc"]) >= 2 and e["loc"][0] == "stages" for e in errors)
    for err in errors:
        loc = err["loc"]
        if stage_errors and loc == ("stages",) and err["type"] == "too_short":
            continue  # a consequence of the invalid stages reported on their own
        stage: str | None = None
        path = loc
        if len(loc) >= 2 and loc[0] == "stages" and isinstance(loc[1], int):
            stage = _stage_label(raw, loc[1])
            path = loc[2:]
        where = ".".join(str(p) for p in path) or "(stage)"
        field_name = str(path[-1]) if path else ""
        message = f"unknown key '{where}'" if err["type"] == "extra_forbidden" else f"'{where}': {err['msg']}"
        problems.append(
            WorkflowProblem(file=source, stage=stage, message=message, fix=_fix_for(err["type"], field_name))
        )
    return problems


def parse_workflow(text: str, source: str) -> Workflow:
    """Parse and fully validate one workflow document; raises ``WorkflowValidationError``."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise WorkflowValidationError(
            [WorkflowProblem(file=source, stage=None, message=f"not valid YAML{where}: {problem}", fix="fix the YAML")]
        ) from exc
    if not isinstance(raw, dict):
        raise WorkflowValidationError(
            [
                WorkflowProblem(
                    file=source,
                    stage=None,
                    message="the document is not a mapping",
                    fix="start with 'metadata:', 'retrieval_strategy_config:' and 'stages:'",
                )
            ]
        )
    spelled = normalise(cast("dict[str, object]", raw))
    problems = [WorkflowProblem(file=source, stage=p.stage, message=p.message, fix=p.fix) for p in spelled.problems]
    try:
        workflow = Workflow.model_validate(spelled.data)
    except ValidationError as exc:
        raise WorkflowValidationError([*problems, *_schema_problems(exc, spelled.data, source)]) from exc
    problems.extend(routing_problems(workflow, source))
    if problems:
        raise WorkflowValidationError(problems)
    return workflow.with_notes(tuple(spelled.notes))


_MAX_WORKFLOW_BYTES = 4 * 1024 * 1024
"""A workflow file is read up to this size (a FIFO or device under a workflow's name is never opened)."""


def load_workflow_file(path: Path) -> Workflow:
    try:
        text = read_regular(path, _MAX_WORKFLOW_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkflowValidationError(
            [WorkflowProblem(file=str(path), stage=None, message=f"cannot be read: {exc}", fix="check the file")]
        ) from exc
    return parse_workflow(text, str(path))


def check_workflow_file(path: Path) -> list[WorkflowProblem]:
    """Every problem of one file; empty when it is valid."""
    try:
        load_workflow_file(path)
    except WorkflowValidationError as exc:
        return list(exc.problems)
    return []


# -- the routing graph ----------------------------------------------------------------------------


def _closest(name: str, options: Iterable[str]) -> str:
    match = difflib.get_close_matches(name, list(options), n=1)
    return f" (did you mean '{match[0]}'?)" if match else ""


def _edges(stage: Stage) -> list[tuple[str, str]]:
    """(field, target) pairs of one stage; the implicit retry of itself is not an edge."""
    out = [
        ("next_stage_on_success", stage.routing.next_stage_on_success),
        ("next_stage_on_failure", stage.routing.next_stage_on_failure),
    ]
    if stage.routing.retry_stage is not None:
        out.append(("retry_stage", stage.routing.retry_stage))
    return out


def _strongly_connected(graph: Mapping[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; components in discovery order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            successors = graph[node]
            if child < len(successors):
                work.append((node, child + 1))
                nxt = successors[child]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return components


def _identity_problems(workflow: Workflow, source: str) -> list[WorkflowProblem]:
    problems: list[WorkflowProblem] = []

    def problem(stage: str | None, message: str, fix: str) -> None:
        problems.append(WorkflowProblem(file=source, stage=stage, message=message, fix=fix))

    seen: dict[str, int] = {}
    for i, stage in enumerate(workflow.stages):
        sid = stage.stage_id
        if sid in seen:
            problem(
                sid,
                f"duplicate stage_id '{sid}' (stages[{seen[sid]}] and stages[{i}])",
                "give every stage a unique stage_id",
            )
        seen.setdefault(sid, i)
        if sid in RESERVED_STAGE_IDS:
            reserved = ", ".join(sorted(RESERVED_STAGE_IDS))
            problem(sid, f"stage_id '{sid}' is reserved for a graph node", f"rename the stage (reserved: {reserved})")
        agents = [a.agent_id for a in stage.parallel_agents]
        for dup in sorted({a for a in agents if agents.count(a) > 1}):
            problem(sid, f"agent '{dup}' appears twice in parallel_agents", "list each agent once")
    for named in workflow.reflection.stages:
        if named not in seen:
            problem(
                None,
                f"reflection.stages names '{named}', which is no stage of this workflow",
                "name stage ids of this workflow, or leave reflection.stages empty for its editing stages",
            )
    for pattern in workflow.metadata.selection_criteria.applicable_patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            problem(
                None,
                f"applicable_patterns entry {pattern!r} is not a valid regular expression: {exc}",
                "escape special characters or fix the expression",
            )
    return problems


def _target_problems(workflow: Workflow, source: str, ids: list[str]) -> list[WorkflowProblem]:
    problems: list[WorkflowProblem] = []
    known = set(ids)
    for stage in workflow.stages:
        for name, target in _edges(stage):
            if target in known or (name != "retry_stage" and target in (DONE, ABORT)):
                continue
            allowed = "a stage id" if name == "retry_stage" else "a stage id, DONE or ABORT"
            problems.append(
                WorkflowProblem(
                    file=source,
                    stage=stage.stage_id,
                    message=f"routing.{name} '{target}' is not {allowed}{_closest(target, ids)}",
                    fix=f"point routing.{name} at one of: {', '.join(ids)}"
                    + ("" if name == "retry_stage" else ", DONE, ABORT"),
                )
            )
    problems.extend(
        WorkflowProblem(
            file=source,
            stage=None,
            message=f"rag source '{rag.name}' has trigger_stages entry '{sid}', which is no stage{_closest(sid, ids)}",
            fix=f"name stages of this workflow: {', '.join(ids)}",
        )
        for rag in workflow.retrieval_strategy_config.rag_strategy.sources
        for sid in rag.trigger_stages
        if sid not in known
    )
    problems.extend(
        WorkflowProblem(
            file=source,
            stage=key,
            message=f"retrieval_hints has an entry for unknown stage '{key}'{_closest(key, ids)}",
            fix="key retrieval_hints by existing stage ids",
        )
        for key in workflow.retrieval_strategy_config.retrieval_hints
        if key not in known
    )
    return problems


def _graph_problems(workflow: Workflow, source: str, ids: list[str]) -> list[WorkflowProblem]:
    problems: list[WorkflowProblem] = []
    known = set(ids)
    graph: dict[str, list[str]] = {sid: [] for sid in ids}
    for stage in workflow.stages:
        graph[stage.stage_id] = [t for _, t in _edges(stage) if t in known]
    reachable = {workflow.entry_stage}
    frontier = [workflow.entry_stage]
    while frontier:
        for nxt in graph[frontier.pop()]:
            if nxt not in reachable:
                reachable.add(nxt)
                frontier.append(nxt)
    problems.extend(
        WorkflowProblem(
            file=source,
            stage=sid,
            message=f"stage '{sid}' is unreachable from the entry stage '{workflow.entry_stage}'",
            fix="route to it from another stage's next_stage_on_success/next_stage_on_failure, or remove it",
        )
        for sid in ids
        if sid not in reachable
    )
    bounded = {s.stage_id for s in workflow.stages if s.max_attempts is not None}
    for component in _strongly_connected(graph):
        is_loop = len(component) > 1 or component[0] in graph[component[0]]
        if not is_loop or bounded.intersection(component):
            continue
        members = [sid for sid in ids if sid in component]
        loop = " -> ".join([*members, members[0]])
        problems.append(
            WorkflowProblem(
                file=source,
                stage=members[-1],
                message=f"the routing loop {loop} has no max_attempts bound",
                fix=f"set max_attempts on one of its stages (e.g. 'max_attempts: 3' on '{members[-1]}')",
            )
        )
    return problems


def routing_problems(workflow: Workflow, source: str) -> list[WorkflowProblem]:
    """Problems of the routing graph and identities of a schema-valid workflow."""
    ids = list(dict.fromkeys(s.stage_id for s in workflow.stages))
    problems = _identity_problems(workflow, source)
    targets = _target_problems(workflow, source, ids)
    problems.extend(targets)
    if not targets and not problems:
        problems.extend(_graph_problems(workflow, source, ids))
    return problems


# -- the catalog ----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class WorkflowCatalog:
    """The workflows available to a workspace, by name, plus the problems of files left out."""

    workflows: Mapping[str, Workflow]
    sources: Mapping[str, str]
    problems: tuple[WorkflowProblem, ...] = field(default=())

    @classmethod
    def load(cls, dirs: Sequence[Path]) -> WorkflowCatalog:
        workflows: dict[str, Workflow] = {}
        sources: dict[str, str] = {}
        problems: list[WorkflowProblem] = []
        for directory in dirs:
            if not directory.is_dir():
                continue
            names_here: dict[str, str] = {}
            for path in sorted(p for p in directory.iterdir() if p.suffix in WORKFLOW_SUFFIXES and p.is_file()):
                try:
                    workflow = load_workflow_file(path)
                except WorkflowValidationError as exc:
                    logger.warning("workflow file %s left out: %s", path, exc.message)
                    problems.extend(exc.problems)
                    continue
                name = workflow.name
                if name in names_here:
                    problems.append(
                        WorkflowProblem(
                            file=str(path),
                            stage=None,
                            message=f"workflow name '{name}' is already defined in {names_here[name]}",
                            fix="give each workflow in a directory a unique metadata.name",
                        )
                    )
                    continue
                if name in sources:
                    logger.info("workflow %s from %s overrides %s", name, path, sources[name])
                names_here[name] = str(path)
                workflows[name] = workflow
                sources[name] = str(path)
        return cls(workflows=workflows, sources=sources, problems=tuple(problems))

    @classmethod
    def of(cls, workflows: Iterable[Workflow]) -> WorkflowCatalog:
        """A catalog from workflows already in memory (tests, embedders)."""
        items = {w.name: w for w in workflows}
        return cls(workflows=items, sources=dict.fromkeys(items, "<memory>"))

    def names(self) -> list[str]:
        return sorted(self.workflows)

    def get(self, name: str) -> Workflow:
        try:
            return self.workflows[name]
        except KeyError:
            raise WorkflowError(
                f"unknown workflow '{name}'{_closest(name, self.workflows)}; available: {', '.join(self.names())}"
            ) from None
