"""Workspace scan: which files to index, and why every other file is skipped.

Rules, in order: built-in excluded directories (VCS metadata, dependency folders, virtualenvs,
build output, caches) -> .gitignore / .ignore / .git/info/exclude (nested files honoured) and
``index.exclude`` -> symlinks (never followed out of the workspace, symlinked directories never
followed) -> anything but a regular file (a FIFO, socket or device, or a link to one: ``special_file``,
never opened) -> a file whose contents may live outside the workspace (a hard link, ``hard_link``; a
file or folder on another file system than the root, ``other_filesystem``: both treated like a link
out) -> secret-bearing names (of the link and of its resolved target) -> size cap -> unsupported
file type. Content checks (binary, UTF-8, credentials in the text) happen when the file is read, in
:mod:`daemon.index.file_reader`, which opens only a regular file and never blocks. The boundary and
secret rules are the shared ones of :mod:`daemon.intel.workspace_paths`; :meth:`Scanner.check_path`
(the watcher's path) applies the same rules as the full walk.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pathspec

from daemon.core.languages import language_for_path
from daemon.core.models import SkipReason
from daemon.core.regular_files import boundary_problem, file_kind, read_regular_text
from daemon.core.secret_rules import secret_name
from daemon.intel.workspace_paths import locate

if TYPE_CHECKING:
    from daemon.config import IndexConfig

__all__ = ["BUILTIN_EXCLUDED_DIRS", "ScanResult", "ScannedFile", "Scanner"]

logger = logging.getLogger(__name__)

BUILTIN_EXCLUDED_DIRS: frozenset[str] = frozenset(
    {
        ".git", ".hg", ".svn", ".jj", ".ided",
        "node_modules", "bower_components", "jspm_packages",
        ".venv", "venv", ".tox", ".nox", "__pypackages__", "site-packages",
        "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", ".cache",
        "build", "dist", "target", "out", ".next", ".nuxt", ".svelte-kit", ".gradle", ".terraform",
        ".idea", ".vscode-test", "coverage", "htmlcov", ".eggs",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class ScannedFile:
    """A candidate file: workspace-relative POSIX path plus the stat the manifest compares."""

    rel_path: str
    abs_path: Path
    size: int
    mtime_ns: int
    language: str


@dataclass(slots=True)
class ScanResult:
    files: list[ScannedFile] = field(default_factory=list[ScannedFile])
    skipped: dict[SkipReason, int] = field(default_factory=dict[SkipReason, int])
    examples: dict[SkipReason, list[str]] = field(default_factory=dict[SkipReason, list[str]])
    milestone: tuple[int, Callable[[], None]] | None = field(default=None, repr=False, compare=False)
    """``(n, call)``: ``call()`` runs once, when the scan has found its ``n``-th indexable file."""

    def add(self, file: ScannedFile) -> None:
        self.files.append(file)
        if self.milestone is not None and len(self.files) == self.milestone[0]:
            self.milestone[1]()

    def skip(self, reason: SkipReason, rel_path: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        examples = self.examples.setdefault(reason, [])
        if len(examples) < 5:
            examples.append(rel_path)

    @property
    def seen(self) -> int:
        return len(self.files) + sum(self.skipped.values())


@dataclass(frozen=True, slots=True)
class _IgnoreLayer:
    base: str  # workspace-relative dir ("" for root) the patterns are relative to
    spec: pathspec.GitIgnoreSpec

    def ignores(self, rel_path: str, is_dir: bool) -> bool:
        sub = rel_path[len(self.base) + 1 :] if self.base else rel_path
        return self.spec.match_file(sub + "/" if is_dir else sub)


class Scanner:
    """Walks one workspace. ``classify`` maps a path to a language id, or None when unsupported."""

    def __init__(
        self,
        root: Path,
        *,
        classify: Callable[[str], str | None],
        max_file_bytes: int,
        extra_excludes: tuple[str, ...] = (),
        include_secrets: bool = False,
        respect_gitignore: bool = True,
    ) -> None:
        self.root = root.resolve()
        self._device = os.stat(self.root).st_dev
        self._classify = classify
        self._max_bytes = max_file_bytes
        self._include_secrets = include_secrets
        self._respect_gitignore = respect_gitignore
        self._extra = pathspec.GitIgnoreSpec.from_lines(extra_excludes) if extra_excludes else None

    # -- public -------------------------------------------------------------------------------

    @classmethod
    def for_workspace(cls, root: Path, index: IndexConfig, *, include_secrets: bool) -> Scanner:
        """The workspace's files as the ``index`` settings choose them (size limit, excludes, .gitignore),
        each classified by its path's language; ``include_secrets`` False keeps secret files out."""
        return cls(
            root,
            classify=language_for_path,
            max_file_bytes=index.max_file_bytes,
            extra_excludes=index.exclude,
            include_secrets=include_secrets,
            respect_gitignore=index.respect_gitignore,
        )

    @property
    def device(self) -> int:
        """The workspace root's ``st_dev``: files on another file system are skipped (``other_filesystem``)."""
        return self._device

    def classify(self, rel_path: str) -> str | None:
        return self._classify(rel_path)

    def scan(self, *, milestone: tuple[int, Callable[[], None]] | None = None) -> ScanResult:
        """Every file under the root, classified or skipped with a reason (see ``ScanResult.milestone``)."""
        result = ScanResult(milestone=milestone)
        layers = self._root_layers()
        self._walk(self.root, "", layers, result)
        result.files.sort(key=lambda f: f.rel_path)
        return result

    def check_path(self, rel_path: str) -> SkipReason | None:
        """Why a single (existing or not) path would be skipped, or None if it is indexable.

        Used by the watcher for one changed file without re-walking the tree: the same rules as
        the walk, symlinks included (one that leads out of the workspace, or to a secret, is skipped).
        """
        parts = rel_path.split("/")
        if any(p in BUILTIN_EXCLUDED_DIRS for p in parts[:-1]):
            return SkipReason.IGNORED
        layers = self._root_layers()
        for i in range(1, len(parts)):
            sub = "/".join(parts[:i])
            if any(layer.ignores(sub, True) for layer in layers):
                return SkipReason.IGNORED
            layers = layers + self._layers_for_dir(self.root / sub, sub)
        if self._ignored(rel_path, False, layers):
            return SkipReason.IGNORED
        path = self.root / rel_path
        real: Path | None = None
        if os.path.lexists(path):
            found = locate(self.root, path)
            if isinstance(found, SkipReason):
                return found
            if len(parts) > 1 and locate(self.root, path.parent) != path.parent:
                return SkipReason.IGNORED  # under a linked folder, which the walk never follows
            real = found
            problem = self._target_problem(real)
            if problem is not None:
                return problem
        if not self._include_secrets and (secret_name(parts[-1]) or (real is not None and secret_name(real.name))):
            return SkipReason.SECRET
        if self._classify(rel_path) is None:
            return SkipReason.UNSUPPORTED
        return None

    def _target_problem(self, real: Path) -> SkipReason | None:
        """Why the existing target ``real`` is not read (special file, hard link, other file system)."""
        try:
            st = os.stat(real)
        except OSError:
            return SkipReason.VANISHED
        if stat.S_ISDIR(st.st_mode):
            return SkipReason.OTHER_FILESYSTEM if st.st_dev != self._device else None
        if file_kind(st.st_mode) is not None:
            return SkipReason.SPECIAL_FILE
        return boundary_problem(st, self._device)

    def resolved(self, rel_path: str) -> Path:
        """The file ``rel_path`` stands for (a symlink's target); call after :meth:`check_path` passed."""
        found = locate(self.root, self.root / rel_path)
        return found if isinstance(found, Path) else self.root / rel_path

    def scan_dir(self, rel_dir: str) -> ScanResult:
        """Scan one directory's subtree under the same rules as :meth:`scan`.

        The watcher needs it: a directory created with files already in it (a branch switch, an
        unpacked archive, ``cp -r``) can reach the watcher as one event for the directory alone.
        """
        result = ScanResult()
        parts = rel_dir.split("/")
        if any(p in BUILTIN_EXCLUDED_DIRS for p in parts):
            result.skip(SkipReason.IGNORED, rel_dir + "/")
            return result
        found = locate(self.root, self.root / rel_dir)
        if isinstance(found, SkipReason) or found != self.root / rel_dir:
            # through a link out of the workspace (or gone), or through a linked folder the walk never follows
            result.skip(found if isinstance(found, SkipReason) else SkipReason.IGNORED, rel_dir + "/")
            return result
        layers = self._root_layers()
        for i in range(1, len(parts) + 1):
            sub = "/".join(parts[:i])
            if self._ignored(sub, True, layers) or (self.root / sub / "pyvenv.cfg").exists():
                result.skip(SkipReason.IGNORED, sub + "/")
                return result
            layers = layers + self._layers_for_dir(self.root / sub, sub)
        self._walk(self.root / rel_dir, rel_dir, layers, result)
        result.files.sort(key=lambda f: f.rel_path)
        return result

    # -- walking ------------------------------------------------------------------------------

    def _root_layers(self) -> tuple[_IgnoreLayer, ...]:
        layers = self._layers_for_dir(self.root, "")
        if self._respect_gitignore:
            exclude = self.root / ".git" / "info" / "exclude"
            spec = _read_spec(exclude)
            if spec is not None:
                layers = (_IgnoreLayer("", spec), *layers)
        return layers

    def _layers_for_dir(self, directory: Path, rel_dir: str) -> tuple[_IgnoreLayer, ...]:
        if not self._respect_gitignore:
            return ()
        found: list[_IgnoreLayer] = []
        for name in (".gitignore", ".ignore"):
            spec = _read_spec(directory / name)
            if spec is not None:
                found.append(_IgnoreLayer(rel_dir, spec))
        return tuple(found)

    def _ignored(self, rel_path: str, is_dir: bool, layers: tuple[_IgnoreLayer, ...]) -> bool:
        if self._extra is not None and self._extra.match_file(rel_path + "/" if is_dir else rel_path):
            return True
        return any(layer.ignores(rel_path, is_dir) for layer in layers)

    def _walk(self, directory: Path, rel_dir: str, layers: tuple[_IgnoreLayer, ...], out: ScanResult) -> None:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except FileNotFoundError:
            out.skip(SkipReason.VANISHED, rel_dir or ".")
            return
        except OSError:
            out.skip(SkipReason.UNREADABLE, rel_dir or ".")
            return
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                out.skip(SkipReason.VANISHED, rel)
                continue
            except OSError:
                out.skip(SkipReason.UNREADABLE, rel)
                continue
            if stat.S_ISLNK(st.st_mode):
                self._symlink(entry.path, rel, layers, out)
            elif stat.S_ISDIR(st.st_mode):
                self._directory(Path(entry.path), entry.name, rel, st, layers, out)
            elif stat.S_ISREG(st.st_mode):
                self._file(Path(entry.path), entry.name, rel, st, layers, out)
            elif not self._ignored(rel, False, layers):
                out.skip(SkipReason.SPECIAL_FILE, rel)  # a FIFO, socket or device: never opened

    def _directory(
        self, path: Path, name: str, rel: str, st: os.stat_result, layers: tuple[_IgnoreLayer, ...], out: ScanResult
    ) -> None:
        if name in BUILTIN_EXCLUDED_DIRS or (path / "pyvenv.cfg").exists() or self._ignored(rel, True, layers):
            out.skip(SkipReason.IGNORED, rel + "/")
            return
        if st.st_dev != self._device:  # a mount point: what lies below is another file system
            out.skip(SkipReason.OTHER_FILESYSTEM, rel + "/")
            return
        self._walk(path, rel, layers + self._layers_for_dir(path, rel), out)

    def _file(
        self,
        path: Path,
        name: str,
        rel: str,
        st: os.stat_result,
        layers: tuple[_IgnoreLayer, ...],
        out: ScanResult,
    ) -> None:
        size, mtime_ns = st.st_size, st.st_mtime_ns
        if self._ignored(rel, False, layers):
            out.skip(SkipReason.IGNORED, rel)
        elif (problem := boundary_problem(st, self._device)) is not None:
            out.skip(problem, rel)
        elif not self._include_secrets and (secret_name(name) or secret_name(path.name)):
            out.skip(SkipReason.SECRET, rel)
        elif size > self._max_bytes:
            out.skip(SkipReason.TOO_LARGE, rel)
        elif (language := self._classify(rel)) is None:
            out.skip(SkipReason.UNSUPPORTED, rel)
        else:
            out.add(ScannedFile(rel, path, size, mtime_ns, language))

    def _symlink(self, link: str, rel: str, layers: tuple[_IgnoreLayer, ...], out: ScanResult) -> None:
        if self._ignored(rel, False, layers):
            out.skip(SkipReason.IGNORED, rel)
            return
        target = locate(self.root, Path(link))
        if isinstance(target, SkipReason):
            out.skip(target, rel)
            return
        if target.is_dir():
            # Its files are indexed under their real path; following it would index them twice.
            out.skip(SkipReason.IGNORED, rel + "/")
            return
        name = rel.rsplit("/", 1)[-1]
        try:
            st = target.stat()
        except OSError:
            out.skip(SkipReason.VANISHED, rel)
            return
        if file_kind(st.st_mode) is not None:  # a link to a FIFO, socket or device: never opened
            out.skip(SkipReason.SPECIAL_FILE, rel)
            return
        self._file(target, name, rel, st, layers, out)


_MAX_IGNORE_FILE_BYTES = 4 * 1024 * 1024
"""An ignore file is read up to this size (a link to a FIFO or a device is never opened: it is not read)."""


def _read_spec(path: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        lines = read_regular_text(path, _MAX_IGNORE_FILE_BYTES).splitlines()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError:
        logger.warning("cannot read ignore file %s", path)
        return None
    if not lines:
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError:  # a line git itself would skip (a lone "!"): skip it too, keep the file's other rules
        kept: list[str] = []
        for line in lines:
            try:
                pathspec.GitIgnoreSpec.from_lines([line])
            except ValueError:
                logger.warning("ignore file %s: skipping the invalid pattern %r", path, line)
                continue
            kept.append(line)
        return pathspec.GitIgnoreSpec.from_lines(kept) if kept else None
