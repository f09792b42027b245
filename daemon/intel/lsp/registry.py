"""Which language server serves which language, and where its executable is.

Nothing is downloaded at run time: a server is used when its executable is found on
``intel.search_path`` (first), in the project's own tool folders (``.venv/bin``, ``venv/bin``,
``node_modules/.bin`` under the workspace: a pyright installed with the project's dev dependencies)
once the workspace is trusted, or on ``PATH``, or at the absolute path configured in
``intel.servers.<language>.command``. A language whose server is missing answers with the
install hint below instead. In an untrusted workspace nothing it ships is run
(:mod:`daemon.intel.lsp.server_lookup`: the look-up, ``PATH`` and what each server is told).

Built-in choices, in order of preference (the first one found wins):

* python: ``basedpyright-langserver --stdio``, ``pyright-langserver --stdio``,
  ``jedi-language-server``, ``pylsp``
* javascript, typescript, tsx: ``typescript-language-server --stdio`` (needs ``typescript`` beside it)
* c, cpp: ``clangd``
* go: ``gopls``; rust: ``rust-analyzer``; java: ``jdtls``

One process serves every language of its group (one TypeScript server for .js/.ts/.tsx files).

A language in ``refused`` (its server chosen by an untrusted repository's ``.ided.toml``) gets no
server: its spec carries the refusal and ``how_to_trust``, and its calls answer ``workspace_untrusted``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from daemon.config import IntelConfig
from daemon.intel.lsp.server_lookup import WORKSPACE_BINS, ServerLookup, guard_untrusted

__all__ = [
    "LANGUAGE_IDS",
    "ServerCandidate",
    "ServerSpec",
    "exclusion_settings",
    "lsp_language_id",
    "resolve_servers",
    "server_executables",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerCandidate:
    """A built-in server choice for a group of languages."""

    name: str
    executable: str
    args: tuple[str, ...] = ()
    install_hint: str
    settings: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Settings the server gets unless the user's ``intel.servers.<lang>.settings`` say otherwise."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSpec:
    """A server resolved for a group of languages: found (``command`` set) or not (``reason`` set)."""

    name: str
    languages: tuple[str, ...]
    command: str | None
    args: tuple[str, ...] = ()
    reason: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict[str, Any])
    init_options: Mapping[str, Any] = field(default_factory=dict[str, Any])
    how_to_trust: str | None = None
    """Set when the server is refused in an untrusted workspace (its repository chose it, or it would run
    what the repository ships): the command that trusts."""
    env: Mapping[str, str] = field(default_factory=dict[str, str])
    """Environment variables the server starts with besides ided's own (untrusted: a ``PATH`` without the
    workspace)."""

    @property
    def available(self) -> bool:
        return self.command is not None


_PY_HINT = (
    "install a Python language server outside ided's venv, e.g. `uv tool install basedpyright` or "
    "`pipx install jedi-language-server`, or run scripts/install-test-tools.sh and set "
    "intel.search_path to .tools/lsp-venv/bin"
)
_TS_HINT = (
    "install `npm install -g typescript-language-server typescript@5` (or scripts/install-test-tools.sh "
    "and intel.search_path = .tools/node/node_modules/.bin)"
)

# Language groups served by one process, and the candidates for each, best first.
_GROUPS: tuple[tuple[tuple[str, ...], tuple[ServerCandidate, ...]], ...] = (
    (
        ("python",),
        (
            ServerCandidate(
                name="basedpyright", executable="basedpyright-langserver", args=("--stdio",), install_hint=_PY_HINT
            ),
            ServerCandidate(name="pyright", executable="pyright-langserver", args=("--stdio",), install_hint=_PY_HINT),
            ServerCandidate(name="jedi-language-server", executable="jedi-language-server", install_hint=_PY_HINT),
            ServerCandidate(name="pylsp", executable="pylsp", install_hint=_PY_HINT),
        ),
    ),
    (
        ("typescript", "tsx", "javascript"),
        (
            ServerCandidate(
                name="typescript-language-server",
                executable="typescript-language-server",
                args=("--stdio",),
                install_hint=_TS_HINT,
                # Its default starts a syntax-only tsserver that answers while the project loads: a
                # definition asked then lands on the import, not the definition. Answers wait instead.
                settings={"initializationOptions": {"tsserver": {"useSyntaxServer": "never"}}},
            ),
        ),
    ),
    (
        ("c", "cpp"),
        (
            ServerCandidate(
                name="clangd",
                executable="clangd",
                args=("--background-index", "--log=error"),
                install_hint="install clangd (Debian/Ubuntu: `apt-get install clangd`; macOS: `brew install llvm`)",
            ),
        ),
    ),
    (
        ("go",),
        (
            ServerCandidate(
                name="gopls",
                executable="gopls",
                install_hint="install gopls: `go install golang.org/x/tools/gopls@latest` (into $(go env GOPATH)/bin)",
            ),
        ),
    ),
    (
        ("rust",),
        (
            ServerCandidate(
                name="rust-analyzer",
                executable="rust-analyzer",
                install_hint="install rust-analyzer: `rustup component add rust-analyzer` or a release binary",
            ),
        ),
    ),
    (
        ("java",),
        (
            ServerCandidate(
                name="jdtls",
                executable="jdtls",
                install_hint="install Eclipse JDT Language Server (`jdtls` on PATH; e.g. `brew install jdtls`)",
            ),
        ),
    ),
)

LANGUAGE_IDS: Mapping[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescriptreact",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascriptreact",
    ".c": "c",
    ".h": "c",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}
"""LSP ``languageId`` by extension; C++ extensions fall back to ``cpp``."""


def lsp_language_id(path: str, language: str) -> str:
    """The ``languageId`` sent in ``didOpen`` for a file of ided language ``language``."""
    suffix = PurePosixPath(path).suffix.lower()
    if language == "cpp":
        return "cpp"
    return LANGUAGE_IDS.get(suffix, language)


PROJECT_VENV_BINS: tuple[str, ...] = WORKSPACE_BINS
"""The workspace's own tool folders, searched after ``intel.search_path`` and before ``PATH`` once trusted."""


