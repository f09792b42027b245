"""LSP answers -> ided's result models (positions converted, paths made workspace-relative).

Everything here is synchronous and may read files (to turn UTF-16 offsets into code-point
columns and to quote lines): async callers run it through ``asyncio.to_thread``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp

from daemon.core.intel_models import DiagnosticInfo, Location, SourceRange, SymbolInfo
from daemon.core.secret_rules import redact_secrets
from daemon.errors import InvalidToolInput
from daemon.intel.lsp.documents import from_lsp_character, read_text
from daemon.intel.workspace_paths import WorkspacePaths, secret_reason

__all__ = [
    "FileLines",
    "FlatSymbols",
    "LspTarget",
    "diagnostic_info",
    "flatten_document_symbols",
    "lsp_targets",
    "parse_hover",
    "path_of_uri",
    "symbol_kind_name",
]


_FENCE = re.compile(r"```[\w+-]*\n(.*?)```", re.DOTALL)
Severity = Literal["error", "warning", "information", "hint"]
_SEVERITY: dict[int, Severity] = {1: "error", 2: "warning", 3: "information", 4: "hint"}


@dataclass(frozen=True, slots=True, kw_only=True)
class LspTarget:
    """One location an LSP answer points at: the whole range and the name (selection) range."""

    path: Path
    range: lsp.Range
    selection: lsp.Range


def path_of_uri(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def lsp_targets(result: Any) -> list[LspTarget]:
    """Normalise ``Location | Location[] | LocationLink[] | None`` into targets (non-file URIs dropped)."""
    if result is None:
        return []
    items: Sequence[Any] = cast("Sequence[Any]", result) if isinstance(result, list | tuple) else [result]
    out: list[LspTarget] = []
    for item in items:
        if isinstance(item, lsp.LocationLink):
            path = path_of_uri(item.target_uri)
            if path is not None:
                out.append(LspTarget(path=path, range=item.target_range, selection=item.target_selection_range))
        elif isinstance(item, lsp.Location):
            path = path_of_uri(item.uri)
            if path is not None:
                out.append(LspTarget(path=path, range=item.range, selection=item.range))
    return out


def shown_lines(path: Path) -> list[str] | None:
    """A file's lines, or None when it cannot be read or holds credentials (its location alone is shown)."""
    try:
        text = read_text(path)
    except InvalidToolInput:
        return None
    return None if secret_reason(path, data=text.encode("utf-8", "replace")) is not None else text.split("\n")


class FileLines:
    """Lines of files referred to by an answer, read once per call (bounded), for positions and quotes."""

    def __init__(
        self,
        paths: WorkspacePaths,
        *,
        overrides: dict[Path, str] | None = None,
        read: Callable[[Path], list[str] | None] = shown_lines,
    ) -> None:
        self._paths = paths
        self._read = read
        self._cache: dict[Path, list[str] | None] = {}
        for path, text in (overrides or {}).items():
            self._cache[path] = text.split("\n")

    def lines(self, path: Path) -> list[str] | None:
        """The file's lines; None when it cannot be read or holds credentials (its location alone is shown)."""
        if path not in self._cache:
            self._cache[path] = self._read(path)
        return self._cache[path]

    def line(self, path: Path, line: int) -> str:
        lines = self.lines(path)
        if lines is None or not 1 <= line <= len(lines):
            return ""
        return lines[line - 1].rstrip("\r")

    def source_range(self, path: Path, rng: lsp.Range) -> SourceRange:
        start_line, end_line = rng.start.line + 1, rng.end.line + 1
        return SourceRange(
            start_line=start_line,
            start_column=from_lsp_character(self.line(path, start_line), rng.start.character),
            end_line=end_line,
            end_column=from_lsp_character(self.line(path, end_line), rng.end.character),
        )

    def location(self, path: Path, rng: lsp.Range) -> Location:
        shown, inside = self._paths.display(path)
        text = self.line(path, rng.start.line + 1).strip()
        return Location(
            path=shown, in_workspace=inside, range=self.source_range(path, rng), line_text=text[:240] or None
        )


def _hover_text(contents: Any) -> str:
    if isinstance(contents, lsp.MarkupContent):
        return contents.value
    if isinstance(contents, str):
        return contents
    if isinstance(contents, lsp.MarkedStringWithLanguage):
        return f"```{contents.language}\n{contents.value}\n```"
    if isinstance(contents, list | tuple):
        return "\n\n".join(_hover_text(c) for c in contents)  # pyright: ignore[reportUnknownVariableType]
    return ""


