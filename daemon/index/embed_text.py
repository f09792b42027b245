"""What text of a chunk the dense model embeds.

Two variants are measured in ``bench/embedding.py``:

* ``whole_text``: a short header (path, qualified name, and the signature and docstring when the text
  does not already hold them, as in the later pieces of a split body) followed by the chunk text.
  The model truncates it at ``embedding.max_tokens``, so the header always survives.
* ``compact_text``: the qualified name split into words, the signature, the docstring, then the
  identifiers of the body (split into words, each once, keywords left out). Typically a third of the
  tokens of the whole text.

Docs chunks (heading sections) always use the whole variant: their text is already prose.

Default (``document_text``): ``compact_text``. Measured by ``bench/embedding.py`` on 600 documented
Python functions from site-packages (2 shared cores; query = first docstring sentence, document = the
function without its docstring; dense MRR@10, then chunks/s as the median of interleaved rounds):

    variant   max_tokens  tokens/chunk  MRR@10  chunks/s
    whole        256          212        0.762    ~16
    compact      256          139        0.783    ~22
    whole        128          124        0.778    ~50
    compact      128          102        0.784    ~47

The compact text is at least as good for recall and needs about a third fewer tokens at the same
``max_tokens``, and it sees identifiers from the whole body where the whole text is cut at the
limit. In hybrid search (RRF with the BM25 vector) all four land within 0.826-0.839 MRR@10.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from daemon.core.models import Chunk, ChunkKind
from daemon.index.sparse import split_identifier

__all__ = [
    "DEFAULT_VARIANT",
    "TEXT_VARIANTS",
    "TextVariant",
    "compact_text",
    "document_text",
    "whole_text",
]


TextVariant = Literal["whole", "compact"]
DEFAULT_VARIANT: TextVariant = "compact"
MAX_BODY_IDENTIFIERS = 80

_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Keywords and ubiquitous names of the languages ided chunks; they say nothing about a function.
_KEYWORDS_TEXT = """
    and as assert async await break case catch char class const continue def default defer del do elif else
    enum except export extends false final finally fn for from func function global go goto if impl implements
    import in instanceof interface is lambda let loop match mod mut new nil none nonlocal not null or package
    pass pub raise return self static struct super switch this throw throws true try type typeof undefined
    use var void where while with yield cls int str bool float
"""
_KEYWORDS = frozenset(_KEYWORDS_TEXT.split())


def _first_line(text: str) -> str:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped:
            return stripped
    return ""


def _contained(part: str | None, text: str) -> bool:
    """Whether ``part`` (a signature or docstring) already appears in ``text``, judged by its first line."""
    if not part:
        return True
    head = _first_line(part)
    return not head or head in text


def _words(identifier: str) -> str:
    return " ".join(split_identifier(identifier))


def whole_text(chunk: Chunk) -> str:
    """Header (path, qualified name, missing signature/docstring) and the whole chunk text."""
    lines = [chunk.path]
    if chunk.qualified_name:
        lines.append(chunk.qualified_name)
    if not _contained(chunk.signature, chunk.text):
        lines.append(chunk.signature or "")
    if not _contained(chunk.docstring, chunk.text):
        lines.append(chunk.docstring or "")
    lines.append(chunk.text)
    return "\n".join(lines)


def compact_text(chunk: Chunk) -> str:
    """Name words, signature, docstring and the body's identifiers (code); ``whole_text`` for docs."""
    if chunk.kind is ChunkKind.DOCS:
        return whole_text(chunk)
    name = chunk.qualified_name or chunk.name or ""
    name_words = " ".join(_words(part) for part in re.split(r"[.:#/\\]+", name) if part)
    lines = [name_words] if name_words else []
    if chunk.signature:
        lines.append(chunk.signature)
    if chunk.docstring:
        lines.append(chunk.docstring)
    seen = {w.lower() for w in _IDENT_RE.findall(" ".join(lines))}
    seen.update(_KEYWORDS)
    body: list[str] = []
    for ident in _IDENT_RE.findall(chunk.text):
        low = ident.lower()
        if low in seen or len(ident) < 2:
            continue
        seen.add(low)
        words = _words(ident)
        if words:
            body.append(words)
            if len(body) >= MAX_BODY_IDENTIFIERS:
                break
    if body:
        lines.append(" ".join(body))
    return "\n".join(lines) if lines else chunk.text


TEXT_VARIANTS: dict[TextVariant, Callable[[Chunk], str]] = {"whole": whole_text, "compact": compact_text}


def document_text(chunk: Chunk) -> str:
    """The text the dense model embeds for ``chunk`` (the default variant; see the module doc)."""
    return TEXT_VARIANTS[DEFAULT_VARIANT](chunk)
