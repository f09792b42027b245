"""Where a language server's executable may come from, and what an untrusted workspace may not make it run.

Nothing a repository ships runs before the user trusts its workspace (``daemon.trust``). A cloned
repository can commit an executable ``venv/bin/basedpyright-langserver`` (the exec bit survives git),
a ``.venv/bin/python`` that a Python server would run to learn its search paths, a
``node_modules/typescript`` whose ``tsserver.js`` the TypeScript server would load, or a Cargo or
Gradle build that rust-analyzer or jdtls would run. So, in an untrusted workspace:

- executables are looked up on the user's ``intel.search_path`` and ``PATH`` only; ``PATH`` entries
  that are relative, empty (the current directory) or inside the workspace are dropped, for the look-up
  and for the server's own environment. The workspace's ``.venv/bin``, ``venv/bin`` and
  ``node_modules/.bin`` (:data:`WORKSPACE_BINS`) are searched only once it is trusted;
- pyright and basedpyright are told which interpreter to ask (``python.pythonPath``: the user's
  ``python3``), so they never run ``.venv/bin/python`` (basedpyright's default) or one a
  ``pyrightconfig.json`` names; with no user interpreter and a workspace one present, they are refused;
- typescript-language-server is given the ``tsserver.js`` installed beside it (its default prefers the
  workspace's ``node_modules/typescript``); with none beside it and a workspace one present, refused;
- rust-analyzer and jdtls are refused: they build the project (Cargo build scripts and proc macros, a
  ``.cargo/config.toml`` that names the compiler, the Gradle wrapper), which runs the repository's code.

Refused servers carry the reason and ``how_to_trust``; their tools answer ``workspace_untrusted``.
:func:`workspace_programs` lists what the workspace ships that is left unused, for the trust notice.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from daemon.trust import how_to_trust

if TYPE_CHECKING:
    from daemon.intel.lsp.registry import ServerSpec

__all__ = ["BUILDING_SERVERS", "WORKSPACE_BINS", "ServerLookup", "guard_untrusted", "workspace_programs"]

WORKSPACE_BINS: tuple[str, ...] = (".venv/bin", "venv/bin", "node_modules/.bin")
"""The workspace's own tool folders, searched after ``intel.search_path`` and before ``PATH``, once trusted."""

BUILDING_SERVERS: Mapping[str, str] = {
    "rust-analyzer": "it builds the project (Cargo build scripts and proc macros, a .cargo/config.toml that names "
    "the compiler), which runs the repository's code",
    "jdtls": "it imports the project's build (Maven, Gradle and its wrapper), which runs the repository's code",
}
"""Servers not started in an untrusted workspace, and why."""

_BUILD_FILES: Mapping[str, tuple[str, ...]] = {
    "rust-analyzer": ("Cargo.toml",),
    "jdtls": ("pom.xml", "build.gradle", "build.gradle.kts", "gradlew", "settings.gradle", "settings.gradle.kts"),
}
_INTERPRETERS = (".venv/bin/python", "venv/bin/python")
_TS_LIBS = ("node_modules/typescript/lib", ".vscode/pnpify/typescript/lib", ".yarn/sdks/typescript/lib")
"""Where typescript-language-server looks for the workspace's TypeScript (its MODULE_FOLDERS)."""


@dataclass(frozen=True, kw_only=True)
class ServerLookup:
    """Finds executables for one workspace as its trust allows (see the module docstring)."""

    workspace: Path
    search_path: tuple[str, ...]
    trusted: bool
    path: str
    """``PATH`` as inherited."""

    @classmethod
    def of(
        cls, workspace: Path, search_path: tuple[str, ...], *, trusted: bool, environ: Mapping[str, str] = os.environ
    ) -> ServerLookup:
        return cls(workspace=workspace, search_path=search_path, trusted=trusted, path=environ.get("PATH", os.defpath))

    def user_path(self) -> str:
        """``PATH`` without relative and empty entries and, untrusted, without entries inside the workspace."""
        if self.trusted:
            return self.path
        kept = [
            entry
            for entry in self.path.split(os.pathsep)
            if entry and os.path.isabs(entry) and not _inside(Path(entry), self.workspace)
        ]
        return os.pathsep.join(kept)

    def dirs(self) -> list[str]:
        """Where executables are looked for, in order: ``intel.search_path``, the workspace's bins (trusted)."""
        own = [str(d if Path(d).is_absolute() else self.workspace / d) for d in self.search_path]
        return own + ([str(self.workspace / d) for d in WORKSPACE_BINS] if self.trusted else [])

    def which(self, executable: str) -> str | None:
        """The executable's path (an absolute one as it is, when executable), or None."""
        if os.path.isabs(executable):
            return executable if os.access(executable, os.X_OK) else None
        dirs = self.dirs()
        found = shutil.which(executable, path=os.pathsep.join(dirs)) if dirs else None
        return found or shutil.which(executable, path=self.user_path())

    def env(self) -> dict[str, str]:
        """What a server's environment changes: untrusted, ``PATH`` as :meth:`user_path` gives it."""
        return {} if self.trusted else {"PATH": self.user_path()}


