"""A short profile of the workspace for the orchestrator: languages, size, security-sensitive markers.

Built from file names alone by a bounded walk (no file is read), so it costs milliseconds on a
small workspace and stays bounded on a large one (``max_files``). Dependency, build and cache
directories are not walked. Blocking: async callers run ``profile_project`` in a thread.
"""

from __future__ import annotations

import logging
import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from pydantic import Field

from daemon.core.frozen_model import FrozenModel
from daemon.core.languages import CODE_LANGUAGES, DOC_LANGUAGES, language_for_path

__all__ = ["ProjectProfile", "profile_project", "workspace_files"]

logger = logging.getLogger(__name__)

_SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".ided",
        ".venv",
        "venv",
        "env",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        "dist",
        "build",
        "target",
        "vendor",
        ".idea",
        ".vscode",
        ".tools",
    }
)
_SECURITY = re.compile(
    r"(auth|login|oauth|jwt|token|password|passwd|secret|credential|crypt|cipher|ssl|tls|cert|permission"
    r"|acl|rbac|session|csrf|sanitiz|security)",
    re.IGNORECASE,
)
_SECRET_FILES = re.compile(r"^(\.env(\..*)?|.*\.(pem|key|p12|pfx)|id_rsa.*|credentials.*)$", re.IGNORECASE)
_TEST_PATH = re.compile(r"(^|/)(tests?|spec|__tests__)(/|$)|(^|/)test_[^/]+$|_test\.[a-z]+$|\.(test|spec)\.[a-z]+$")


def workspace_files(root: Path) -> Iterator[tuple[str, str]]:
    """(path relative to ``root``, file name) of every file under ``root``, in a stable order, without
    walking dependency, build and cache directories. The caller stops when it has seen enough."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.endswith(".egg-info"))
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        for name in sorted(filenames):
            yield (name if rel_dir == "." else f"{rel_dir}/{name}"), name


class ProjectProfile(FrozenModel):
    """What the orchestrator is told about the workspace."""

    languages: dict[str, int] = Field(
        default_factory=dict[str, int], description="Code and doc files per language, most first."
    )
    files: int = 0
    size: str = Field(default="small", description="small (< 200 files), medium (< 2000) or large.")
    security_markers: tuple[str, ...] = Field(
        default=(), description="Paths whose names suggest authentication, crypto, secrets or permissions."
    )
    has_tests: bool = False
    has_docs: bool = False
    truncated: bool = Field(default=False, description="The walk stopped at max_files.")

    @property
    def security_sensitive(self) -> bool:
        return bool(self.security_markers)

    def summary(self) -> str:
        """One paragraph for a prompt."""
        langs = ", ".join(f"{lang} ({n})" for lang, n in self.languages.items()) or "none recognised"
        markers = ", ".join(self.security_markers[:6]) or "none"
        return (
            f"languages: {langs}; size: {self.size} ({self.files}{'+' if self.truncated else ''} files); "
            f"tests: {'yes' if self.has_tests else 'no'}; docs: {'yes' if self.has_docs else 'no'}; "
            f"security-sensitive markers: {markers}"
        )


def _size_class(files: int) -> str:
    if files < 200:
        return "small"
    return "medium" if files < 2000 else "large"


def profile_project(root: Path, *, max_files: int = 20_000, max_markers: int = 12) -> ProjectProfile:
    """Walk ``root`` (bounded) and profile it by file names."""
    languages: Counter[str] = Counter()
    markers: list[str] = []
    files = 0
    has_tests = False
    truncated = False
    for rel, name in workspace_files(root):
        files += 1
        language = language_for_path(rel)
        if language in CODE_LANGUAGES or language in DOC_LANGUAGES:
            languages[language] += 1
        if not has_tests and language in CODE_LANGUAGES and _TEST_PATH.search(rel):
            has_tests = True
        if len(markers) < max_markers and (_SECRET_FILES.match(name) or _SECURITY.search(rel)):
            markers.append(rel)
        if files >= max_files:
            truncated = True
            break
    ordered = dict(sorted(languages.items(), key=lambda kv: (-kv[1], kv[0])))
    profile = ProjectProfile(
        languages=ordered,
        files=files,
        size=_size_class(files),
        security_markers=tuple(markers),
        has_tests=has_tests,
        has_docs=any(lang in DOC_LANGUAGES for lang in ordered),
        truncated=truncated,
    )
    logger.debug("profiled %s: %s", root, profile.summary())
    return profile
