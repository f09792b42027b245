"""Workspace trust: the folders whose own commands the user allows ided to run.

A repository can name commands for agents (``[agents.commands]`` in its ``.ided.toml``, ``commands:``
in a workflow file under the workspace). Those run only in a workspace the user trusts, as editors
do it (VS Code's Workspace Trust): trust is kept in the user's own configuration directory, in
``$XDG_CONFIG_HOME/ided/trusted-workspaces.json`` (``IDED_TRUST_FILE`` names another file), never
in the repository, so a repository cannot mark itself trusted. Trusting a folder trusts every folder
under it. Reading the file never fails a caller: a missing or unreadable file trusts nothing.
``ided trust [PATH]``, ``ided trust --list`` and ``ided trust --remove PATH`` edit it.
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

from daemon.errors import ConfigError

__all__ = ["TRUST_FILE_ENV", "TrustStore", "TrustedWorkspace", "how_to_trust", "trust_file_path"]

logger = logging.getLogger(__name__)

TRUST_FILE_ENV = "IDED_TRUST_FILE"
_VERSION = 1


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
        """The trusted folders; an absent or unreadable file trusts nothing (the reason is logged)."""
        try:
            raw: Any = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            logger.warning("the trust file %s cannot be read (%s); no workspace is trusted", self.path, exc)
            return []
        items: Any = cast("dict[str, Any]", raw).get("workspaces") if isinstance(raw, dict) else None
        if not isinstance(items, list):
            return []
        found: list[TrustedWorkspace] = []
        for item in cast("list[Any]", items):
            if isinstance(item, dict):
                entry = cast("dict[str, Any]", item)
                path, when = entry.get("path"), entry.get("trusted_at", "")
                if isinstance(path, str) and Path(path).is_absolute():
                    found.append(TrustedWorkspace(path=Path(path), trusted_at=str(when)))
        return found

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