def server_executables() -> tuple[str, ...]:
    """The executable names of every built-in server."""
    return tuple(c.executable for _, candidates in _GROUPS for c in candidates)


def _which(executable: str, lookup: ServerLookup) -> str | None:
    found = lookup.which(executable)
    if found is not None and _is_empty_rustup_proxy(found):
        return None
    return found


def _is_empty_rustup_proxy(path: str) -> bool:
    """rustup links ``rust-analyzer`` to itself even when the component is not installed: probe it."""
    if Path(os.path.realpath(path)).name != "rustup":
        return False
    try:
        probe = subprocess.run([path, "--version"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return True
    return probe.returncode != 0


def exclusion_settings(server: str, settings: Mapping[str, Any], globs: Sequence[str]) -> dict[str, Any]:
    """``settings`` plus the server's own way of leaving ``globs`` out of its analysis; a user's value wins.

    pyright reads ``python.analysis.exclude``, basedpyright ``basedpyright.analysis.exclude`` (both
    through ``workspace/configuration``), gopls ``gopls.directoryFilters`` (directories only). Other
    servers have no such setting (clangd follows compile_commands.json, tsserver its tsconfig).
    """
    merged: dict[str, Any] = dict(settings)
    if not globs:
        return merged
    if server in ("pyright", "basedpyright"):
        section = "python" if server == "pyright" else "basedpyright"
        top = dict(merged.get(section) or {})
        analysis = dict(top.get("analysis") or {})
        analysis.setdefault("exclude", list(globs))
        top["analysis"] = analysis
        merged[section] = top
    elif server == "gopls":
        top = dict(merged.get("gopls") or {})
        directories = [g for g in globs if g.startswith("**/") and "*" not in g[3:] and "." not in g[3:]]
        top.setdefault("directoryFilters", [f"-{g}" for g in directories])
        merged["gopls"] = top
    return merged


def resolve_servers(
    config: IntelConfig,
    workspace: Path,
    refused: Mapping[str, tuple[str, str]] | None = None,
    *,
    only: Collection[str] | None = None,
    trusted: bool = False,
) -> list[ServerSpec]:
    """One ``ServerSpec`` per language group (or per configured language), found or not, with the reason.

    ``refused``: language -> (why, how to trust) for servers an untrusted repository chose; ``only``:
    just the groups of these languages (the others are not looked for); ``trusted``: whether the user
    trusts the workspace (untrusted, nothing it ships runs: :mod:`daemon.intel.lsp.server_lookup`)."""
    refused = refused or {}
    lookup = ServerLookup.of(workspace, config.search_path, trusted=trusted)
    specs: list[ServerSpec] = []
    for languages, candidates in _GROUPS:
        if only is not None and not any(lang in only for lang in languages):
            continue
        configured = [lang for lang in languages if lang in config.servers or lang in refused]
        rest = tuple(lang for lang in languages if lang not in configured)
        specs.extend(
            ServerSpec(
                name=f"{lang}-untrusted",
                languages=(lang,),
                command=None,
                reason=refused[lang][0],
                how_to_trust=refused[lang][1],
            )
            if lang in refused
            else guard_untrusted(_configured(lang, config, lookup, candidates), lookup)
            for lang in configured
        )
        if rest:
            specs.append(guard_untrusted(_builtin(rest, lookup, candidates), lookup))
    return specs


def _configured(
    language: str, config: IntelConfig, lookup: ServerLookup, candidates: tuple[ServerCandidate, ...]
) -> ServerSpec:
    entry = config.servers[language]
    if not entry.enabled:
        return ServerSpec(
            name=f"{language}-disabled",
            languages=(language,),
            command=None,
            reason=f"disabled by intel.servers.{language}.enabled = false",
        )
    if entry.command is None:
        spec = _builtin((language,), lookup, candidates)
        args = entry.args if entry.args is not None else spec.args
        return ServerSpec(
            name=spec.name,
            languages=(language,),
            command=spec.command,
            args=args,
            reason=spec.reason,
            settings={**spec.settings, **entry.settings},
        )
    found = _which(entry.command, lookup)
    known = next((c for c in candidates if Path(c.executable).name == Path(entry.command).name), None)
    return ServerSpec(
        name=known.name if known else Path(entry.command).name,
        languages=(language,),
        command=found,
        args=entry.args if entry.args is not None else (known.args if known else ()),
        reason=None if found else f"intel.servers.{language}.command {entry.command!r} was not found",
        settings=entry.settings,
    )


def _builtin(languages: tuple[str, ...], lookup: ServerLookup, candidates: tuple[ServerCandidate, ...]) -> ServerSpec:
    for candidate in candidates:
        found = _which(candidate.executable, lookup)
        if found:
            return ServerSpec(
                name=candidate.name,
                languages=languages,
                command=found,
                args=candidate.args,
                settings=candidate.settings,
            )
    names = ", ".join(c.executable for c in candidates)
    return ServerSpec(
        name=candidates[0].name,
        languages=languages,
        command=None,
        reason=f"no {'/'.join(languages)} language server found (looked for {names}); {candidates[0].install_hint}",
    )
