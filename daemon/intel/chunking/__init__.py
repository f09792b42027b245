"""Chunking: turn one file's bytes into retrievable ``Chunk``s.

``chunk_source(path, source, language)`` is the single entry point. Per language:

* code (``python``, ``javascript``, ``typescript``, ``tsx``, ``go``, ``rust``, ``java``, ``c``,
  ``cpp``): one ``CODE`` chunk per function/method/class-like symbol plus ``MODULE`` chunks for
  substantive top-level code outside symbols (rules in ``chunking._tree``, per-language details in
  each module);
* ``markdown`` and ``rst``: one ``DOCS`` chunk per heading section;
* ``text`` (and any unknown id): overlapping line windows (``chunking.text``).

Guarantees: deterministic; sorted by ``start_line`` (then longest first); line numbers 1-based and
inclusive; no chunk with blank text; an empty or blank file gives ``[]``. If a chunker raises
(a grammar bug, pathological nesting), the file falls back to line windows instead of failing.
Chunkers are stateless and safe to call from several threads (parsers are per thread).
"""

from __future__ import annotations

import logging
from typing import Protocol

from daemon.core.languages import CODE_LANGUAGES
from daemon.core.models import Chunk, ChunkKind
from daemon.intel.chunking.c_family import CChunker, CppChunker
from daemon.intel.chunking.ecmascript import EcmaScriptChunker
from daemon.intel.chunking.go import GoChunker
from daemon.intel.chunking.java import JavaChunker
from daemon.intel.chunking.markdown import MarkdownChunker
from daemon.intel.chunking.python import PythonChunker
from daemon.intel.chunking.rst import RstChunker
from daemon.intel.chunking.rust import RustChunker
from daemon.intel.chunking.text import text_kind, window_chunks

__all__ = ["chunk_source"]

logger = logging.getLogger(__name__)


class _Chunker(Protocol):
    def chunk(self, path: str, source: bytes, *, max_chunk_lines: int) -> list[Chunk]: ...


_CHUNKERS: dict[str, _Chunker] = {
    "python": PythonChunker("python"),
    "javascript": EcmaScriptChunker("javascript"),
    "typescript": EcmaScriptChunker("typescript"),
    "tsx": EcmaScriptChunker("tsx"),
    "go": GoChunker("go"),
    "rust": RustChunker("rust"),
    "java": JavaChunker("java"),
    "c": CChunker("c"),
    "cpp": CppChunker("cpp"),
    "markdown": MarkdownChunker(),
    "rst": RstChunker(),
}


def chunk_source(
    path: str,
    source: bytes,
    language: str,
    *,
    max_chunk_lines: int = 150,
    text_window_lines: int = 60,
) -> list[Chunk]:
    """Chunks of one file. ``path`` is workspace-relative POSIX; ``language`` from ``language_for_path``."""
    if not source or source.isspace():
        return []
    max_chunk_lines = max(2, max_chunk_lines)
    chunker = _CHUNKERS.get(language)
    if chunker is not None:
        try:
            return chunker.chunk(path, source, max_chunk_lines=max_chunk_lines)
        except Exception:  # a chunker bug must never stop indexing: degrade to line windows
            logger.warning("chunking %s as %s failed; indexing it as line windows", path, language, exc_info=True)
    kind = ChunkKind.CODE if language in CODE_LANGUAGES else text_kind(path)
    return window_chunks(path, source, language=language, kind=kind, window_lines=text_window_lines)
