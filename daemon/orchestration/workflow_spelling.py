"""The specification's spelling of workflow files, normalised into ided's one internal model at load time.

The design specification writes its workflow files differently from ided's own spelling; both are
accepted, key by key, so a file may mix them. ``normalise`` turns a parsed YAML document into the
internal shape (``workflow_schema.Workflow``) and says, for every field it touched, what ided made of
it (``WorkflowNote``, shown in the plan output) or why the field is only recorded:

- ``stage_id: 1`` -> the stage's ``name`` as its id (``code_generation``); integer routing targets
  (``next_stage_on_success: 2``) follow the numbers; ``routing.max_attempts`` -> ``max_attempts``;
- a missing stage ``type`` is inferred from the stage's name (``lint_and_format``, ``security_review``);
- ``parallel_agents: [{agent: code_agent, mcp_tools: [lsp_get_signature]}]`` -> ``agent_id`` and
  ided's tool names (``get_signature``; ``tree_sitter_get_ast`` -> ``get_ast_node``); ``mcp_tools: {}``
  -> no tools, as an agent without ``mcp_tools`` gets;
- ``failure_criteria: {agent_defined: true}`` -> the agents judge failure themselves (no criteria);
- ``workflow_type: code_implementation | text_analysis`` -> ``code | document``;
- ``selection_criteria.agents_required/agents_optional`` -> ``agents``;
- ``retrieval_strategy_config``: ``enabled: false`` switches every retrieval off; ``ast_parsing`` and
  ``lsp_integration`` objects -> their ``enabled``; ``rag_strategy.sources`` by the specification's
  names (``codebase_semantic_search`` -> the code index, ``decision_log_search`` -> the decision log,
  ...), ``priority: HIGH|MEDIUM|LOW`` -> 1|2|3; workflow-wide ``retrieval_hints`` with a
  ``token_budget`` per stage -> a hint per stage.

Fields with no counterpart (``strategy_name``, ``pattern_applied``, ``chunk_strategy``, ``indexing`` ...)
are accepted and recorded as informational with the reason. Anything else unknown inside the
specification's objects, and numbers that name no stage, are problems (``SpellingProblem``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

from daemon.core.workflow_schema import StageType, WorkflowNote

__all__ = ["Normalised", "SpellingProblem", "normalise"]


_WORKFLOW_TYPES = {
    "code_implementation": "code",
    "code_domain": "code",
    "text_analysis": "document",
    "document_domain": "document",
    "documents": "document",
}
_PRIORITIES = {"HIGH": 1, "MEDIUM": 2, "LOW": 3}
_TOOLS = {"tree_sitter_get_ast": "get_ast_node", "tree_sitter_get_ast_node": "get_ast_node"}
_DEFAULT_BUDGET = 4000

# the specification's rag source names -> an ided rag source (index scope or decision log), or why none
_INDEX_SOURCES: dict[str, dict[str, object]] = {
    "codebase_semantic_search": {"name": "code", "kind": "code"},
    "document_semantic_search": {"name": "docs", "kind": "docs"},
    "doc_retrieval": {"name": "docs", "kind": "docs"},
    "specification_search": {
        "name": "specification",
        "kind": "docs",
        "paths": ["**/spec*/**", "**/*spec*", "**/*requirement*"],
    },
    "decision_log_search": {"name": "decision_log", "kind": "docs"},
}
_INDEX_MEANINGS = {
    "codebase_semantic_search": "the workspace index's code (hybrid BM25 + dense search over function-level chunks)",
    "document_semantic_search": "the workspace index's documents (section-level chunks)",
    "doc_retrieval": "the workspace index's documents; the API and docs of the dependencies a query names come "
    "from the libraries source (switched on by [retrieval] libraries)",
    "specification_search": "the workspace index's documents under spec/requirement paths",
    "decision_log_search": "the decision log: the workspace's ADR files and earlier runs' decisions",
}
_OTHER_SOURCES = {
    "lsp_tools": "language-server facts come with lsp_integration; agents call the tools during their work",
}
_SWITCHED_SOURCES = {
    "web_search": ("web", "the web source (switched on by [retrieval] web and web_url)"),
    "cve_database": (
        "advisories",
        "the advisory (CVE) source over the local OSV mirror ([retrieval] osv_mirror): the stages it serves get "
        "the audit of the workspace's locked dependencies",
    ),
}
_SOURCE_FIELDS = {"name", "priority", "kind", "paths", "trigger_stages"}
_INFO_SOURCE_FIELDS = {
    "indexing": "ided's index chunks code by function and documents by section whatever this says",
    "execution_timing": "language-server tools are called on demand by the agents",
    "strategy": "recorded; the source's behaviour is fixed",
}

# stage names -> stage types, first match wins
_TYPE_WORDS: tuple[tuple[str, StageType], ...] = (
    (r"lint|format|style", StageType.LINT_AND_FORMAT),
    (r"test.*(generat|writ).*(execut|run)|test_?cycle", StageType.TESTING),
    (r"test.*(generat|writ)", StageType.TEST_WRITING),
    (r"test", StageType.TEST_EXECUTION),
    (r"secur|audit|vulnerab", StageType.REVIEW),
    (r"review", StageType.REVIEW),
    (r"document|docs|readme|changelog|record", StageType.DOCUMENTATION),
    (r"implement|code|generat|refactor|fix|feature", StageType.IMPLEMENTATION),
    (r"analy|plan|requirement", StageType.ANALYSIS),
    (r"research|gather|survey", StageType.RESEARCH),
    (r"decision|decide", StageType.DECISION),
    (r"report|summar", StageType.REPORT),
)


@dataclass(frozen=True, kw_only=True)
class SpellingProblem:
    """A field in the specification's spelling that cannot be normalised."""

    stage: str | None
    message: str
    fix: str


