"""Shared pieces of the chunkers: the decoded source, node helpers, text normalizers, splitting.

Line numbers: Tree-sitter rows count ``\\n`` bytes, and ``SourceText`` splits the decoded text on
``\\n`` only (never ``str.splitlines``, which also breaks on U+2028, form feeds and lone ``\\r``),
so a row is the same line in both worlds whatever the non-ASCII content. The file is decoded
once; names and signatures are decoded from small byte slices.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from tree_sitter import Node

from daemon.core.models import Chunk, ChunkKind, SymbolKind

__all__ = [
    "MAX_SIGNATURE_CHARS",
    "ChunkSpec",
    "SourceText",
    "clean_comment",
    "dedent_doc",
    "emit",
    "first_child",
    "last_row",
    "module_name",
    "normalize_signature",
    "piece_chunks",
    "python_string_value",
    "split_rows",
]

MAX_SIGNATURE_CHARS = 600

_STRING_PREFIX = re.compile(r"^[rRuUbBfF]{0,2}")


class SourceText:
    """The raw bytes of a file and its lines, decoded once (invalid UTF-8 becomes U+FFFD)."""

    __slots__ = ("data", "lines")

    def __init__(self, data: bytes) -> None:
        self.data = data
        text = data.decode("utf-8", "replace")
        if text.startswith("\ufeff"):
            text = text[1:]
        if "\r\n" in text:
            text = text.replace("\r\n", "\n")
        self.lines: list[str] = text.split("\n")

    def slice(self, start_byte: int, end_byte: int) -> str:
        """The text of a byte range (Tree-sitter offsets)."""
        return self.data[start_byte:end_byte].decode("utf-8", "replace")

    def node_text(self, node: Node | None) -> str:
        return "" if node is None else self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def rows_text(self, first: int, last: int) -> str:
        """Lines ``first..last`` (0-based rows, inclusive) joined with ``\\n``."""
        return "\n".join(self.lines[first : last + 1])

    def is_blank(self, row: int) -> bool:
        return not self.lines[row].strip()

    def trim(self, first: int, last: int) -> tuple[int, int]:
        """Shrink a row range past blank lines at both ends; ``first > last`` when all blank."""
        lines = self.lines
        while first <= last and not lines[first].strip():
            first += 1
        while last >= first and not lines[last].strip():
            last -= 1
        return first, last


def first_child(node: Node, *, named: bool = False) -> Node | None:
    """The first (named) child, or None (``Node.child(0)`` raises on a leaf)."""
    if named:
        return node.named_child(0) if node.named_child_count else None
    return node.child(0) if node.child_count else None


def last_row(node: Node) -> int:
    """The last row that holds text of ``node`` (a node ending at column 0 ends on the row before)."""
    end = node.end_point
    if end.column == 0 and end.row > node.start_point.row:
        return end.row - 1
    return end.row


def module_name(path: str) -> tuple[str, str]:
    """``(stem, path without extension)`` for a workspace-relative POSIX path."""
    slash = path.rfind("/")
    dot = path.rfind(".")
    base = path[:dot] if dot > slash + 1 else path
    return base[slash + 1 :], base


def normalize_signature(text: str) -> str:
    """Collapse whitespace; drop the padding a multi-line parameter list leaves inside brackets
    (``f(\n    a,\n    b,\n)`` -> ``f(a, b)``). Plain ``str`` methods only: regexes cost 5x here."""
    if "\n" in text or "  " in text or "\t" in text:
        sig = " ".join(text.split())
        if "( " in sig or "[ " in sig:
            sig = sig.replace("( ", "(").replace("[ ", "[")
        if " )" in sig or " ]" in sig:
            sig = sig.replace(", )", ")").replace(", ]", "]").replace(" )", ")").replace(" ]", "]")
    else:
        sig = text.strip()
    if len(sig) > MAX_SIGNATURE_CHARS:
        sig = sig[: MAX_SIGNATURE_CHARS - 1] + "…"
    return sig


def _strip_line_marker(line: str) -> str:
    line = line.strip()
    if line.startswith("//"):
        line = line.lstrip("/")
        if line.startswith("!"):
            line = line[1:]
    elif line.startswith("#"):
        line = line.lstrip("#")
    return line[1:] if line.startswith(" ") else line


def _strip_block_line(line: str) -> str:
    line = line.strip()
    if line.startswith("*"):
        line = line[1:]
        return line[1:] if line.startswith(" ") else line
    return line


def clean_comment(comments: Sequence[str]) -> str | None:
    """The prose of a doc comment block (``/** */``, ``/* */``, ``///``, ``//!``, ``//``), or None."""
    out: list[str] = []
    for raw in comments:
        text = raw.strip()
        if text.startswith("/*"):
            text = text[2:-2] if text.endswith("*/") else text[2:]
            text = text.lstrip("*!")
            out.extend(_strip_block_line(line) for line in text.split("\n"))
        else:
            out.extend(_strip_line_marker(line) for line in text.split("\n"))
    doc = "\n".join(out).strip()
    return doc or None


def dedent_doc(text: str, indent: int | None = None) -> str:
    """``inspect.cleandoc``: the first line stripped, the others dedented by their common indent.

    ``indent``, when known (a docstring's column), is taken as that common indent: one
    ``str.replace`` instead of measuring every line. Lines indented less keep their indent.
    """
    if "\n" not in text:
        return text.strip()
    if "\t" in text:
        text = text.expandtabs()
    if indent is None:
        lines = text.split("\n")[1:]
        indent = min((len(line) - len(line.lstrip(" ")) for line in lines if line.strip()), default=0)
    if indent:
        text = text.replace("\n" + " " * indent, "\n")
    return text.strip()


def python_string_value(raw: str, indent: int | None = None) -> str | None:
    """The cleaned content of a Python string literal used as a docstring (escapes left as written).

    ``indent`` is the literal's column, the usual indent of its continuation lines."""
    body = raw if raw[:1] in "\"'" else _STRING_PREFIX.sub("", raw, count=1)
    for quote in ('"""', "'''", '"', "'"):
        if body.startswith(quote) and body.endswith(quote) and len(body) >= 2 * len(quote):
            return dedent_doc(body[len(quote) : -len(quote)], indent) or None
    return None


@dataclass(slots=True, kw_only=True)
class ChunkSpec:
    """What every chunk of one file shares."""

    path: str
    language: str
    kind: ChunkKind
    imports: tuple[str, ...] = ()
    max_lines: int = 150


def split_rows(rows: Sequence[int], max_lines: int, header_lines: int) -> list[Sequence[int]]:
    """Split ``rows`` into the fewest pieces whose texts, counting the ``header_lines`` that every
    piece after the first starts with, hold at most ``max_lines`` lines, with text lengths that
    differ by at most one line."""
    total = len(rows)
    if total <= max_lines:
        return [rows]
    room = max(1, max_lines - header_lines)
    parts = 1 + -(-(total - max_lines) // room)
    base, extra = divmod(total + (parts - 1) * header_lines, parts)
    pieces: list[Sequence[int]] = []
    start = 0
    for index in range(parts):
        size = base + (1 if index < extra else 0) - (header_lines if index else 0)
        end = total if index == parts - 1 else start + max(1, size)
        pieces.append(rows[start:end])
        start = end
    return [piece for piece in pieces if piece]


def emit(
    out: list[Chunk],
    spec: ChunkSpec,
    src: SourceText,
    segments: Sequence[tuple[int, int]],
    *,
    symbol_kind: SymbolKind,
    name: str | None,
    qualified_name: str | None,
    signature: str | None = None,
    docstring: str | None = None,
    header: str | None = None,
    span: tuple[int, int] | None = None,
) -> None:
    """Append the chunk(s) for rows ``segments`` (0-based, inclusive, ascending) to ``out``.

    More than ``spec.max_lines`` lines are split into parts; when ``header`` is given, every part
    after the first starts with the line ``f"{header} (part {i}/{n})"`` (for code: the signature as
    a comment).
    ``span`` is the symbol's full row range when ``segments`` leave rows out at its ends.
    """
    if len(segments) == 1:
        total = segments[0][1] - segments[0][0] + 1
    else:
        total = sum(last - first + 1 for first, last in segments)
    if total <= 0:
        return
    lines = src.lines
    first, last = span if span is not None else (segments[0][0], segments[-1][1])
    pieces: list[tuple[str, int, int]] = []  # text, first row, last row
    if total <= spec.max_lines:
        if len(segments) == 1:
            text = "\n".join(lines[first : last + 1])
        else:
            text = "\n".join(line for a, b in segments for line in lines[a : b + 1])
        if text and not text.isspace():
            pieces.append((text, first, last))
    else:
        rows = [row for a, b in segments for row in range(a, b + 1)]
        split = split_rows(rows, spec.max_lines, 1 if header is not None else 0)
        bodies = [(piece, body) for piece in split if not (body := "\n".join(lines[row] for row in piece)).isspace()]
        count = len(bodies)
        for index, (piece, body) in enumerate(bodies, start=1):
            text = body if header is None or index == 1 else f"{header} (part {index}/{count})\n{body}"
            pieces.append((text, first if index == 1 else piece[0], last if index == count else piece[-1]))
    out.extend(
        piece_chunks(
            spec,
            pieces,
            symbol_kind=symbol_kind,
            name=name,
            qualified_name=qualified_name,
            signature=signature,
            docstring=docstring,
        )
    )


def piece_chunks(
    spec: ChunkSpec,
    pieces: Sequence[tuple[str, int, int]],
    *,
    symbol_kind: SymbolKind,
    name: str | None,
    qualified_name: str | None,
    signature: str | None = None,
    docstring: str | None = None,
) -> Iterator[Chunk]:
    """One chunk per piece (its text, first and last row, 0-based), numbered ``part`` i of ``len(pieces)``."""
    parts = len(pieces)
    for index, (text, start_row, end_row) in enumerate(pieces, start=1):
        yield Chunk(
            path=spec.path,
            kind=spec.kind,
            symbol_kind=symbol_kind,
            language=spec.language,
            text=text,
            start_line=start_row + 1,
            end_line=end_row + 1,
            name=name,
            qualified_name=qualified_name,
            signature=signature,
            docstring=docstring,
            imports=spec.imports,
            part=index,
            parts=parts,
        )
