"""The generic code chunker: walk a Tree-sitter tree for symbols, then turn symbols into chunks.

Each language module subclasses ``TreeChunker`` with a table of node-type handlers and the set of
container node types to descend into. The walk only visits statement-level nodes (module, class
and function bodies, ``if``/``try`` blocks, namespaces, ...): expressions are never entered, which
keeps the per-node Python overhead small.

Chunk rules (all languages):

* One chunk per symbol. Its range starts at its decorators/attributes or at the comment block on
  the lines directly above it (no blank line between), whichever comes first, and ends with its
  body. That leading comment block is the ``docstring`` for languages without docstrings.
* Functions and methods keep their whole text (nested functions included; those also get their
  own chunk, qualified ``outer.inner``). Classes, structs, interfaces, traits, impls, enums and
  namespaces keep their header, fields and the *signatures* of member symbols: the member bodies
  are cut out, because every member has its own chunk.
* ``start_line``/``end_line`` always span the whole symbol (leading comment and decorators to the
  end of the body), also for a class chunk whose text leaves member bodies out.
* A text longer than ``max_chunk_lines`` lines is split into balanced parts (each part's text, its
  header line included, holds at most ``max_chunk_lines`` lines); every part after the first starts
  with a comment line ``<comment> <signature> (part i/n)``; the parts' ranges tile the symbol's.
* Top-level regions that no symbol covers become ``MODULE`` chunks (named after the file, qualified
  with the path without its extension) when they hold more than imports, package clauses,
  comments, blank lines and brackets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Node

from daemon.core.models import Chunk, ChunkKind, SymbolKind
from daemon.intel.chunking._common import (
    ChunkSpec,
    SourceText,
    clean_comment,
    emit,
    last_row,
    module_name,
    normalize_signature,
)
from daemon.intel.parsers import parse

__all__ = ["FileState", "Handler", "Scope", "Symbol", "TreeChunker"]

_FUNCTION_KINDS = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD})
_MEMBER_SCOPES = frozenset(
    {
        SymbolKind.CLASS,
        SymbolKind.STRUCT,
        SymbolKind.INTERFACE,
        SymbolKind.ENUM,
        SymbolKind.TRAIT,
        SymbolKind.IMPL,
    }
)
_PUNCTUATION = frozenset("{}()[];,")


@dataclass(slots=True, eq=False)
class Symbol:
    """A symbol found in the tree; rows are 0-based and inclusive."""

    name: str
    qualified_name: str
    kind: SymbolKind
    start_row: int
    end_row: int
    header_end_row: int
    signature: str
    docstring: str | None
    children: list[Symbol] = field(default_factory=list["Symbol"])


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a symbol sits: the qualified name of its parent and the parent's kind."""

    prefix: str = ""
    kind: SymbolKind | None = None

    def qualify(self, name: str) -> str:
        return f"{self.prefix}.{name}" if self.prefix else name

    @property
    def in_type(self) -> bool:
        return self.kind in _MEMBER_SCOPES

    def function_kind(self) -> SymbolKind:
        """METHOD inside a class-like symbol, FUNCTION elsewhere (module, namespace, function)."""
        return SymbolKind.METHOD if self.kind in _MEMBER_SCOPES else SymbolKind.FUNCTION

    def enter(self, symbol: Symbol) -> Scope:
        return Scope(symbol.qualified_name, symbol.kind)


class FileState:
    """What one walk collects."""

    __slots__ = ("imports", "module_doc", "src", "symbols", "trivial_rows")

    def __init__(self, src: SourceText) -> None:
        self.src = src
        self.imports: list[str] = []
        self.trivial_rows: set[int] = set()
        self.symbols: list[Symbol] = []
        self.module_doc: tuple[int, str] | None = None

    def add_import(self, name: str) -> None:
        name = " ".join(name.split())
        if name:
            self.imports.append(name)

    def mark_trivial(self, node: Node) -> None:
        """Rows of an import/package statement: they alone do not make a module chunk."""
        self.trivial_rows.update(range(node.start_point.row, last_row(node) + 1))


Handler = Callable[[FileState, Node, Scope, list[Symbol]], None]