@dataclass(kw_only=True)
class Normalised:
    """The document in ided's spelling, what was done to it, and what could not be done."""

    data: dict[str, object]
    notes: list[WorkflowNote] = field(default_factory=list[WorkflowNote])
    problems: list[SpellingProblem] = field(default_factory=list[SpellingProblem])


def _shown(value: object) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= 80 else text[:77] + "..."


def _as_map(value: object) -> dict[str, object] | None:
    return cast("dict[str, object]", value) if isinstance(value, dict) else None


def _map_copy(value: object) -> dict[str, object] | None:
    """A copy of ``value`` to rewrite when it is a mapping, else None."""
    found = _as_map(value)
    return dict(found) if found is not None else None


def _as_list(value: object) -> list[object] | None:
    return cast("list[object]", value) if isinstance(value, list) else None


class _Normaliser:
    def __init__(self, raw: Mapping[str, object]) -> None:
        self.out = Normalised(data=dict(raw))
        self.numbers: dict[str, str] = {}

    def note(self, where: str, value: object, meaning: str, *, informational: bool = False) -> None:
        self.out.notes.append(
            WorkflowNote(field=where, value=_shown(value), meaning=meaning, informational=informational)
        )

    def problem(self, stage: str | None, message: str, fix: str) -> None:
        self.out.problems.append(SpellingProblem(stage=stage, message=message, fix=fix))

    # -- metadata -----------------------------------------------------------------------------------

    def metadata(self) -> None:
        meta = _as_map(self.out.data.get("metadata"))
        if meta is None:
            return
        meta = dict(meta)
        kind = meta.get("workflow_type")
        if isinstance(kind, str) and kind in _WORKFLOW_TYPES:
            meta["workflow_type"] = _WORKFLOW_TYPES[kind]
            what = "AST and language servers apply" if _WORKFLOW_TYPES[kind] == "code" else "no static analysis"
            self.note("metadata.workflow_type", kind, f"{_WORKFLOW_TYPES[kind]} ({what})")
        criteria = _as_map(meta.get("selection_criteria"))
        if criteria is not None and ("agents_required" in criteria or "agents_optional" in criteria):
            criteria = dict(criteria)
            agents = [str(a) for a in _as_list(criteria.get("agents")) or []]
            for key in ("agents_required", "agents_optional"):
                listed = criteria.pop(key, None)
                if listed is None:
                    continue
                names = _as_list(listed)
                if names is None:
                    self.problem(None, f"metadata.selection_criteria.{key} is not a list", "write a list of agent ids")
                    continue
                agents.extend(str(a) for a in names if str(a) not in agents)
                self.note(
                    f"metadata.selection_criteria.{key}",
                    names,
                    "recorded as selection_criteria.agents; the agents that run are the stages' parallel_agents "
                    "(optional stages are decided per request)",
                    informational=True,
                )
            criteria["agents"] = agents
            meta["selection_criteria"] = criteria
        self.out.data["metadata"] = meta

    # -- stages -------------------------------------------------------------------------------------

    def stage_ids(self, stages: list[object]) -> None:
        """Number -> id for stages with integer ids (the id becomes the stage's name)."""
        for index, entry in enumerate(stages):
            stage = _as_map(entry)
            if stage is None:
                continue
            sid = stage.get("stage_id")
            if isinstance(sid, bool) or not isinstance(sid, int):
                continue
            name = stage.get("name")
            slug = re.sub(r"[^a-z0-9]+", "_", str(name).lower()).strip("_") if isinstance(name, str) else ""
            if not slug or not slug[0].isalpha():
                slug = f"stage_{sid}"
            if str(sid) in self.numbers:
                self.problem(f"stages[{index}]", f"stage number {sid} is used twice", "number the stages uniquely")
            self.numbers[str(sid)] = slug

    def target(self, stage: str, key: str, value: object) -> object:
        if isinstance(value, bool) or not isinstance(value, int | str):
            return value
        text = str(value)
        if not text.isdigit():
            return value
        if text in self.numbers:
            return self.numbers[text]
        known = ", ".join(f"{n} ({sid})" for n, sid in self.numbers.items()) or "none"
        self.problem(stage, f"routing.{key} {value} is no stage number", f"use one of: {known}, DONE or ABORT")
        return value

    def stage(self, index: int, entry: object) -> object:
        stage = _map_copy(entry)
        if stage is None:
            return entry
        sid = stage.get("stage_id")
        if isinstance(sid, int) and not isinstance(sid, bool) and str(sid) in self.numbers:
            stage["stage_id"] = self.numbers[str(sid)]
            self.note(f"stages[{index}].stage_id", sid, f"stage id '{self.numbers[str(sid)]}' (the stage's name)")
        label = str(stage.get("stage_id", f"stages[{index}]"))
        if "type" not in stage:
            inferred = _infer_type(label, str(stage.get("name", "")))
            stage["type"] = inferred.value
            self.note(
                f"stages.{label}.type",
                "(absent)",
                f"{inferred.value}, inferred from the stage's name (write 'type:' to choose)",
            )
        agents = _as_list(stage.get("parallel_agents"))
        if agents is not None:
            stage["parallel_agents"] = [self.agent(label, a) for a in agents]
        routing = _as_map(stage.get("routing"))
        if routing is not None:
            routing = dict(routing)
            for key in ("next_stage_on_success", "next_stage_on_failure", "retry_stage"):
                if key in routing:
                    routing[key] = self.target(label, key, routing[key])
            if "max_attempts" in routing:
                limit = routing.pop("max_attempts")
                if "max_attempts" in stage and stage["max_attempts"] != limit:
                    self.problem(
                        label,
                        f"max_attempts is {stage['max_attempts']!r} and routing.max_attempts {limit!r}",
                        "write it once",
                    )
                stage["max_attempts"] = limit
                self.note(f"stages.{label}.routing.max_attempts", limit, "the stage's max_attempts (runs per run)")
            stage["routing"] = routing
        criteria = _as_map(stage.get("failure_criteria"))
        if criteria is not None:
            stage["failure_criteria"] = self.failure_criteria(label, criteria)
        return stage

    def agent(self, stage: str, entry: object) -> object:
        agent = _map_copy(entry)
        if agent is None:
            return entry
        if "agent" in agent:
            name = agent.pop("agent")
            if "agent_id" in agent:
                self.problem(stage, f"agent {name!r} has both 'agent' and 'agent_id'", "keep one of them")
            else:
                agent["agent_id"] = name
        if agent.get("mcp_tools") == {}:
            agent["mcp_tools"] = []  # the specification's "no tools"
        tools = _as_list(agent.get("mcp_tools"))
        if tools is not None:
            mapped = [_tool_name(str(t)) for t in tools]
            renamed = {str(t): m for t, m in zip(tools, mapped, strict=True) if str(t) != m}
            if renamed:
                self.note(
                    f"stages.{stage}.parallel_agents.{agent.get('agent_id')}.mcp_tools",
                    list(renamed),
                    "ided's tool names: " + ", ".join(f"{a} -> {b}" for a, b in renamed.items()),
                )
            agent["mcp_tools"] = mapped
        return agent

    def failure_criteria(self, stage: str, criteria: dict[str, object]) -> object:
        extra = sorted(set(criteria) - {"agent_defined"})
        if extra or criteria.get("agent_defined") is not True:
            self.problem(
                stage,
                f"failure_criteria {_shown(criteria)} is not understood",
                "write 'failure_criteria: {agent_defined: true}' or a list of criteria",
            )
            return criteria
        self.note(
            f"stages.{stage}.failure_criteria.agent_defined",
            True,
            "the stage's agents judge failure themselves (no written criteria)",
        )
        return []

    # -- retrieval ------------------------------------------------------------------------------------

    def strategy(self, stages: list[dict[str, object]]) -> None:
        config = _map_copy(self.out.data.get("retrieval_strategy_config"))
        if config is None:
            return
        prefix = "retrieval_strategy_config"
        for key, why in (
            (
                "strategy_name",
                "a label; ided derives the strategy from workflow_type, ast_parsing, lsp_integration and rag_strategy",
            ),
            ("pattern_applied", "ided always hands the workflow's strategy to the retrieval agent unchanged (TART)"),
        ):
            if key in config:
                self.note(f"{prefix}.{key}", config.pop(key), why, informational=True)
        enabled = config.pop("enabled", None)
        for key in ("ast_parsing", "lsp_integration"):
            block = _as_map(config.get(key))
            if block is not None:
                config[key] = self.switch(f"{prefix}.{key}", block)
        rag = _as_map(config.get("rag_strategy"))
        if rag is not None:
            config["rag_strategy"] = self.rag(f"{prefix}.rag_strategy", dict(rag))
        hints = _as_map(config.get("retrieval_hints"))
        if hints is not None and _workflow_wide(hints):
            budget = config.get("default_token_budget", _DEFAULT_BUDGET)
            config["retrieval_hints"] = self.hints(f"{prefix}.retrieval_hints", hints, stages, budget)
        if enabled is not None:
            if not isinstance(enabled, bool):
                self.problem(None, f"{prefix}.enabled {enabled!r} is not true or false", "write true or false")
            elif enabled:
                self.note(f"{prefix}.enabled", True, "retrieval runs (ided's default)")
            else:
                config["ast_parsing"] = False
                config["lsp_integration"] = False
                config["rag_strategy"] = {**(_as_map(config.get("rag_strategy")) or {}), "enabled": False}
                config["adaptive_retrieval"] = {**(_as_map(config.get("adaptive_retrieval")) or {}), "enabled": False}
                self.note(
                    f"{prefix}.enabled",
                    False,
                    "no retrieval: ast_parsing, lsp_integration, rag_strategy and adaptive_retrieval are off",
                )
        self.out.data["retrieval_strategy_config"] = config

    def switch(self, where: str, block: dict[str, object]) -> object:
        """``{enabled, model, index_level, upfront_execution, execution, tools, reason}`` -> its ``enabled``."""
        enabled = block.get("enabled", True)
        if not isinstance(enabled, bool):
            self.problem(None, f"{where}.enabled {enabled!r} is not true or false", "write true or false")
            return block
        self.note(f"{where}.enabled", enabled, f"{where.rsplit('.', 1)[-1]}: {str(enabled).lower()}")
        known = {
            "reason": "shown here; recorded only",
            "index_level": "ided's index chunks code at function level whatever this says",
            "upfront_execution": "the index (and its function-level AST chunks) is built before runs, by the "
            "daemon or the first search",
            "tools": "recorded; each agent's mcp_tools choose the language-server tools it is offered",
        }
        for key, value in block.items():
            if key == "enabled":
                continue
            if key == "model":
                if value != "tree_sitter":
                    self.problem(None, f"{where}.model {value!r} is not supported", "ided parses with tree_sitter")
                else:
                    self.note(f"{where}.model", value, "ided parses code with tree-sitter")
            elif key == "execution":
                if value != "on_demand":
                    self.problem(None, f"{where}.execution {value!r} is not supported", "write on_demand")
                else:
                    self.note(f"{where}.execution", value, "agents call the language-server tools on demand")
            elif key in known:
                self.note(f"{where}.{key}", value, known[key], informational=True)
            else:
                self.problem(
                    None, f"unknown key '{where}.{key}'", f"remove it (keys: enabled, model, {', '.join(known)})"
                )
        return enabled

    def rag(self, where: str, rag: dict[str, object]) -> dict[str, object]:
        if "chunk_strategy" in rag:
            self.note(
                f"{where}.chunk_strategy",
                rag.pop("chunk_strategy"),
                "ided's index chunks code by function and documents by section whatever this says",
                informational=True,
            )
        sources = _as_list(rag.get("sources"))
        if sources is None:
            return rag
        out: list[object] = []
        for index, entry in enumerate(sources):
            source = _as_map(entry)
            if source is None:
                out.append(entry)
                continue
            mapped = self.source(f"{where}.sources[{index}]", dict(source))
            if mapped is None:
                continue
            twin = next(
                (o for o in out if _as_map(o) is not None and _same_scope(cast("dict[str, object]", o), mapped)), None
            )
            if twin is None:
                out.append(mapped)
            else:
                first = cast("dict[str, object]", twin)
                first["priority"] = min(cast("int", first.get("priority", 1)), cast("int", mapped.get("priority", 1)))
        rag["sources"] = out
        return rag

    def source(self, where: str, source: dict[str, object]) -> dict[str, object] | None:
        name = str(source.get("name", ""))
        priority = source.get("priority")
        if isinstance(priority, str):
            level = priority.split("_", 1)[0].upper()
            if level in _PRIORITIES:
                source["priority"] = _PRIORITIES[level]
                self.note(f"{where}.priority", priority, f"priority {_PRIORITIES[level]} (HIGH 1, MEDIUM 2, LOW 3)")
            else:
                self.problem(None, f"{where}.priority {priority!r} is not a priority", "write HIGH, MEDIUM, LOW or 1..")
        for key in sorted(set(source) - _SOURCE_FIELDS):
            if key in _INFO_SOURCE_FIELDS:
                self.note(f"{where}.{key}", source.pop(key), _INFO_SOURCE_FIELDS[key], informational=True)
        if name in _OTHER_SOURCES:
            self.note(f"{where}.name", name, _OTHER_SOURCES[name], informational=True)
            return None
        triggers = _as_list(source.get("trigger_stages"))
        if triggers is not None:
            source["trigger_stages"] = [self.numbers.get(str(t), t) for t in triggers]
            self.note(f"{where}.trigger_stages", triggers, "the source serves only the retrieval for these stages")
        if name in _SWITCHED_SOURCES:
            source["name"], meaning = _SWITCHED_SOURCES[name]
            self.note(f"{where}.name", name, meaning)
        if name in _INDEX_SOURCES:
            source = {**source, **_INDEX_SOURCES[name]}
            self.note(f"{where}.name", name, _INDEX_MEANINGS[name])
        return source

    def hints(
        self, where: str, hints: dict[str, object], stages: list[dict[str, object]], default: object
    ) -> dict[str, object]:
        """Workflow-wide ``focus_on``/``avoid`` and a ``token_budget`` per stage -> one hint per stage."""
        focus = [str(f).replace("_", " ") for f in _as_list(hints.get("focus_on")) or []]
        avoid = [str(a).replace("_", " ") for a in _as_list(hints.get("avoid")) or []]
        raw_budget = hints.get("token_budget")
        budgets = _as_map(raw_budget) or {}
        per_stage: dict[str, object] = {}
        used: set[str] = set()
        for stage in stages:
            sid, kind = str(stage.get("stage_id")), str(stage.get("type"))
            if isinstance(raw_budget, int):
                budget: object = raw_budget
            else:
                keys = [k for k in budgets if k == sid] or [k for k in budgets if k == kind or _names(k, sid)]
                used.update(keys)
                budget = budgets[keys[0]] if keys else default
            per_stage[sid] = {"focus_on": focus, "avoid": avoid, "token_budget": budget}
        for key in sorted(set(hints) - {"focus_on", "avoid", "token_budget"}):
            self.problem(None, f"unknown key '{where}.{key}'", "use focus_on, avoid and token_budget")
        if focus or avoid:
            self.note(where, "focus_on/avoid", "every stage's focus_on and avoid (underscores read as spaces)")
        for key, value in budgets.items():
            if key in used:
                self.note(f"{where}.token_budget.{key}", value, "the token budget of the stage(s) it names")
            else:
                ids = ", ".join(str(s.get("stage_id")) for s in stages)
                self.note(
                    f"{where}.token_budget.{key}",
                    value,
                    f"names no stage (stages: {ids}); not used",
                    informational=True,
                )
        return per_stage

    # -- the whole document ---------------------------------------------------------------------------

    def run(self) -> Normalised:
        self.metadata()
        stages = _as_list(self.out.data.get("stages"))
        if stages is not None:
            self.stage_ids(stages)
            normalised = [self.stage(i, s) for i, s in enumerate(stages)]
            self.out.data["stages"] = normalised
            plain = [cast("dict[str, object]", s) for s in normalised if isinstance(s, dict)]
        else:
            plain = []
        self.strategy(plain)
        return self.out