def _inside(path: Path, workspace: Path) -> bool:
    try:
        return path.resolve().is_relative_to(workspace)
    except (OSError, RuntimeError):
        return False


def guard_untrusted(spec: ServerSpec, lookup: ServerLookup) -> ServerSpec:
    """``spec`` as an untrusted workspace may have it (unchanged when trusted or not found)."""
    if lookup.trusted or spec.command is None:
        return spec
    refuse = _refusal(spec, lookup)
    if refuse is not None:
        return dataclasses.replace(
            spec,
            command=None,
            reason=f"{spec.name} is not started in this workspace: {refuse}, and the workspace is not trusted; "
            f"trust it with `{how_to_trust(lookup.workspace)}` (docs/configuration.md#workspace-trust) and restart "
            "the daemon (`ided stop`)",
            how_to_trust=how_to_trust(lookup.workspace),
        )
    settings: dict[str, Any] = dict(spec.settings)
    if spec.name in ("pyright", "basedpyright"):
        python = dict(settings.get("python") or {})
        python.setdefault("pythonPath", _user_python(lookup))
        settings["python"] = python
    elif spec.name == "typescript-language-server":
        init = dict(settings.get("initializationOptions") or {})
        tsserver = dict(init.get("tsserver") or {})
        tsserver.setdefault("path", _tsserver_beside(spec.command))
        init["tsserver"] = tsserver
        settings["initializationOptions"] = init
    return dataclasses.replace(spec, settings=settings, env={**spec.env, **lookup.env()})


def _refusal(spec: ServerSpec, lookup: ServerLookup) -> str | None:
    if spec.name in BUILDING_SERVERS:
        return BUILDING_SERVERS[spec.name]
    root = lookup.workspace
    if spec.name in ("pyright", "basedpyright") and _user_python(lookup) is None:
        shipped = [p for p in _INTERPRETERS if (root / p).exists()]
        if shipped:
            return f"it would run the workspace's own interpreter {shipped[0]} (no python3 on your PATH)"
    if spec.name == "typescript-language-server" and spec.command and _tsserver_beside(spec.command) is None:
        shipped = [p for p in _TS_LIBS if (root / p / "tsserver.js").exists()]
        if shipped:
            return f"it would load the workspace's own TypeScript {shipped[0]}/tsserver.js (none installed beside it)"
    return None


def _user_python(lookup: ServerLookup) -> str | None:
    return shutil.which("python3", path=lookup.user_path()) or shutil.which("python", path=lookup.user_path())


def _tsserver_beside(command: str) -> str | None:
    """The ``typescript/lib/tsserver.js`` of the ``node_modules`` typescript-language-server is installed in."""
    try:
        real = Path(os.path.realpath(command))
    except OSError:
        return None
    for folder in real.parents:
        candidate = folder / "typescript" / "lib" / "tsserver.js"
        if folder.name == "node_modules" and candidate.is_file():
            return str(candidate)
    return None


def workspace_programs(workspace: Path, server_executables: tuple[str, ...]) -> list[str]:
    """What an untrusted ``workspace`` ships that ided leaves unused: server executables in its bins, its
    own interpreter and TypeScript, and the builds the building servers would run (workspace-relative)."""
    found: list[str] = []
    for folder in WORKSPACE_BINS:
        for name in server_executables:
            path = workspace / folder / name
            if path.is_file() and os.access(path, os.X_OK):
                found.append(f"{folder}/{name}")
    found += [p for p in _INTERPRETERS if (workspace / p).exists()]
    found += [f"{p}/tsserver.js" for p in _TS_LIBS if (workspace / p / "tsserver.js").exists()]
    for server, files in _BUILD_FILES.items():
        present = [f for f in files if (workspace / f).exists()]
        if present:
            found.append(f"{present[0]} (the build {server} would run)")
    return found
