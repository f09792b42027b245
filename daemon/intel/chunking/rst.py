"""reStructuredText: one ``DOCS``/``SECTION`` chunk per section title, found line by line.

A title is a non-indented text line directly under a blank line (or the start of the file) and
directly over an *adornment*: a line at column 0 made of one repeated punctuation character, at
least as long as the title (display width, so CJK titles count double) or at least 4 long.
An overlined title has an adornment line above it too, of the same character; its title may be
indented. Levels follow the order in which adornment styles (character, overlined or not) first
appear, as docutils does. Indented text (literal blocks, directive bodies) never holds a title
unless overlined, and an adornment must start at column 0, so code samples do not confuse it.
Chunks have the same shape as Markdown sections (see ``chunking.markdown``).
"""

from __future__ import annotations

import unicodedata

from daemon.core.models import Chunk, ChunkKind
from daemon.intel.chunking._common import ChunkSpec, SourceText
from daemon.intel.chunking.markdown import Heading, emit_sections

__all__ = ["RstChunker", "find_titles"]

_ADORNMENT_CHARS = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def _adornment(line: str) -> str | None:
    """The character of an adornment line, or None."""
    text = line.rstrip()
    if len(text) < 2:
        return None
    char = text[0]
    if char not in _ADORNMENT_CHARS or text.count(char) != len(text):
        return None
    return char


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _fits(adornment: str, title: str) -> bool:
    length = len(adornment.rstrip())
    return length >= 4 or length >= _width(title)


def _blank_before(lines: list[str], row: int) -> bool:
    return row == 0 or not lines[row - 1].strip()


def find_titles(lines: list[str]) -> list[tuple[int, tuple[str, bool], str]]:
    """``(first row, (char, overlined), title)`` for every section title, in order."""
    found: list[tuple[int, tuple[str, bool], str]] = []
    count = len(lines)
    row = 0
    while row < count - 1:
        line = lines[row]
        char = _adornment(line) if line[:1] in _ADORNMENT_CHARS else None
        if char is not None and row + 2 < count and _blank_before(lines, row):
            title = lines[row + 1].strip()
            under = lines[row + 2]
            if (
                title
                and _adornment(under) == char
                and len(under.rstrip()) == len(line.rstrip())
                and _fits(line, title)
                and _adornment(lines[row + 1]) is None
            ):
                found.append((row, (char, True), title))
                row += 3
                continue
        if char is None and line.strip() and not line[0].isspace() and _blank_before(lines, row):
            under = lines[row + 1]
            under_char = _adornment(under) if under[:1] in _ADORNMENT_CHARS else None
            if under_char is not None and _fits(under, line.strip()):
                found.append((row, (under_char, False), line.strip()))
                row += 2
                continue
        row += 1
    return found


class RstChunker:
    """Section chunks of a reStructuredText file."""

    language = "rst"

    def chunk(self, path: str, source: bytes, *, max_chunk_lines: int) -> list[Chunk]:
        src = SourceText(source)
        styles: dict[tuple[str, bool], int] = {}
        headings: list[Heading] = []
        for row, style, title in find_titles(src.lines):
            level = styles.setdefault(style, len(styles) + 1)
            headings.append(Heading(row, level, " ".join(title.split())))
        spec = ChunkSpec(path=path, language=self.language, kind=ChunkKind.DOCS, max_lines=max_chunk_lines)
        return emit_sections(spec, src, headings, marker="#")
