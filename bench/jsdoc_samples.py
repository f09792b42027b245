"""JSDoc-documented JavaScript/TypeScript functions from node_modules folders on this machine (benchmark input).

The retrieval-quality benchmark's JS/TS half: every function or method chunk (ided's Tree-sitter
chunker) whose leading comment is a JSDoc block (``/** ... */``) gives one sample: the document is
the function with that comment removed, the query is the first sentence of its prose (``@tags``
left out). Same filters as the Python half (``embedding.extract_samples``): a query of at least 25
characters and 4 words, a document of 200-4000 characters with a body, at most 2 samples a file
and 30 a package (a scope such as ``@azure`` counts as one), no repeated query or document, a
shuffled walk seeded for reproducibility.

Where it looks (those that exist): ``.tools/node/node_modules`` (typescript, its language
server), ``editors/vscode/node_modules`` (the extension's dependencies) and the system npm's
``/usr/lib/node_modules``. Nobody here wrote any of it.
"""

from __future__ import annotations

import logging
import os
import random
import re
import textwrap
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from daemon.core.languages import language_for_path
from daemon.core.models import Chunk, SymbolKind, content_hash
from daemon.intel.chunking import chunk_source

__all__ = ["CodeSample", "default_node_roots", "extract_js_samples"]

logger = logging.getLogger(__name__)

_SKIP_DIRS = {"test", "tests", "__tests__", "__mocks__", "spec", "benchmark", "benchmarks", "examples", "fixtures"}
_EXTENSIONS = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")
_FUNCTIONS = {SymbolKind.FUNCTION, SymbolKind.METHOD}


@dataclass(frozen=True, slots=True)
class CodeSample:
    """One documented function: its doc-less text (what is indexed), the query, and where it came from."""

    text: str
    query: str
    language: str
    origin: str

    @property
    def extension(self) -> str:
        return {"python": ".py", "typescript": ".ts", "tsx": ".tsx"}.get(self.language, ".js")


def default_node_roots(repo: Path) -> list[Path]:
    """The node_modules folders of this machine that exist (see the module docstring)."""
    candidates = [
        repo / ".tools" / "node" / "node_modules",
        repo / "editors" / "vscode" / "node_modules",
        Path("/usr/lib/node_modules"),
    ]
    return [p for p in candidates if p.is_dir()]


def _first_sentence(doc: str) -> str:
    prose = "\n".join(line for line in doc.splitlines() if not line.lstrip().startswith("@"))
    para = re.split(r"\n\s*\n", prose.strip(), maxsplit=1)[0]
    para = " ".join(para.split())
    return re.split(r"(?<=[.!?])\s+", para, maxsplit=1)[0]


def _without_jsdoc(chunk: Chunk) -> str | None:
    """The chunk's text with its leading ``/** */`` block removed, or None when it does not start with one."""
    lines = chunk.text.splitlines()
    if not lines or not lines[0].lstrip().startswith("/**"):
        return None
    end = next((i for i, line in enumerate(lines) if "*/" in line), None)
    if end is None or lines[end].split("*/", 1)[1].strip():
        return None
    rest = lines[end + 1 :]
    if len([line for line in rest if line.strip()]) < 3:
        return None
    return textwrap.dedent("\n".join(rest)).strip("\n") + "\n"


def _samples_of_file(path: Path, package: str) -> list[CodeSample]:
    language = language_for_path(path.name)
    if language not in ("javascript", "typescript", "tsx"):
        return []
    try:
        if path.stat().st_size > 400_000:
            return []
        source = path.read_bytes()
    except OSError:
        return []
    found: list[CodeSample] = []
    for chunk in chunk_source(path.name, source, language):
        if chunk.symbol_kind not in _FUNCTIONS or not chunk.docstring or chunk.part != 1 or chunk.parts != 1:
            continue
        text = _without_jsdoc(chunk)
        query = _first_sentence(chunk.docstring)
        if text is None or not 200 <= len(text) <= 4000 or len(query) < 25 or len(query.split()) < 4:
            continue
        found.append(CodeSample(text=text, query=query, language=language, origin=f"{package}: {chunk.qualified_name}"))
    return found


def _package_of(path: Path, root: Path) -> str:
    parts = path.relative_to(root).parts
    return "/".join(parts[:2]) if parts[0].startswith("@") else parts[0]


def _family_of(package: str) -> str:
    """The cap's unit: a scope (``@azure``) counts as one package, so no vendor fills the sample."""
    return package.split("/", 1)[0]


def extract_js_samples(
    roots: Sequence[Path], limit: int, seed: int, per_file: int = 2, per_package: int = 30
) -> list[CodeSample]:
    """JSDoc-documented functions from a shuffled walk of ``roots`` (see the module docstring)."""
    files: list[tuple[Path, Path]] = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
            files.extend(
                (root, Path(dirpath) / f)
                for f in sorted(filenames)
                if f.endswith(_EXTENSIONS) and not f.endswith((".d.ts", ".min.js", ".d.mts", ".d.cts"))
            )
    rng = random.Random(seed)
    rng.shuffle(files)
    by_package: dict[str, int] = defaultdict(int)
    seen: set[str] = set()
    samples: list[CodeSample] = []
    for root, path in files:
        package = _package_of(path, root)
        family = _family_of(package)
        if by_package[family] >= per_package:
            continue
        candidates = _samples_of_file(path, package)
        rng.shuffle(candidates)
        taken = 0
        for sample in candidates:
            keys = (sample.query.lower(), content_hash(" ".join(sample.text.split())))
            if any(k in seen for k in keys) or taken >= per_file or by_package[family] >= per_package:
                continue
            seen.update(keys)
            samples.append(sample)
            taken += 1
            by_package[family] += 1
        if len(samples) >= limit:
            break
    return samples[:limit]