def parse_hover(hover: lsp.Hover | None, name: str | None = None) -> tuple[str, str | None] | None:
    """(signature, documentation) from a hover, or None when it is empty.

    The signature is the fenced code block that names the symbol (else the first one); servers
    that answer plain text (jedi) put it before the first ``---`` rule.
    """
    if hover is None:
        return None
    text = _hover_text(hover.contents).strip()
    if not text:
        return None
    blocks = [b.strip("\n") for b in _FENCE.findall(text)]
    if blocks:
        chosen = next((b for b in blocks if name and re.search(rf"\b{re.escape(name)}\b", b)), blocks[0])
        signature = "\n".join(ln for ln in chosen.splitlines() if not ln.startswith("// In ")).strip()
        prose = _FENCE.sub("", text)
    else:
        head, _sep, prose = text.partition("\n---\n")
        signature = head.strip()
    doc_lines = [ln.rstrip() for ln in prose.splitlines() if ln.strip() not in {"---", "***", "___"}]
    doc_lines = [ln for ln in doc_lines if not ln.startswith("### ")]
    documentation = "\n".join(doc_lines).strip() or None
    # a constant's hover can show its value: one defined in a secret file must not come out here
    return redact_secrets(signature), redact_secrets(documentation) if documentation else None


def symbol_kind_name(kind: int | lsp.SymbolKind) -> str:
    try:
        return lsp.SymbolKind(kind).name.lower()
    except ValueError:
        return "symbol"


_FUNCTION_KINDS = frozenset({lsp.SymbolKind.Function, lsp.SymbolKind.Method, lsp.SymbolKind.Constructor})


@dataclass(slots=True)
class FlatSymbols:
    """Document symbols in source order and what was left out (``deeper``, ``locals``, over ``limit``)."""

    symbols: list[SymbolInfo]
    total: int
    deeper: int = 0
    locals: int = 0


def flatten_document_symbols(
    result: Sequence[lsp.DocumentSymbol] | Sequence[lsp.SymbolInformation] | None,
    path: Path,
    lines: FileLines,
    *,
    limit: int,
    depth: int | None = None,
    include_locals: bool = True,
) -> FlatSymbols:
    """Document symbols in source order, nested ones with their container's qualified name.

    ``depth``: keep symbols nested at most this deep (1: top level only); ``include_locals=False``
    leaves out what sits inside a function or method (its parameters, locals, nested functions).
    ``total`` counts what the server listed; the kept ones stop at ``limit``.
    """
    flat = FlatSymbols(symbols=[], total=0)

    def visit(root: lsp.DocumentSymbol) -> None:
        stack: list[tuple[lsp.DocumentSymbol, str | None, int, bool]] = [(root, None, 1, False)]
        while stack:  # iterative, depth-first in source order: a deeply nested answer cannot overflow the stack
            symbol, container, level, in_function = stack.pop()
            flat.total += 1
            if in_function and not include_locals:
                flat.locals += 1
            elif depth is not None and level > depth:
                flat.deeper += 1
            elif len(flat.symbols) < limit:
                flat.symbols.append(
                    SymbolInfo(
                        name=symbol.name,
                        kind=symbol_kind_name(symbol.kind),
                        container=container,
                        detail=(symbol.detail or None) and (symbol.detail or "")[:200],
                        location=lines.location(path, symbol.selection_range),
                    )
                )
            qualified = f"{container}.{symbol.name}" if container else symbol.name
            inside = in_function or symbol.kind in _FUNCTION_KINDS
            stack.extend((child, qualified, level + 1, inside) for child in reversed(symbol.children or []))

    for item in result or []:
        if isinstance(item, lsp.DocumentSymbol):
            visit(item)
        else:
            flat.total += 1
            level = 1 + (item.container_name or "").count(".") + (1 if item.container_name else 0)
            if depth is not None and level > depth:
                flat.deeper += 1
            elif len(flat.symbols) < limit:
                flat.symbols.append(symbol_information(item, lines))
    return flat


def symbol_information(item: lsp.SymbolInformation | lsp.WorkspaceSymbol, lines: FileLines) -> SymbolInfo:
    location = item.location
    if isinstance(location, lsp.Location):
        path = path_of_uri(location.uri) or Path(location.uri)
        loc = lines.location(path, location.range)
    else:
        path = path_of_uri(location.uri) or Path(location.uri)
        zero = lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0))
        loc = lines.location(path, zero)
    return SymbolInfo(
        name=item.name, kind=symbol_kind_name(item.kind), container=item.container_name or None, location=loc
    )


def diagnostic_info(diagnostic: lsp.Diagnostic, path: Path, lines: FileLines) -> DiagnosticInfo:
    severity = _SEVERITY.get(int(diagnostic.severity or 1), "error")
    code = diagnostic.code
    return DiagnosticInfo(
        range=lines.source_range(path, diagnostic.range),
        severity=severity,
        message=diagnostic.message[:1000],
        source=diagnostic.source,
        code=str(code) if code is not None else None,
    )
