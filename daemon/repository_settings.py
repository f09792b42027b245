"""Which settings a repository's own ``.ided.toml`` may set while its workspace is not trusted.

A cloned repository is content someone else wrote. As editors do it (VS Code's Workspace Trust,
whose restricted mode lets a workspace set only the settings declared safe), ided takes from an
untrusted repository's ``.ided.toml`` only the keys this table allows; every other key it sets is
left out of the merge, named in ``Config.project.withheld`` and reported (``ided status``, the first
output of a command, each front's first answer) with how to trust. Once the workspace is trusted
(``ided trust PATH``) the whole file is taken. Your own layers (user file, environment, ``--set``)
are never restricted.

Each key of the configuration has exactly one decision here (``REPOSITORY_SETTINGS``, dotted paths,
``*`` for a name such as a language id or a model role), and ``tests/unit/test_repository_settings.py``
fails when a key is added to the schema without one; a key the table does not name is refused.

- ``taken``: a repository may set it untrusted (search and chunking tuning, which local sources a
  retrieval reads, which documents are decisions);
- ``narrows``: taken only when it narrows what your own layers give (a lower size cap, a source or
  a feature turned off, exclude patterns added); otherwise refused;
- ``gated``: taken, and what it names runs only in a trusted workspace, asked for at run time
  (``agents.commands``, ``pipeline.workflow_dirs``: see ``daemon.orchestration.agents.command_trust``);
- ``refused``: left out until the workspace is trusted: anything that sends data off the machine or
  to another process, loosens a filter, runs a program (or makes a language server run one), reads
  or writes outside the workspace and its state directory, or sets a limit of your machine;
- ``yours``: never taken from a repository, trusted or not (``roots``: where ided may open
  workspaces); setting it there is a ``config_invalid`` error.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple, cast

from pydantic import BaseModel

__all__ = [
    "REPOSITORY_SETTINGS",
    "Decision",
    "Refusal",
    "RepositoryRule",
    "leaf_keys",
    "markdown_table",
    "repository_rule",
    "untrusted_layer",
]


class Decision(StrEnum):
    TAKEN = "taken"
    NARROWS = "narrows"
    GATED = "gated"
    REFUSED = "refused"
    YOURS = "yours"


Narrower = Callable[[Any, Any], bool]
"""(the repository's value, your layers' value) -> whether the repository's value narrows."""


def _at_most(value: Any, base: Any) -> bool:
    return base is not None and isinstance(value, int | float) and value <= base


def _at_least(value: Any, base: Any) -> bool:
    return isinstance(value, int | float) and (base is None or value >= base)


def _is(restrictive: bool) -> Narrower:
    return lambda value, _base: value is restrictive


class RepositoryRule(NamedTuple):
    decision: Decision
    """What an untrusted repository's value of this key gets."""
    why: str
    """One phrase, for the docs table and the report of a refused key."""
    narrows: Narrower | None = None
    """For ``narrows``: whether a value narrows your layers' one (``index.exclude`` adds patterns instead)."""


_SENDS = "sends data or queries off the machine, or to a server it names"
_RUNS = "runs a program, or makes a language server run one"
_LOOSENS = "loosens what is indexed or served"
_OUTSIDE = "reads or writes outside the workspace and its state directory"
_LIMIT = "a limit or resource of your machine"
_YOURS = "how ided runs for you"
_TUNING = "search, chunking or retrieval tuning"

T, N, G, R, Y = Decision.TAKEN, Decision.NARROWS, Decision.GATED, Decision.REFUSED, Decision.YOURS

