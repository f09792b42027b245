"""Outlines: a piece's signatures and where the rest is, for context that is likely but not sure.

A stage's context is best as a few whole pieces the ranker is sure of, plus pointers to the
candidates it is less sure of. An outline is that pointer: per chunk the piece holds, its
signature (or heading) lines and the first line of its docstring (or of the section's prose),
then how many lines the whole has; the citation line rendered above it (``path:start-end``) says
where they are, for an agent to read with ``read_file`` or ``get_ast_node``. It
costs about a tenth of the whole piece (``bench/retrieval_quality.py``: 37 against 315 tokens on
the mean Python function). Only index pieces (code and document chunks with a line range) have
outlines; facts, decisions, web results and advisories are always given whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from daemon.core.models import Chunk, ChunkKind
from daemon.retrieval.models import Attribution

__all__ = ["outline_text"]

_MAX_LINE = 160
_MAX_SIGNATURE_LINES = 8
_WORTH_IT = 0.6
"""An outline is used only when it is under this share of the whole text."""


def outline_text(text: str, attribution: Attribution, chunks: Sequence[Chunk]) -> str | None:
    """The outline of a piece, or None when it has none or it would not be much shorter than ``text``."""
    a = attribution
    if not chunks or a.path is None or a.start_line is None or a.end_line is None:
        return None
    heads = [line for chunk in chunks for line in _head(chunk)]
    if not heads:
        return None
    # the citation line above an outline already says where the whole is (path:start-end)
    outline = "\n".join(heads) + f"\n... (outline of {a.end_line - a.start_line + 1} lines)"
    return outline if len(outline) < _WORTH_IT * len(text) else None


def _head(chunk: Chunk) -> list[str]:
    """The signature (or heading) lines and a one-line summary of one chunk."""
    body = [line.strip() for line in chunk.text.splitlines() if line.strip()]
    if not body:
        return []
    if chunk.kind is ChunkKind.DOCS:
        first = body[0]
        prose = next((line for line in body[1:] if not line.startswith(("#", "```", "|", "---"))), None)
        return [_short(first), *([_short(prose)] if prose else [])]
    summary = _first_line(chunk.docstring) if chunk.docstring else None
    return [*(_short(line) for line in _signature_lines(body)), *([f"    {_short(summary)}"] if summary else [])]


def _signature_lines(body: Sequence[str]) -> list[str]:
    """The definition's first line, and the next ones while its brackets are open (verbatim source
    lines, so a claim quoting them is grounded in the file); decorators and annotations skipped."""
    start = next((i for i, line in enumerate(body) if not line.startswith("@")), 0)
    taken: list[str] = []
    depth = 0
    for line in body[start : start + _MAX_SIGNATURE_LINES]:
        taken.append(line)
        depth += sum(line.count(c) for c in "([") - sum(line.count(c) for c in ")]")
        if depth <= 0:
            break
    return taken


def _first_line(docstring: str) -> str | None:
    for line in docstring.splitlines():
        stripped = line.strip().strip("\"'").strip()
        if stripped:
            return stripped
    return None


def _short(line: str) -> str:
    return line if len(line) <= _MAX_LINE else line[: _MAX_LINE - 3] + "..."
