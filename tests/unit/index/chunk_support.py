"""Code chunks for the embedder tests, built the way the Python chunker would shape them."""

from __future__ import annotations

from daemon.core.models import Chunk, ChunkKind, SymbolKind

__all__ = ["python_function"]


def python_function(text: str, name: str, *, qualified_name: str | None = None, docstring: str | None = None) -> Chunk:
    """A Python function chunk of ``text`` in ``pkg/<name>.py``, its first line as the signature."""
    return Chunk(
        path=f"pkg/{name}.py",
        kind=ChunkKind.CODE,
        symbol_kind=SymbolKind.FUNCTION,
        language="python",
        text=text,
        start_line=1,
        end_line=text.count("\n") + 1,
        name=name,
        qualified_name=qualified_name or name,
        signature=text.splitlines()[0],
        docstring=docstring,
    )