REPOSITORY_SETTINGS: Mapping[str, RepositoryRule] = {
    "workspace": RepositoryRule(R, "set by ided itself"),
    "state_dir": RepositoryRule(R, _OUTSIDE),
    # index: what is read, and how it is cut
    "index.max_file_bytes": RepositoryRule(N, "a size cap: may only be lowered", _at_most),
    "index.exclude": RepositoryRule(N, "patterns are added to yours; a negation (!) is refused"),
    "index.include_secrets": RepositoryRule(N, "may only be false", _is(False)),
    "index.respect_gitignore": RepositoryRule(N, "may only be true", _is(True)),
    "index.text_window_lines": RepositoryRule(T, _TUNING),
    "index.max_chunk_lines": RepositoryRule(T, _TUNING),
    "index.min_free_disk_mb": RepositoryRule(N, "a disk margin: may only be raised", _at_least),
    # dense embeddings and the reranker: models are files ided loads and runs
    "embedding.enabled": RepositoryRule(N, "may only be false", _is(False)),
    "embedding.model_dir": RepositoryRule(R, _OUTSIDE + " (a model ided loads)"),
    "embedding.model_name": RepositoryRule(R, "names the model of embedding.model_dir"),
    "embedding.dim": RepositoryRule(R, "belongs to the model of embedding.model_dir"),
    "embedding.max_tokens": RepositoryRule(T, _TUNING),
    "embedding.batch_size": RepositoryRule(R, _LIMIT),
    "embedding.threads": RepositoryRule(R, _LIMIT),
    "embedding.memory_arena": RepositoryRule(R, _LIMIT),
    "rerank.model_dir": RepositoryRule(R, _OUTSIDE + " (a model ided loads)"),
    "rerank.top_n": RepositoryRule(T, _TUNING),
    "rerank.max_tokens": RepositoryRule(T, _TUNING),
    # where vectors live
    "qdrant.mode": RepositoryRule(R, "chooses where the index is stored"),
    "qdrant.url": RepositoryRule(R, _SENDS),
    "qdrant.api_key": RepositoryRule(R, _SENDS),
    "qdrant.collection_prefix": RepositoryRule(R, "chooses which index a shared server serves"),
    "qdrant.collection": RepositoryRule(R, "chooses which index a shared server serves"),
    "search.default_k": RepositoryRule(T, _TUNING),
    "search.prefetch": RepositoryRule(T, _TUNING),
    "search.ranker": RepositoryRule(T, _TUNING),
    "search.ranker_model": RepositoryRule(R, _OUTSIDE + " (a model ided loads)"),
    # language servers
    "intel.servers.*.command": RepositoryRule(R, _RUNS),
    "intel.servers.*.args": RepositoryRule(R, _RUNS),
    "intel.servers.*.enabled": RepositoryRule(N, "may only be false", _is(False)),
    "intel.servers.*.settings": RepositoryRule(R, _RUNS + " (a server setting can name an interpreter or a command)"),
    "intel.search_path": RepositoryRule(R, _RUNS),
    "intel.node_options": RepositoryRule(R, _RUNS + " (NODE_OPTIONS can load a script)"),
    "intel.request_timeout_seconds": RepositoryRule(R, _LIMIT),
    "intel.start_timeout_seconds": RepositoryRule(R, _LIMIT),
    "intel.ready_wait_seconds": RepositoryRule(R, _LIMIT),
    "intel.max_restarts": RepositoryRule(R, _LIMIT),
    "intel.crash_window_seconds": RepositoryRule(R, _LIMIT),
    "intel.max_open_documents": RepositoryRule(R, _LIMIT),
    "intel.prestart": RepositoryRule(N, "may only be false", _is(False)),
    "intel.index_on_start": RepositoryRule(N, "may only be false", _is(False)),
    "intel.diagnostics_wait_seconds": RepositoryRule(R, _LIMIT),
    "intel.syntax_timeout_seconds": RepositoryRule(R, _LIMIT),
    "intel.syntax_max_depth": RepositoryRule(R, _LIMIT),
    # the daemon process
    "daemon.idle_shutdown_seconds": RepositoryRule(R, _YOURS),
    "daemon.idle_shutdown_no_editor_seconds": RepositoryRule(R, _YOURS),
    "daemon.watch": RepositoryRule(N, "may only be false", _is(False)),
    "daemon.debounce_ms": RepositoryRule(T, _TUNING),
    "daemon.batch_threshold": RepositoryRule(T, _TUNING),
    "daemon.start_timeout_seconds": RepositoryRule(R, _YOURS),
    # workflow runs: models are endpoints and keys; a replay script answers for them
    "pipeline.models.*.provider": RepositoryRule(R, _SENDS),
    "pipeline.models.*.model": RepositoryRule(R, _SENDS),
    "pipeline.models.*.base_url": RepositoryRule(R, _SENDS),
    "pipeline.models.*.api_key_env": RepositoryRule(R, _SENDS + " (names the variable whose key is sent)"),
    "pipeline.models.*.timeout_seconds": RepositoryRule(R, _LIMIT),
    "pipeline.models.*.temperature": RepositoryRule(R, "a setting of your model"),
    "pipeline.models.*.max_tokens": RepositoryRule(R, _LIMIT),
    "pipeline.models.*.fallbacks": RepositoryRule(R, _SENDS),
    "pipeline.replay_script": RepositoryRule(R, "answers for your models from a file it names"),
    "pipeline.selection_retries": RepositoryRule(R, _LIMIT),
    "pipeline.max_iterations": RepositoryRule(R, _LIMIT),
    "pipeline.stage_timeout_seconds": RepositoryRule(R, _LIMIT),
    "pipeline.workflow_dirs": RepositoryRule(G, "its workflows' commands run only once trusted"),
    "pipeline.resilience.cache": RepositoryRule(R, _YOURS),
    "pipeline.resilience.cache_max_entries": RepositoryRule(R, _LIMIT),
    "pipeline.resilience.max_concurrency_per_provider": RepositoryRule(R, _LIMIT),
    "pipeline.resilience.max_retries": RepositoryRule(R, _LIMIT),
    "pipeline.resilience.backoff_initial_seconds": RepositoryRule(R, _LIMIT),
    "pipeline.resilience.backoff_max_seconds": RepositoryRule(R, _LIMIT),
    "pipeline.resilience.breaker_failure_threshold": RepositoryRule(R, _LIMIT),
    "pipeline.resilience.breaker_reset_seconds": RepositoryRule(R, _LIMIT),
    "pipeline.checkpoint.backend": RepositoryRule(R, _SENDS),
    "pipeline.checkpoint.sqlite_path": RepositoryRule(R, _OUTSIDE),
    "pipeline.checkpoint.postgres_url": RepositoryRule(R, _SENDS),
    "pipeline.warm_start": RepositoryRule(R, _YOURS),
    "runs.database_url": RepositoryRule(R, _SENDS),
    "runs.workspace_id": RepositoryRule(R, "chooses whose runs a shared run store lists"),
    "runs.connect_timeout_seconds": RepositoryRule(R, _LIMIT),
    "agents.commands": RepositoryRule(G, "its commands run only once trusted"),
    "agents.command_timeout_seconds": RepositoryRule(R, _LIMIT),
    "agents.output_cap_bytes": RepositoryRule(R, _LIMIT),
    "agents.max_tool_steps": RepositoryRule(R, _LIMIT),
    "vcs.retention_days": RepositoryRule(R, "decides when your run branches are deleted"),
    "vcs.worktrees_dir": RepositoryRule(R, _OUTSIDE),
    "vcs.include_uncommitted": RepositoryRule(R, "puts your uncommitted changes on run branches"),
    "vcs.spare_worktree": RepositoryRule(R, _YOURS + " (a spare checkout uses your disk)"),
    # retrieval: local sources and thresholds are tuning; the web and advisory servers are not
    "retrieval.code": RepositoryRule(T, _TUNING),
    "retrieval.docs": RepositoryRule(T, _TUNING),
    "retrieval.lsp": RepositoryRule(T, _TUNING),
    "retrieval.decisions": RepositoryRule(T, _TUNING),
    "retrieval.web": RepositoryRule(N, "may only be false", _is(False)),
    "retrieval.libraries": RepositoryRule(T, _TUNING),
    "retrieval.advisories": RepositoryRule(T, _TUNING),
    "retrieval.web_provider": RepositoryRule(R, _SENDS),
    "retrieval.web_url": RepositoryRule(R, _SENDS),
    "retrieval.web_api_key_env": RepositoryRule(R, _SENDS + " (names the variable whose key is sent)"),
    "retrieval.osv_mirror": RepositoryRule(R, _OUTSIDE),
    "retrieval.advisory_url": RepositoryRule(R, _SENDS),
    "retrieval.code_threshold": RepositoryRule(T, _TUNING),
    "retrieval.docs_threshold": RepositoryRule(T, _TUNING),
    "retrieval.outline_threshold": RepositoryRule(T, _TUNING),
    "retrieval.min_similarity": RepositoryRule(T, _TUNING),
    "retrieval.near_duplicate_cosine": RepositoryRule(T, _TUNING),
    "retrieval.source_timeout_seconds": RepositoryRule(R, _LIMIT),
    "retrieval.upfront_budget_seconds": RepositoryRule(R, _LIMIT),
    "retrieval.parallel_searches": RepositoryRule(R, _LIMIT),
    "retrieval.http_timeout_seconds": RepositoryRule(R, _LIMIT),
    "retrieval.k_per_query": RepositoryRule(T, _TUNING),
    "retrieval.focus_pool": RepositoryRule(T, _TUNING),
    "retrieval.max_queries": RepositoryRule(T, _TUNING),
    "retrieval.decision_globs": RepositoryRule(T, _TUNING),
    "retrieval.breaker_failure_threshold": RepositoryRule(R, _LIMIT),
    "retrieval.breaker_reset_seconds": RepositoryRule(R, _LIMIT),
    "acp.attach_daemon": RepositoryRule(R, _YOURS),
    "acp.cancel_grace_seconds": RepositoryRule(R, _YOURS),
    "roots.allowed": RepositoryRule(Y, "where ided may open workspaces"),
    "logging.level": RepositoryRule(R, _YOURS),
    "logging.file": RepositoryRule(R, _OUTSIDE + " (appends ided's log to a file it names)"),
}
"""Every key's decision (see the module docstring)."""

