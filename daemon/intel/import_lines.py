"""Whether a source position lies inside an import statement (any language ided parses).

A language server may answer "go to definition" with the import that binds a name rather than
the definition it imports: TypeScript's server does while it is still loading the project (under
load that window lasts seconds), and servers do it for aliases. The code-intel layer then asks
again at the import, one hop, which lands on the definition in the imported module.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["in_import_statement"]

_IMPORT_START = re.compile(
    r"^\s*(?:"
    r"import\b"  # Python, JS/TS, Java, Go
    r"|from\s+\S+\s+import\b"  # Python
    r"|export\s+(?:type\s+)?(?:\*|\{)"  # JS/TS re-exports: export { a } from "./m"
    r"|#\s*include\b"  # C, C++
    r"|use\s"  # Rust
    r"|(?:const|let|var)\s+[\w{}\s,:]+=\s*require\("  # CommonJS
    r")"
)
_OPEN = ("{", "(", ",", "\\")
"""How a line ends when the statement goes on below it."""
_LOOK_BACK = 30
"""Lines to look back for the start of a multi-line import."""


def in_import_statement(lines: Sequence[str], row: int) -> bool:
    """True when 0-based ``row`` of ``lines`` is (part of) an import statement."""
    if not 0 <= row < len(lines):
        return False
    if _IMPORT_START.match(lines[row]):
        return True
    for index in range(row - 1, max(-1, row - _LOOK_BACK), -1):
        text = lines[index].rstrip()
        if _IMPORT_START.match(text):
            return text.endswith(_OPEN)  # the row continues it only if it is left open
        if not text.endswith(_OPEN):
            return False  # the line above is not an open list: the row starts a statement of its own
    return False
