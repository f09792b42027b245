"""The type a language server's hover states for a name: ``(variable) first: Point`` -> ``Point``.

Servers write the declaration of the thing under the cursor as the first line of their hover's code
block, each in its language's words: basedpyright/pyright ``(variable) points: list[Point]``,
``(method) def distance_to(other: Point) -> float``, ``class Reporter(title: str)``;
typescript-language-server ``const cart: Cart``, ``(property) Cart.items: LineItem[]``,
``(alias) checkout(cart: Cart, taxRate: number): number``; gopls ``var n int``; rust-analyzer
``let x: i32``. ``hover_type`` reads that line: the kind in parentheses or the declaring keyword,
the name, and the type after the name (a variable's annotation, a callable's parameters and
return type). A line that states no type (jedi shows a variable's assignment: ``first =
points[0]``) gives ``type=None``: the caller asks the server's type definition instead.

Pure text work: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["HoverType", "hover_type"]

_KIND = re.compile(r"^\((?P<kind>[a-z][a-z ]*)\)\s+")
_KEYWORDS = re.compile(
    r"^(?:(?P<kind>async def|def|function|class|interface|type|enum|struct|trait|const|let|var|func|fn"
    r"|module|namespace)\s+)?(?:(?:readonly|static|private|public|protected|export|declare|mut|async)\s+)*"
)
_NAME = re.compile(r"^(?P<name>[\w$]+(?:<[^>(]*>)?(?:\.[\w$]+(?:<[^>(]*>)?)*)")
_ARROW = re.compile(r"^\s*(?:->|=>|:)\s*(?P<returns>.+)$")
_KEYWORD_KINDS = {
    "async def": "function",
    "def": "function",
    "fn": "function",
    "func": "function",
    "const": "variable",
    "let": "variable",
    "var": "variable",
}
_CLASS_KINDS = frozenset({"class", "interface", "enum", "struct", "trait", "type"})


@dataclass(frozen=True, slots=True, kw_only=True)
class HoverType:
    """What one hover declaration line says."""

    declaration: str
    """The line as the server wrote it."""
    kind: str | None
    """variable, parameter, property, method, function, class, ... (the server's word, else the keyword)."""
    name: str | None
    type: str | None
    """The type of the name: an annotation, ``(params) -> returns`` for a callable, the name for a class."""
    returns: str | None = None
    """A callable's return type."""


def _balanced(text: str) -> int | None:
    """The index just past the parenthesis that closes ``text[0] == '('`` (None when it never closes)."""
    depth = 0
    for i, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def hover_type(declaration: str) -> HoverType:
    """What the first line of a hover's declaration says about a name's type (see the module docstring)."""
    line = next((ln.strip() for ln in declaration.splitlines() if ln.strip()), "")
    rest = line
    kind: str | None = None
    if found := _KIND.match(rest):
        kind = found.group("kind")
        rest = rest[found.end() :]
    if found := _KEYWORDS.match(rest):
        keyword = found.group("kind")
        kind = kind or _KEYWORD_KINDS.get(keyword or "", keyword)
        rest = rest[found.end() :]
    named = _NAME.match(rest)
    if named is None:
        return HoverType(declaration=line, kind=kind, name=None, type=None)
    name = named.group("name")
    rest = rest[named.end() :].strip()
    if kind in _CLASS_KINDS:
        return HoverType(declaration=line, kind=kind, name=name, type=name.split("<", 1)[0])
    if rest.startswith("("):
        end = _balanced(rest)
        if end is not None:
            params = rest[:end]
            after = _ARROW.match(rest[end:])
            returns = after.group("returns").strip() if after else None
            shown = f"{params} -> {returns}" if returns else params
            return HoverType(declaration=line, kind=kind or "function", name=name, type=shown, returns=returns)
    if rest.startswith(":"):
        typed = rest[1:].strip()
        typed = re.split(r"\s+=\s+", typed, maxsplit=1)[0].strip()  # a constant's value is not its type
        return HoverType(declaration=line, kind=kind, name=name, type=typed or None)
    if kind == "variable" and rest and line.startswith("var "):  # gopls: `var n int`
        return HoverType(declaration=line, kind="variable", name=name, type=rest.split(" = ", 1)[0].strip())
    return HoverType(declaration=line, kind=kind, name=name, type=None)