_UNDECIDED = RepositoryRule(R, "no decision recorded for this key")


def repository_rule(pattern: str) -> RepositoryRule:
    """The rule of a key (dotted, ``*`` for names); a key without one is refused."""
    return REPOSITORY_SETTINGS.get(pattern, _UNDECIDED)


@dataclass(frozen=True, slots=True)
class Refusal:
    """One key of the repository's file left out: its dotted path (names filled in) and why."""

    key: str
    why: str


# -- walking the schema ----------------------------------------------------------------------------


def _section(annotation: Any) -> type[BaseModel] | None:
    """The model of a section field (``X`` or ``X | None``)."""
    candidates = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else (annotation,)
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _named_sections(annotation: Any) -> type[BaseModel] | None:
    """The model of a ``dict[str, Model]`` field (one section per name: ``intel.servers.<lang>``)."""
    if typing.get_origin(annotation) is dict:
        args = typing.get_args(annotation)
        return _section(args[1]) if len(args) == 2 else None
    return None


def leaf_keys(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    """Every key of ``model`` as the table names it: ``index.max_file_bytes``, ``intel.servers.*.command``.

    A free-form table (``agents.commands``, ``intel.servers.*.settings``) is one key."""
    for name, field in model.model_fields.items():
        if (section := _section(field.annotation)) is not None:
            yield from leaf_keys(section, f"{prefix}{name}.")
        elif (named := _named_sections(field.annotation)) is not None:
            yield from leaf_keys(named, f"{prefix}{name}.*.")
        else:
            yield f"{prefix}{name}"


def _base_at(base: Mapping[str, Any] | None, key: str) -> Any:
    return None if base is None else base.get(key)


def untrusted_layer(
    layer: Mapping[str, Any], base: Mapping[str, Any], model: type[BaseModel]
) -> tuple[dict[str, Any], list[Refusal]]:
    """The part of an untrusted repository's ``layer`` ided takes, and each key it leaves out.

    ``base``: the configuration your own layers below the repository's give (defaults and your file),
    dumped to plain values: what a ``narrows`` key is compared with. ``layer`` has been validated
    against ``model`` already. ``yours`` keys are not looked at here (the loader refuses them first).
    """
    refused: list[Refusal] = []
    kept = _filter(layer, base, model, "", "", refused)
    return kept, refused


def _filter(
    layer: Mapping[str, Any],
    base: Mapping[str, Any] | None,
    model: type[BaseModel],
    concrete: str,
    pattern: str,
    refused: list[Refusal],
) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key, value in layer.items():
        field = model.model_fields.get(key)
        here, shape = f"{concrete}{key}", f"{pattern}{key}"
        base_value = _base_at(base, key)
        if field is not None and (section := _section(field.annotation)) is not None and isinstance(value, Mapping):
            sub = _filter(
                cast("Mapping[str, Any]", value),
                cast("Mapping[str, Any] | None", base_value) if isinstance(base_value, Mapping) else None,
                section,
                here + ".",
                shape + ".",
                refused,
            )
            if sub:
                kept[key] = sub
            continue
        if (
            field is not None
            and (named := _named_sections(field.annotation)) is not None
            and isinstance(value, Mapping)
        ):
            entries: dict[str, Any] = {}
            for name, entry in cast("Mapping[str, Any]", value).items():
                entry_base: object = (
                    cast("Mapping[str, Any]", base_value).get(name) if isinstance(base_value, Mapping) else None
                )
                if not isinstance(entry, Mapping):
                    refused.append(Refusal(f"{here}.{name}", repository_rule(f"{shape}.*").why))
                    continue
                sub = _filter(
                    cast("Mapping[str, Any]", entry),
                    cast("Mapping[str, Any] | None", entry_base) if isinstance(entry_base, Mapping) else None,
                    named,
                    f"{here}.{name}.",
                    f"{shape}.*.",
                    refused,
                )
                if sub:
                    entries[name] = sub
            if entries:
                kept[key] = entries
            continue
        taken = _leaf(here, shape, value, base_value, refused)
        if taken is not _DROP:
            kept[key] = taken
    return kept


_DROP = object()


def _leaf(key: str, pattern: str, value: Any, base: Any, refused: list[Refusal]) -> Any:
    rule = repository_rule(pattern)
    if rule.decision in (Decision.TAKEN, Decision.GATED):
        return value
    if rule.decision is Decision.NARROWS:
        if pattern == "index.exclude":
            return _added_patterns(key, value, base, rule, refused)
        if rule.narrows is not None and rule.narrows(value, base):
            return value
    refused.append(Refusal(key, rule.why))
    return _DROP


def _added_patterns(key: str, value: Any, base: Any, rule: RepositoryRule, refused: list[Refusal]) -> Any:
    """Your exclude patterns plus the repository's, without its negations (which would re-include a file)."""
    own = [str(p) for p in cast("list[Any]", base)] if isinstance(base, list | tuple) else []
    theirs = [str(p) for p in cast("list[Any]", value)] if isinstance(value, list | tuple) else []
    negations = [p for p in theirs if p.lstrip().startswith("!")]
    if negations:
        refused.append(Refusal(f"{key} ({', '.join(negations)})", rule.why))
    return [*own, *(p for p in theirs if p not in own and p not in negations)]


def markdown_table() -> str:
    """The table as docs/configuration.md shows it (``tests/unit/test_repository_settings.py`` compares)."""
    rows = ["| key | untrusted repository | why |", "|---|---|---|"]
    rows += [f"| `{key}` | {rule.decision.value} | {rule.why} |" for key, rule in REPOSITORY_SETTINGS.items()]
    return "\n".join(rows)