class TreeChunker:
    """Base of the per-language code chunkers; subclasses fill in the class attributes and handlers."""

    comment_prefix: str = "//"
    comment_types: frozenset[str] = frozenset({"comment"})
    attach_types: frozenset[str] = frozenset()
    containers: frozenset[str] = frozenset()
    doc_from_comments: bool = True
    signature_strip: str = " ;{"
    comment_line_prefixes: tuple[str, ...] = ("//", "/*", "*")
    nested_markers: tuple[bytes, ...] = ()
    lead_line_prefixes: tuple[str, ...] = ()
    """When set: a leading comment/attribute block can only end on a line starting with one of these."""

    def __init__(self, language: str) -> None:
        self.language = language
        self._lead_types = self.comment_types | self.attach_types
        self._handlers = self.handlers()

    def handlers(self) -> dict[str, Handler]:
        raise NotImplementedError

    # -- walking ---------------------------------------------------------------------------

    def walk(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        """Dispatch the children of ``node`` to handlers; descend into containers."""
        handlers = self._handlers
        containers = self.containers
        for child in node.children:
            kind = child.type
            handler = handlers.get(kind)
            if handler is not None:
                handler(st, child, scope, out)
            elif kind in containers:
                self.walk(st, child, scope, out)

    def leading(self, st: FileState, node: Node) -> tuple[int, list[Node]]:
        """First row of ``node`` with its attributes and the comment block directly above it."""
        row = node.start_point.row
        comments: list[Node] = []
        quick = self.lead_line_prefixes
        if quick and (row == 0 or not st.src.lines[row - 1].lstrip().startswith(quick)):
            return row, comments  # the line above cannot end a comment: no sibling walk needed
        prev = node.prev_sibling
        while prev is not None and prev.type in self._lead_types:
            if last_row(prev) < row - 1:
                break
            before = prev.prev_sibling
            is_comment = prev.type in self.comment_types
            if is_comment and before is not None and last_row(before) == prev.start_point.row:
                break  # a trailing comment of the code before it, not a doc comment
            row = prev.start_point.row
            if is_comment:
                comments.append(prev)
            prev = before
        comments.reverse()
        return row, comments

    def add_symbol(
        self,
        st: FileState,
        out: list[Symbol],
        *,
        outer: Node,
        name: str,
        kind: SymbolKind,
        scope: Scope,
        body: Node | None,
        sig_node: Node | None = None,
        sig_end: int | None = None,
        docstring: str | None = None,
    ) -> Symbol:
        """Record a symbol spanning ``outer``; its signature runs from ``sig_node`` (default
        ``outer``) up to ``sig_end`` (default: the body's start, or the end of ``outer``)."""
        start_row, comments = self.leading(st, outer)
        end_row = last_row(outer)
        head = outer if sig_node is None else sig_node
        if sig_end is None:
            sig_end = body.start_byte if body is not None else outer.end_byte
        raw = st.src.data[head.start_byte : sig_end].rstrip()
        header_end = end_row if body is None and sig_end >= outer.end_byte else head.start_point.row + raw.count(b"\n")
        signature = normalize_signature(raw.decode("utf-8", "replace")).rstrip(self.signature_strip)
        if docstring is None and comments and self.doc_from_comments:
            docstring = clean_comment([st.src.node_text(c) for c in comments])
        symbol = Symbol(
            name=name,
            qualified_name=scope.qualify(name),
            kind=kind,
            start_row=start_row,
            end_row=end_row,
            header_end_row=min(header_end, end_row),
            signature=signature,
            docstring=docstring,
        )
        out.append(symbol)
        return symbol

    def trivial(self, st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
        """Handler for a line that is no content of its own (``package x;``, ``#![attr]``)."""
        st.mark_trivial(node)

    @staticmethod
    def import_of(field: str) -> Handler:
        """Handler for a statement that imports the one module its ``field`` names: a trivial line."""

        def handle(st: FileState, node: Node, scope: Scope, out: list[Symbol]) -> None:
            st.mark_trivial(node)
            st.add_import(st.src.node_text(node.child_by_field_name(field)))

        return handle

    def add_named(
        self,
        st: FileState,
        out: list[Symbol],
        node: Node,
        scope: Scope,
        *,
        kind: SymbolKind,
        outer: Node | None = None,
        sig_node: Node | None = None,
        default_name: str | None = None,
        require_body: bool = False,
        nested: bool = True,
    ) -> Symbol | None:
        """The usual definition: a symbol for ``node`` named by its ``name`` field (``default_name``
        when it has none), covering ``outer`` (default ``node``), whose ``body`` field is then walked
        for nested definitions (unless ``nested`` is False). Nothing is recorded without a name, or
        without a body when ``require_body``; the symbol otherwise."""
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if (name is None and default_name is None) or (require_body and body is None):
            return None
        symbol = self.add_symbol(
            st,
            out,
            outer=node if outer is None else outer,
            sig_node=sig_node,
            name=st.src.node_text(name) if name is not None else str(default_name),
            kind=kind,
            scope=scope,
            body=body,
        )
        if nested:
            self.descend(st, body, symbol)
        return symbol

    def descend(self, st: FileState, body: Node | None, symbol: Symbol) -> None:
        """Walk a symbol's body for nested symbols.

        A function body is only walked when its bytes hold one of ``nested_markers`` (when the
        language sets them): a body without ``def ``/``class `` defines nothing, and ``bytes.find``
        (memchr speed) is far cheaper than visiting its statements.
        """
        if body is None:
            return
        markers = self.nested_markers
        if markers and symbol.kind in _FUNCTION_KINDS:
            data, start, end = st.src.data, body.start_byte, body.end_byte
            if all(data.find(marker, start, end) < 0 for marker in markers):
                return
        self.walk(st, body, Scope(symbol.qualified_name, symbol.kind), symbol.children)

    def prepare(self, st: FileState, root: Node) -> None:
        """Hook run before the walk (e.g. the Python module docstring)."""

    # -- chunk assembly --------------------------------------------------------------------

    def is_trivial_line(self, stripped: str) -> bool:
        """A line that alone does not make a module region worth a chunk."""
        return stripped.startswith(self.comment_line_prefixes) or all(ch in _PUNCTUATION for ch in stripped)

    def chunk(self, path: str, source: bytes, *, max_chunk_lines: int) -> list[Chunk]:
        tree = parse(self.language, source)
        st = FileState(SourceText(source))
        root = tree.root_node
        self.prepare(st, root)
        self.walk(st, root, Scope(), st.symbols)
        spec = ChunkSpec(
            path=path,
            language=self.language,
            kind=ChunkKind.CODE,
            imports=tuple(dict.fromkeys(st.imports)),
            max_lines=max_chunk_lines,
        )
        out: list[Chunk] = []
        for symbol in st.symbols:
            self._emit_symbol(out, spec, st.src, symbol)
        self._emit_module(out, spec, st)
        out.sort(key=lambda c: (c.start_line, -c.end_line))
        return out

    def _emit_symbol(self, out: list[Chunk], spec: ChunkSpec, src: SourceText, symbol: Symbol) -> None:
        if symbol.children and symbol.kind not in _FUNCTION_KINDS:
            segments = _elide_members(symbol)
        else:
            segments = [(symbol.start_row, symbol.end_row)]
        signature = symbol.signature
        emit(
            out,
            spec,
            src,
            segments,
            symbol_kind=symbol.kind,
            name=symbol.name,
            qualified_name=symbol.qualified_name,
            signature=signature or None,
            docstring=symbol.docstring,
            header=f"{self.comment_prefix} {signature}",
            span=(symbol.start_row, symbol.end_row),
        )
        for child in symbol.children:
            self._emit_symbol(out, spec, src, child)

    def _emit_module(self, out: list[Chunk], spec: ChunkSpec, st: FileState) -> None:
        src = st.src
        stem, base = module_name(spec.path)
        cursor = 0
        regions: list[tuple[int, int]] = []
        for symbol in sorted(st.symbols, key=lambda s: s.start_row):
            if symbol.start_row > cursor:
                regions.append((cursor, symbol.start_row - 1))
            cursor = max(cursor, symbol.end_row + 1)
        regions.append((cursor, len(src.lines) - 1))
        for first, last in regions:
            first, last = src.trim(first, last)
            if first > last or not self._substantive(st, first, last):
                continue
            doc = st.module_doc
            emit(
                out,
                spec,
                src,
                [(first, last)],
                symbol_kind=SymbolKind.MODULE,
                name=stem,
                qualified_name=base,
                docstring=doc[1] if doc is not None and first <= doc[0] <= last else None,
            )

    def _substantive(self, st: FileState, first: int, last: int) -> bool:
        lines = st.src.lines
        trivial = st.trivial_rows
        for row in range(first, last + 1):
            if row in trivial:
                continue
            stripped = lines[row].strip()
            if stripped and not self.is_trivial_line(stripped):
                return True
        return False


def _elide_members(symbol: Symbol) -> list[tuple[int, int]]:
    """The rows of a class-like symbol without its members' bodies (their headers stay)."""
    segments: list[tuple[int, int]] = []
    cursor = symbol.start_row
    for child in sorted(symbol.children, key=lambda s: s.start_row):
        cut_first, cut_last = child.header_end_row + 1, child.end_row
        if cut_first > cut_last:
            continue
        if cut_first > cursor:
            segments.append((cursor, cut_first - 1))
        cursor = max(cursor, cut_last + 1)
    if cursor <= symbol.end_row:
        segments.append((cursor, symbol.end_row))
    return segments