def _workflow_wide(hints: Mapping[str, object]) -> bool:
    """The specification's hints: focus_on/avoid lists and a budget (or budget per stage) at the top level,
    where ided's own spelling has one mapping per stage id."""
    if isinstance(hints.get("focus_on"), list) or isinstance(hints.get("avoid"), list):
        return True
    budget = hints.get("token_budget")
    if isinstance(budget, int) and not isinstance(budget, bool):
        return True
    budgets = _as_map(budget)
    return budgets is not None and all(isinstance(v, int) for v in budgets.values())


def _names(key: str, stage_id: str) -> bool:
    """Whether a budget key names the stage: each of its words begins a word of the id (test_gen, analysis)."""
    words = stage_id.split("_")
    return all(any(w.startswith(part) for w in words) for part in key.lower().split("_") if part)


def _same_scope(a: Mapping[str, object], b: Mapping[str, object]) -> bool:
    return a.get("name") == b.get("name") and a.get("kind") == b.get("kind") and a.get("paths") == b.get("paths")


def _tool_name(name: str) -> str:
    if name in _TOOLS:
        return _TOOLS[name]
    for prefix in ("lsp_", "lsp.", "tree_sitter.", "tree_sitter_"):
        if name.startswith(prefix):
            return _TOOLS.get(name.replace(".", "_"), name[len(prefix) :])
    return name


def _infer_type(stage_id: str, name: str) -> StageType:
    text = f"{stage_id} {name}".lower()
    for pattern, kind in _TYPE_WORDS:
        if re.search(pattern, text):
            return kind
    return StageType.ANALYSIS


def normalise(raw: Mapping[str, object]) -> Normalised:
    """``raw`` in ided's spelling, with the notes and problems of what was normalised (see the module docstring)."""
    return _Normaliser(raw).run()
