"""What a run depends on in a front's configuration and environment, as a digest.

A front hands its runs to the daemon only when the daemon's ``settings_digest`` (sent in its ``hello``) is
the front's own, so a run never goes to a daemon that lacks the front's key (one an editor started before
the key was exported) or holds another model or replay script.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from daemon.config import Config

__all__ = ["settings_digest"]


def settings_digest(config: Config) -> str:
    """What a run depends on in ``config`` (pipeline, agents, runs, version control, retrieval) and in this
    process's environment (the API keys those settings name, each only as a hash), as a digest."""
    environ = os.environ
    run_sections = {
        "pipeline": config.pipeline,
        "agents": config.agents,
        "runs": config.runs,
        "vcs": config.vcs,
        "retrieval": config.retrieval,
    }
    sections: dict[str, Any] = {name: section.model_dump(mode="json") for name, section in run_sections.items()}
    sections["workspace"] = str(config.workspace_path)
    sections["state"] = str(config.state_path)
    sections["keys"] = {name: _hashed(environ.get(name)) for name in sorted(_key_variables(config))}
    return hashlib.sha256(json.dumps(sections, sort_keys=True).encode()).hexdigest()[:16]


def _key_variables(config: Config) -> set[str]:
    names = {m.api_key_env for m in config.pipeline.models.values()} | {config.retrieval.web_api_key_env}
    return {name for name in names if name}


def _hashed(value: str | None) -> str | None:
    return None if value is None else hashlib.sha256(value.encode()).hexdigest()
