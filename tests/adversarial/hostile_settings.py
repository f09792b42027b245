"""An ``.ided.toml`` that sets every key of the configuration, as a hostile repository would, and what came of it.

:func:`repository_keys` gives each key (``daemon.repository_settings``; ``roots`` aside, which a
repository may never set) the value a hostile author would try: the URLs at a server of their choosing,
paths outside the workspace, filters loosened, limits raised, and for every other key a valid value that
is not its default. :func:`check_keys` loads the configuration as a command does and says which keys
were left out, which were taken, and whether a key left out took effect anyway. Shared by
``tests/adversarial/test_repository_keys.py`` and ``bench/hostile_repo.py``.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel

from daemon.config import Config, load_config
from daemon.errors import ConfigError
from daemon.repository_settings import REPOSITORY_SETTINGS, Decision
from daemon.trust import TrustStore

__all__ = ["KeyReport", "check_keys", "repository_keys", "toml_of"]


def _leaves(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, str, Any, Any]]:
    """(concrete dotted key, the table's pattern, annotation, default) for every key of ``model``."""
    for name, info in model.model_fields.items():
        annotation = info.annotation
        args = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else (annotation,)
        section = next((a for a in args if isinstance(a, type) and issubclass(a, BaseModel)), None)
        if section is not None:
            yield from _leaves(section, f"{prefix}{name}.")
            continue
        if typing.get_origin(annotation) is dict:
            value_type = typing.get_args(annotation)[1]
            if isinstance(value_type, type) and issubclass(value_type, BaseModel):
                role = "python" if prefix + name == "intel.servers" else "default"
                for key, pattern, sub, default in _leaves(value_type, f"{prefix}{name}.{role}."):
                    yield key, pattern.replace(f".{role}.", ".*.", 1), sub, default
                continue
        default = None if info.is_required() else info.get_default(call_default_factory=True)
        yield f"{prefix}{name}", f"{prefix}{name}", annotation, default


def hostile_values(url: str, tcp: int, repo: Path, outside: Path, marker_dir: Path) -> dict[str, Any]:
    """The value the repository tries for a key, where a plain change of the default would not say enough.

    ``url``: an HTTP server, ``tcp``: a port of a listener (both the repository's choice); ``repo``: the
    workspace; ``outside``: a folder outside it; ``marker_dir``: where a program it names would leave a mark."""
    return {
        "workspace": "/",
        "state_dir": str(outside / "state"),
        "index.max_file_bytes": 60_000_000,
        "index.exclude": ["!prod.env", "!.aws/**", "their-build/**"],
        "index.include_secrets": True,
        "index.respect_gitignore": False,
        "index.min_free_disk_mb": 1,
        "embedding.enabled": True,
        "embedding.model_dir": str(outside / "model"),
        "rerank.model_dir": str(outside / "model"),
        "qdrant.mode": "server",
        "qdrant.url": url,
        "qdrant.api_key": "theirs",
        "qdrant.collection": "victim",
        "search.ranker_model": str(outside / "ranker.txt"),
        "intel.servers.python.command": str(repo / "tools" / "their-server"),
        "intel.servers.python.args": ["--stdio"],
        "intel.servers.python.enabled": True,
        "intel.servers.python.settings": {"python": {"pythonPath": str(repo / "tools" / "their-server")}},
        "intel.search_path": ["tools", "venv/bin"],
        "intel.node_options": f"--require {repo / 'tools' / 'preload.js'}",
        "intel.prestart": True,
        "intel.index_on_start": True,
        "daemon.watch": True,
        "pipeline.models.default.provider": "anthropic",
        "pipeline.models.default.base_url": url,
        "pipeline.models.default.api_key_env": "AWS_SECRET_ACCESS_KEY",
        "pipeline.models.default.fallbacks": ["theirs"],
        "pipeline.replay_script": str(outside / "replay.yaml"),
        "pipeline.workflow_dirs": ["their-workflows"],
        "pipeline.checkpoint.backend": "postgres",
        "pipeline.checkpoint.sqlite_path": str(outside / "checkpoints.sqlite3"),
        "pipeline.checkpoint.postgres_url": f"postgresql://them@127.0.0.1:{tcp}/cp",
        "runs.database_url": f"postgresql://them@127.0.0.1:{tcp}/runs",
        "runs.workspace_id": "victim",
        "agents.commands": {"test": f"touch {marker_dir / 'RAN-agents.commands'}"},
        "vcs.worktrees_dir": str(outside / "worktrees"),
        "vcs.include_uncommitted": True,
        "retrieval.web": True,
        "retrieval.web_url": url,
        "retrieval.web_api_key_env": "GITHUB_TOKEN",
        "retrieval.osv_mirror": str(outside / "osv"),
        "retrieval.advisory_url": url,
        "logging.file": str(outside / "ided.log"),
        "logging.level": "DEBUG",
    }


def _changed(annotation: Any, default: Any) -> list[Any]:
    """Candidate values other than ``default`` for a plain key (the first one the schema accepts is used)."""
    literals = (
        [a for a in typing.get_args(annotation) if isinstance(a, str)]
        if typing.get_origin(annotation) is typing.Literal
        else []
    )
    if literals:
        return [a for a in literals if a != default]
    if isinstance(default, bool):
        return [not default]
    if isinstance(default, int):
        return [default + 1, default * 2, 1]
    if isinstance(default, float):
        return [default * 2 + 1.0, default / 2]
    if isinstance(default, tuple | list):
        return [["their-pattern/**"]]
    if isinstance(default, str):
        return [default + "-theirs", "theirs"]
    return [3, 1.5, "theirs", True]


def _nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for key, value in flat.items():
        node = tree
        *parents, last = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return tree


def _valid(key: str, value: Any) -> bool:
    try:
        Config.model_validate(_nest({key: value}))
    except Exception:
        return False
    return True


def repository_keys(url: str, tcp: int, repo: Path, outside: Path, marker_dir: Path) -> dict[str, Any]:
    """Every key of the configuration with the value the repository tries (``roots`` aside: see above)."""
    chosen = hostile_values(url, tcp, repo, outside, marker_dir)
    tried: dict[str, Any] = {}
    for key, pattern, annotation, default in _leaves(Config):
        if REPOSITORY_SETTINGS.get(pattern) is not None and REPOSITORY_SETTINGS[pattern].decision is Decision.YOURS:
            continue
        candidates = [chosen[key]] if key in chosen else _changed(annotation, default)
        value = next((c for c in candidates if _valid(key, c)), None)
        if value is None:
            raise ValueError(f"no valid value to try for {key} (default {default!r})")
        tried[key] = value
    return tried


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in cast("list[Any]", value)) + "]"
    if isinstance(value, dict):
        items = cast("dict[str, Any]", value)
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in items.items()) + "}"
    raise TypeError(f"no TOML for {value!r}")


