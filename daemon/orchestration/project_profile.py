"""A short profile of the workspace for the orchestrator: languages, size, security-sensitive markers.

Built from file names alone by a bounded walk (no file is read), so it costs milliseconds on a
small workspace and stays bounded on a large one (``max_files``). Dependency, build and cache
directories are not walked. Blocking: async callers run ``profile_project`` in a thread.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from pydantic import Field

from daemon.core.frozen_model import FrozenModel
from daemon.core.languages import CODE_LANGUAGES, DOC_LANGUAGES, language_for_path

__all__ = ["ProjectProfile", "ProjectProfiler", "profile_project", "security_words", "workspace_files"]

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
_SECURITY_WORDS = frozenset(
    {
        "auth", "authn", "authz", "login", "logout", "signin", "signon", "sso", "oauth", "oauth2", "openid", "saml",
        "jwt", "jwk", "jwks", "token", "tokens", "passwd", "secret", "secrets", "cipher", "ciphers", "ssl", "tls",
        "cert", "certs", "acl", "acls", "rbac", "abac", "session", "sessions", "csrf", "xsrf", "security", "secure",
        "keystore", "keychain", "hmac", "mfa", "totp", "otp", "vault", "kms",
    }
)  # fmt: skip
"""Words of a path that mark code about authentication, secrets, crypto or permissions (whole words:
``AUTHORS.rst`` and ``author.py`` are no markers, ``auth.py`` and ``oauth_client.py`` are)."""
_SECURITY_STEMS = (
    "authent", "authoriz", "authoris", "crypt", "encrypt", "decrypt", "password", "credential", "permission",
    "certificat", "sanitiz", "sanitis", "privilege",
)  # fmt: skip
"""Word beginnings that mark the same (``authentication``, ``cryptography``, ``passwords``)."""
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_SECRET_FILES = re.compile(r"^(\.env(\..*)?|.*\.(pem|key|p12|pfx)|id_rsa.*|credentials.*)$", re.IGNORECASE)
_TEST_PATH = re.compile(r"(^|/)(tests?|spec|__tests__)(/|$)|(^|/)test_[^/]+$|_test\.[a-z]+$|\.(test|spec)\.[a-z]+$")


def security_words(rel: str) -> list[str]:
    """The words of ``rel`` (a workspace-relative path) that mark security-sensitive code: each folder name
    and the file's name without its extension, split at separators and camelCase, compared whole (or by
    ``_SECURITY_STEMS``)."""
    parts = rel.split("/")
    stem = parts[-1].split(".")[0] if not parts[-1].startswith(".") else parts[-1]
    words = {w.lower() for part in (*parts[:-1], stem) for w in (part, *_WORDS.findall(part))}
    return sorted(w for w in words if w in _SECURITY_WORDS or w.startswith(_SECURITY_STEMS))


def workspace_files(root: Path, folders: dict[str, int] | None = None) -> Iterator[tuple[str, str]]:
    """(path relative to ``root``, file name) of every file under ``root``, in a stable order, without
    walking dependency, build and cache directories. The caller stops when it has seen enough.
    ``folders``: filled with each folder walked and its modification time (ns) as it was listed."""
    for dirpath, dirnames, filenames in os.walk(root):
        if folders is not None:
            with contextlib.suppress(OSError):
                folders[dirpath] = os.stat(dirpath).st_mtime_ns
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
        default=(),
        description="Code files whose path names authentication, crypto, secrets or permissions as a word, and "
        "secret files (.env, keys).",
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


def profile_project(
    root: Path, *, max_files: int = 20_000, max_markers: int = 12, folders: dict[str, int] | None = None
) -> ProjectProfile:
    """Walk ``root`` (bounded) and profile it by file names (``folders``: see ``workspace_files``)."""
    languages: Counter[str] = Counter()
    markers: list[str] = []
    files = 0
    has_tests = False
    truncated = False
    for rel, name in workspace_files(root, folders):
        files += 1
        language = language_for_path(rel)
        if language in CODE_LANGUAGES or language in DOC_LANGUAGES:
            languages[language] += 1
        if not has_tests and language in CODE_LANGUAGES and _TEST_PATH.search(rel):
            has_tests = True
        if len(markers) < max_markers and (
            _SECRET_FILES.match(name) or (language in CODE_LANGUAGES and security_words(rel))
        ):
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


class ProjectProfiler:
    """The profile of one workspace, kept: walked again only when a folder it walked has changed.

    A profile depends on file names alone, and adding, removing or renaming a file or folder changes its
    folder's modification time; so ``current`` checks the walked folders' times (a ``stat`` each: a few
    milliseconds on a django checkout's 3,000 folders, against ~80 ms for the walk) and walks again only
    when one moved. A long-lived daemon's runs see the project as it is now, not as it was at start.
    """

    def __init__(self, root: Path, *, max_files: int = 20_000) -> None:
        self.root = root
        self._max_files = max_files
        self._lock = threading.Lock()
        self._profile: ProjectProfile | None = None
        self._folders: dict[str, int] = {}
        self.walks = 0
        """How many times the workspace was walked."""

    def current(self) -> ProjectProfile:
        """The profile as the workspace's file names are now (blocking)."""
        with self._lock:
            if self._profile is None or self._moved():
                folders: dict[str, int] = {}
                self._profile = profile_project(self.root, max_files=self._max_files, folders=folders)
                self._folders = folders
                self.walks += 1
            return self._profile

    def _moved(self) -> bool:
        for folder, stamp in self._folders.items():
            try:
                if os.stat(folder).st_mtime_ns != stamp:
                    return True
            except OSError:
                return True
        return False
