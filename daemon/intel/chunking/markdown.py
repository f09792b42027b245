"""Markdown: one ``DOCS``/``SECTION`` chunk per heading, found with tree-sitter-markdown.

* A section runs from its heading to the line before the next heading of *any* level; trailing
  blank lines are trimmed. ``name`` = the heading text (closing ``#``s removed, whitespace
  collapsed, inline markup kept), ``qualified_name`` = the heading path joined by ``" > "``
  (``Guide > Install > Linux``).
* ATX (``## x``) and setext (``x`` over ``===``/``---``) headings both count; a ``#`` line inside a
  fenced or indented code block does not (the grammar knows those blocks). Headings inside block
  quotes and list items are content, not sections.
* Content before the first heading (front matter, badges, an intro) is its own chunk, named like a
  module: ``name`` = the file's stem, ``qualified_name`` = the path without extension.
* A section longer than ``max_chunk_lines`` is split; later parts start with ``## Heading (part i/n)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from daemon.core.models import Chunk, ChunkKind, SymbolKind
from daemon.intel.chunking._common import ChunkSpec, SourceText, emit, module_name
from daemon.intel.parsers import parse

__all__ = ["Heading", "MarkdownChunker", "emit_sections"]

_CLOSING_HASHES = re.compile(r"(?:^|\s)#+\s*$")
_HEADINGS = frozenset({"atx_heading", "setext_heading"})


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading: first row of the section (0-based), level 1..6, text."""

    row: int
    level: int
    text: str


def _atx(src: SourceText, node: Node) -> Heading:
    marker = node.children[0].type if node.child_count else ""
    level = int(marker[5]) if marker.startswith("atx_h") and marker[5:6].isdigit() else 1
    content = node.child_by_field_name("heading_content")
    text = _CLOSING_HASHES.sub("", src.node_text(content)) if content is not None else ""
    return Heading(node.start_point.row, level, " ".join(text.split()))


def _setext(src: SourceText, node: Node) -> Heading:
    content = node.child_by_field_name("heading_content")
    level = 2 if any(child.type == "setext_h2_underline" for child in node.children) else 1
    return Heading(node.start_point.row, level, " ".join(src.node_text(content).split()))


def _collect(src: SourceText, node: Node, out: list[Heading]) -> None:
    for child in node.children:
        kind = child.type
        if kind == "section":
            _collect(src, child, out)
        elif kind == "atx_heading":
            out.append(_atx(src, child))
        elif kind == "setext_heading":
            out.append(_setext(src, child))


def emit_sections(spec: ChunkSpec, src: SourceText, headings: list[Heading], *, marker: str) -> list[Chunk]:
    """Chunks for the sections opened by ``headings`` (sorted by row) plus the text before them.

    ``marker`` is repeated ``level`` times before the heading in the first line of split parts.
    """
    out: list[Chunk] = []
    total = len(src.lines)
    stem, base = module_name(spec.path)
    first_row = headings[0].row if headings else total
    lead_first, lead_last = src.trim(0, first_row - 1)
    if lead_first <= lead_last:
        emit(out, spec, src, [(lead_first, lead_last)], symbol_kind=SymbolKind.SECTION, name=stem, qualified_name=base)
    stack: list[Heading] = []
    for index, heading in enumerate(headings):
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        end = headings[index + 1].row - 1 if index + 1 < len(headings) else total - 1
        first, last = src.trim(heading.row, end)
        if first > last:
            continue
        emit(
            out,
            spec,
            src,
            [(first, last)],
            symbol_kind=SymbolKind.SECTION,
            name=heading.text or None,
            qualified_name=" > ".join(h.text for h in stack),
            header=f"{marker * heading.level} {heading.text}",
        )
    return out


class MarkdownChunker:
    """Heading sections of a Markdown file."""

    language = "markdown"

    def chunk(self, path: str, source: bytes, *, max_chunk_lines: int) -> list[Chunk]:
        tree = parse("markdown", source)
        src = SourceText(source)
        headings: list[Heading] = []
        _collect(src, tree.root_node, headings)
        headings.sort(key=lambda h: h.row)
        spec = ChunkSpec(path=path, language=self.language, kind=ChunkKind.DOCS, max_lines=max_chunk_lines)
        return emit_sections(spec, src, _dedupe(headings), marker="#")


def _dedupe(headings: list[Heading]) -> list[Heading]:
    out: list[Heading] = []
    for heading in headings:
        if not out or heading.row > out[-1].row:
            out.append(heading)
    return out
