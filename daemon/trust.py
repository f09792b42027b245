"""Workspace trust: the folders whose own commands the user allows ided to run.

A repository can name commands for agents (``[agents.commands]`` in its ``.ided.toml``, ``commands:``
in a workflow file under the workspace). Those run only in a workspace the user trusts, as editors
do it (VS Code's Workspace Trust): trust is kept in the user's own configuration directory, in
``$XDG_CONFIG_HOME/ided/trusted-workspaces.json`` (``IDED_TRUST_FILE`` names another file), never
in the repository, so a repository cannot mark itself trusted. Trusting a folder trusts every folder
under it. A missing file trusts nothing; one that cannot be read or is not a trust file (not JSON,
nested too deep, not ``{"workspaces": [...]}``: decoded as the transports decode a message,
:func:`daemon.core.jsonrpc.guarded_json`) is a ``config_invalid`` error naming the file, for every
command that reads it, rather than a silent change of what is trusted; an entry that is not an
absolute path is skipped with a warning. ``ided trust [PATH]``, ``ided trust --list`` and
``ided trust --remove PATH`` edit it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from daemon.core.jsonrpc import JsonProblem, guarded_json
from daemon.errors import ConfigError

__all__ = ["TRUST_FILE_ENV", "TrustStore", "TrustedWorkspace", "how_to_trust", "trust_file_path"]

logger = logging.getLogger(__name__)

TRUST_FILE_ENV = "IDED_TRUST_FILE"
_VERSION = 1
_MAX_DEPTH = 8
"""A trust file is ``{"version": 1, "workspaces": [{"path": ..., "trusted_at": ...}]}``: three levels deep."""
_MAX_BYTES = 16 * 1024 * 1024


def trust_file_path(env: Mapping[str, str] | None = None) -> Path:
    """``$IDED_TRUST_FILE``, else ``$XDG_CONFIG_HOME/ided/trusted-workspaces.json`` (``~/.config/ided/...``)."""
    env = os.environ if env is None else env
    if named := env.get(TRUST_FILE_ENV):
        return Path(named)
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".config")
    return Path(base) / "ided" / "trusted-workspaces.json"


def how_to_trust(root: Path) -> str:
    """The command that trusts ``root``."""
    return f"ided trust {root}"


@dataclass(frozen=True, kw_only=True)
class TrustedWorkspace:
    path: Path
    trusted_at: str


class TrustStore:
    """The user's trusted folders, read from (and written to) one JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def default(cls, env: Mapping[str, str] | None = None) -> TrustStore:
        return cls(trust_file_path(env))

    def entries(self) -> list[TrustedWorkspace]:
        """The trusted folders; an absent file trusts nothing, a damaged one is a ``ConfigError`` naming it."""
        try:
            with self.path.open("rb") as fh:
                data = fh.read(_MAX_BYTES + 1)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise self._damaged(exc.strerror or str(exc)) from exc
        if len(data) > _MAX_BYTES:
            raise self._damaged(f"larger than {_MAX_BYTES >> 20} MiB")
        try:
            raw: Any = guarded_json(data, max_depth=_MAX_DEPTH)
        except JsonProblem as exc:
            raise self._damaged(str(exc)) from None
        items: Any = cast("dict[str, Any]", raw).get("workspaces") if isinstance(raw, dict) else None
        if not isinstance(items, list):
            raise self._damaged('not {"workspaces": [...]}')
        found: list[TrustedWorkspace] = []
        for item in cast("list[Any]", items):
            entry = cast("dict[str, Any]", item) if isinstance(item, dict) else {}
            path, when = entry.get("path"), entry.get("trusted_at", "")
            if isinstance(path, str) and "\x00" not in path and Path(path).is_absolute():
                found.append(TrustedWorkspace(path=Path(path), trusted_at=str(when)))
            else:
                logger.warning("the trust file %s has an entry that is not an absolute path; skipped", self.path)
        return found

    def _damaged(self, why: str) -> ConfigError:
        return ConfigError(
            f"the trust file {self.path} cannot be read ({why}): fix it, or move it aside to trust nothing "
            "(`ided trust PATH` then writes a new one)"
        )

    def trusted(self, folder: Path) -> bool:
        """Whether ``folder`` (resolved) is a trusted folder or lies under one."""
        target = folder.resolve()
        return any(target == e.path or target.is_relative_to(e.path) for e in self.entries())

    def add(self, folder: Path) -> bool:
        """Trust ``folder`` (resolved); False when it already was trusted (itself, not a parent)."""
        target = folder.resolve()
        if not target.is_dir():
            raise ConfigError(f"{target} is not a folder; only folders can be trusted")
        entries = self.entries()
        if any(e.path == target for e in entries):
            return False
        now = datetime.now(UTC).isoformat(timespec="seconds")
        self._write([*entries, TrustedWorkspace(path=target, trusted_at=now)])
        return True

    def remove(self, folder: Path) -> bool:
        """Stop trusting ``folder``; False when it was not in the list."""
        target = folder.resolve()
        entries = self.entries()
        kept = [e for e in entries if e.path != target]
        if len(kept) == len(entries):
            return False
        self._write(kept)
        return True

    def _write(self, entries: list[TrustedWorkspace]) -> None:
        payload = {
            "version": _VERSION,
            "workspaces": [{"path": str(e.path), "trusted_at": e.trusted_at} for e in entries],
        }
        tmp: str | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".trusted-", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(payload, fh, indent=2)
                fh.write("\n")
            os.replace(tmp, self.path)  # readers see the old list or the new one, never half of one
        except OSError as exc:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            raise ConfigError(f"the trust file {self.path} cannot be written", cause=exc) from exc