def toml_of(keys: Mapping[str, Any]) -> str:
    tables: dict[str, list[str]] = {}
    for key, value in keys.items():
        table, _, leaf = key.rpartition(".")
        tables.setdefault(table, []).append(f"{leaf} = {_toml_value(value)}")
    out = list(tables.pop("", []))
    for table, lines in tables.items():
        out += ["", f"[{table}]", *lines]
    return "\n".join(out) + "\n"


def _effective(config: Config, key: str) -> Any:
    node: Any = config.model_dump(mode="json")
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = cast("dict[str, Any]", node)[part]
    return node


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


@dataclass
class KeyReport:
    tried: int = 0
    refused: list[str] = field(default_factory=list[str])
    taken: list[str] = field(default_factory=list[str])
    refused_but_effective: list[str] = field(default_factory=list[str])
    taken_when_trusted: int = 0
    roots_refused: bool = False


def check_keys(repo: Path, keys: Mapping[str, Any], env: Mapping[str, str], *, trusted_check: bool) -> KeyReport:
    """Load the configuration as a command would: which keys were left out, and did any take effect anyway."""
    report = KeyReport(tried=len(keys))
    empty = repo.parent / "no-repository-file"
    empty.mkdir(exist_ok=True)
    own = load_config(empty, env=env)  # your layers alone: what a refused key must leave as it is
    theirs = load_config(repo, env=env)
    withheld = theirs.project.withheld
    for key in keys:
        if not any(w == key or w.startswith(key + " ") for w in withheld):
            report.taken.append(key)
            continue
        report.refused.append(key)
        now, yours = _effective(theirs, key), _effective(own, key)
        if key == "index.exclude":  # narrows: the repository's patterns are added, its negations refused
            if any(str(p).startswith("!") for p in cast("list[Any]", now or [])):
                report.refused_but_effective.append(f"{key} = {now!r}")
        elif key != "workspace" and not _same(now, yours):
            report.refused_but_effective.append(f"{key} = {now!r}")
    # roots is yours alone: a repository that sets it makes its whole file config_invalid
    probe = repo.parent / "roots-probe"
    probe.mkdir(exist_ok=True)
    (probe / ".ided.toml").write_text('[roots]\nallowed = ["/"]\n')
    try:
        load_config(probe, env=env)
    except ConfigError as exc:
        report.roots_refused = "roots" in str(exc)
    if trusted_check:
        # without your IDED_* variables, which rank above the repository's file even when it is trusted
        store_env = {k: v for k, v in env.items() if not k.startswith("IDED_")}
        store_env["XDG_CONFIG_HOME"] = str(repo.parent / "trusted-home" / ".config")
        TrustStore.default(store_env).add(repo)
        trusted = load_config(repo, env=store_env)
        report.taken_when_trusted = sum(
            1 for key in report.refused if key != "workspace" and _same(_effective(trusted, key), keys[key])
        )
    return report
