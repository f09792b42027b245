"""The formatters and linters of a workspace's toolchain, as named commands for ``lint_and_format`` stages.

``detect_toolchain(root)`` walks the tree (bounded, dependency and build directories skipped), finds
which languages it holds, and for each looks its formatter up on ``PATH`` (absolute entries only: a
relative one would find a program the worktree ships):

- Python: ``ruff`` -> ``format_ruff`` (``ruff format .``) and ``lint_ruff`` (``ruff check --fix .``);
- JavaScript/TypeScript: ``prettier`` -> ``format_prettier`` (``prettier --write`` over the files);
- Go: ``gofmt`` -> ``format_gofmt`` (``gofmt -w .``);
- Rust: ``cargo fmt --all`` with a ``Cargo.toml`` at the root, else ``rustfmt`` over the files;
- C/C++: ``clang-format`` -> ``format_clang_format`` (``clang-format -i`` over the files).

The commands are plain command lines with the executable's absolute path; they join the workflow's
commands and the project's ``[agents.commands]`` (which win on a name clash) and run through the same
``CommandRunner`` as the test command, in the run's worktree. Tools given a file list get the files
present when the run's agents start (at most ``MAX_FILES`` per tool). Nothing is installed: a language
whose formatter is not on ``PATH`` is reported as such. Blocking: call in a thread.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from daemon.core.languages import language_for_path
from daemon.orchestration.project_profile import workspace_files

__all__ = ["FORMAT_PREFIX", "LINT_PREFIX", "MAX_FILES", "Toolchain", "check_command_names", "detect_toolchain"]

logger = logging.getLogger(__name__)

FORMAT_PREFIX = "format"
LINT_PREFIX = "lint"
MAX_FILES = 500
"""Files handed to one formatter that takes a file list."""
MAX_WALK = 20_000
"""Files looked at when finding the workspace's languages."""

Which = Callable[[str], str | None]


def path_which(name: str) -> str | None:
    """``name`` on ``PATH``, its relative and empty entries (the current directory: a workspace) left out."""
    entries = os.environ.get("PATH", os.defpath).split(os.pathsep)
    return shutil.which(name, path=os.pathsep.join(e for e in entries if e and os.path.isabs(e)))


@dataclass(frozen=True, kw_only=True)
class Toolchain:
    """The detected commands (name -> command line) and one line per language on what was found."""

    commands: dict[str, str] = field(default_factory=dict[str, str])
    found: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()

    def summary(self) -> str:
        parts = [*self.found, *(f"{m} (not on PATH)" for m in self.missing)]
        return "; ".join(parts) if parts else "no code language with a known formatter"


def check_command_names(names: Sequence[str]) -> list[str]:
    """The lint_* commands first, then the format_* ones: the linters' fixes (a removed import) leave layout
    that the formatters then settle, as ruff's own docs advise (``ruff check --fix``, then ``ruff format``)."""
    lints = sorted(n for n in names if n.startswith(LINT_PREFIX))
    formats = sorted(n for n in names if n.startswith(FORMAT_PREFIX))
    return [*lints, *formats]


def _files_by_language(root: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for seen, (rel, _name) in enumerate(workspace_files(root), start=1):
        language = language_for_path(rel)
        if language is not None:
            found.setdefault(language, []).append(rel)
        if seen >= MAX_WALK:
            break
    return found


def _line(executable: str, *args: str) -> str:
    return shlex.join([executable, *args])


def detect_toolchain(root: Path, *, which: Which = path_which) -> Toolchain:
    """The formatters and linters on ``PATH`` for the languages under ``root`` (see the module docstring)."""
    files = _files_by_language(root)
    commands: dict[str, str] = {}
    found: list[str] = []
    missing: list[str] = []

    def some(*languages: str) -> list[str]:
        return [f for lang in languages for f in files.get(lang, [])][:MAX_FILES]

    if files.get("python"):
        if ruff := which("ruff"):
            commands["format_ruff"] = _line(ruff, "format", ".")
            commands["lint_ruff"] = _line(ruff, "check", "--fix", ".")
            found.append(f"python: ruff ({ruff})")
        else:
            missing.append("python: ruff")
    if web := some("javascript", "typescript", "tsx"):
        if prettier := which("prettier"):
            commands["format_prettier"] = _line(prettier, "--write", *web)
            found.append(f"javascript/typescript: prettier ({prettier})")
        else:
            missing.append("javascript/typescript: prettier")
    if files.get("go"):
        if gofmt := which("gofmt"):
            commands["format_gofmt"] = _line(gofmt, "-w", ".")
            found.append(f"go: gofmt ({gofmt})")
        else:
            missing.append("go: gofmt")
    if rust := some("rust"):
        cargo = which("cargo") if (root / "Cargo.toml").is_file() else None
        rustfmt = which("rustfmt")
        if cargo and rustfmt:
            commands["format_rustfmt"] = _line(cargo, "fmt", "--all")
            found.append(f"rust: cargo fmt ({cargo})")
        elif rustfmt:
            commands["format_rustfmt"] = _line(rustfmt, "--edition", "2021", *rust)
            found.append(f"rust: rustfmt ({rustfmt})")
        else:
            missing.append("rust: rustfmt")
    if native := some("c", "cpp"):
        if clang_format := which("clang-format"):
            commands["format_clang_format"] = _line(clang_format, "-i", *native)
            found.append(f"c/c++: clang-format ({clang_format})")
        else:
            missing.append("c/c++: clang-format")
    toolchain = Toolchain(commands=commands, found=tuple(found), missing=tuple(missing))
    logger.debug("toolchain of %s: %s", root, toolchain.summary())
    return toolchain
