"""The ``get_type`` answer: the type of a name, or of what is at a position, as the language server infers it.

Two questions go to the server at once: the hover, whose declaration line states the type in the
language's own words (``hover_types``: ``(variable) points: list[Point]``, ``const cart: Cart``,
``(method) def distance_to(other: Point) -> float``), and the type definition (where that type is
declared, in the workspace or in a library). The type comes from the hover when it states one, else
it is the name declared at the type definition (jedi's hover shows a variable's assignment, not its
type, while its type definition points at ``class Point``). A server that fails one question is a
note; ``InvalidToolInput`` when neither says a type.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from daemon.core.intel_models import TypeDefinition, TypeResult, TypeSource
from daemon.errors import InvalidToolInput, LanguageServerError
from daemon.intel.lsp.convert import FileLines, LspTarget
from daemon.intel.lsp.hover_types import HoverType, hover_type
from daemon.intel.lsp.requests import ServerRequests
from daemon.service.intel.results import IntelResults
from daemon.service.intel.targets import Target

__all__ = ["Types"]

_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


def _declared_name(lines: FileLines, target: LspTarget) -> str | None:
    """The identifier at a type definition's name range (its first line)."""
    text = lines.lines(target.path)
    if text is None:
        return None
    rng = lines.source_range(target.path, target.selection)
    line = text[rng.start_line - 1] if rng.start_line <= len(text) else ""
    end = rng.end_column if rng.end_line == rng.start_line else len(line) + 1
    found = _IDENTIFIER.search(line[rng.start_column - 1 : end - 1])
    return found.group(0) if found else None


class Types:
    """See the module docstring."""

    def __init__(self, requests: ServerRequests, results: IntelResults) -> None:
        self._requests = requests
        self._results = results

    async def type_of(self, target: Target, query: str, notes: list[str], *, server: str, limit: int) -> TypeResult:
        hovered, defined = await asyncio.gather(
            self._requests.hover(target, target.name),
            self._requests.type_definitions(target),
            return_exceptions=True,
        )
        declared: HoverType | None = None
        if isinstance(hovered, LanguageServerError):
            notes.append(f"no hover: {hovered.message}")
        elif isinstance(hovered, BaseException):
            raise hovered
        elif hovered is not None:
            declared = hover_type(hovered[0])
        targets: list[LspTarget] = []
        if isinstance(defined, LanguageServerError):
            notes.append(f"no type definition: {defined.message}")
        elif isinstance(defined, BaseException):
            raise defined
        else:
            targets = defined
        definitions = await asyncio.to_thread(self._definitions, targets[:limit])
        if len(targets) > limit:
            notes.append(f"{len(targets) - limit} more type definition(s) left out (max_results={limit})")
        type_text, source = (declared.type, TypeSource.HOVER) if declared and declared.type else (None, None)
        if type_text is None:
            named = next((d.name for d in definitions if d.name), None)
            if named is not None:
                type_text, source = named, TypeSource.TYPE_DEFINITION
                notes.append("the hover states no type: this is the name declared at the type definition")
        if type_text is None or source is None:
            said = f" (its hover says: {declared.declaration!r})" if declared else ""
            raise InvalidToolInput(
                f"no type found for {query}: the language server states no type there{said} and gives no type "
                "definition; try get_signature or find_definition"
            )
        location = await asyncio.to_thread(
            self._results.point_location, target.absolute, target.line, target.column, target.name
        )
        return TypeResult(
            query=query,
            symbol=declared.name if declared else target.name,
            kind=declared.kind if declared else None,
            type=type_text,
            returns=declared.returns if declared else None,
            declaration=declared.declaration if declared else None,
            source=source,
            type_definitions=tuple(definitions),
            location=location,
            server=server,
            notes=tuple(notes),
        )

    def _definitions(self, targets: list[LspTarget]) -> list[TypeDefinition]:
        lines = self._results.file_lines()
        out: list[TypeDefinition] = []
        for target in targets:
            location = lines.location(Path(target.path), target.selection)
            out.append(TypeDefinition(name=_declared_name(lines, target), location=location))
        return out
