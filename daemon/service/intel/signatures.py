"""The ``get_signature`` answer: the language server's hover at the place, else the Tree-sitter signature.

``Signatures.signature(target, ...)`` asks the server for the hover (a server that fails is a note,
not an error), and when it has nothing falls back to the signature and docstring the chunker found
for that name; both are cut to ``max_chars`` with a note. ``InvalidToolInput`` when neither has one.
"""

from __future__ import annotations

import asyncio

from daemon.core.intel_models import SignatureResult, SignatureSource
from daemon.errors import InvalidToolInput, LanguageServerError
from daemon.intel.ast_nodes import excerpt
from daemon.intel.lsp.documents import read_text
from daemon.intel.lsp.requests import ServerRequests
from daemon.intel.workspace_paths import WorkspacePaths
from daemon.service.intel.results import IntelResults
from daemon.service.intel.symbol_resolver import SymbolResolver, name_position
from daemon.service.intel.targets import Target

__all__ = ["Signatures"]


def _cut_notes(max_chars: int, *, signature: str, documentation: str | None) -> list[str]:
    cut = [
        name
        for name, text in (("signature", signature), ("documentation", documentation or ""))
        if len(text) > max_chars
    ]
    return [f"{' and '.join(cut)} cut to max_chars={max_chars}"] if cut else []


class Signatures:
    """See the module docstring."""

    def __init__(
        self, paths: WorkspacePaths, requests: ServerRequests, resolver: SymbolResolver, results: IntelResults
    ) -> None:
        self._paths = paths
        self._requests = requests
        self._resolver = resolver
        self._results = results

    async def signature(
        self, target: Target, query: str, notes: list[str], *, max_chars: int, server: str
    ) -> SignatureResult:
        try:
            parsed = await self._requests.hover(target, target.name)
        except LanguageServerError as exc:
            parsed = None
            notes.append(f"language server unavailable ({exc.message})")
        if parsed is None:
            return await self._tree_sitter(target, query, notes, max_chars)
        signature, documentation = parsed
        notes.extend(_cut_notes(max_chars, signature=signature, documentation=documentation))
        return SignatureResult(
            query=query,
            signature=excerpt(signature, max_chars),
            documentation=excerpt(documentation, max_chars) if documentation else None,
            source=SignatureSource.HOVER,
            location=await asyncio.to_thread(
                self._results.point_location, target.absolute, target.line, target.column, target.name
            ),
            server=server,
            notes=tuple(notes),
        )

    async def _tree_sitter(self, target: Target, query: str, notes: list[str], max_chars: int) -> SignatureResult:
        match = target.match
        if match is None and target.name:
            matches, _via = await asyncio.to_thread(self._resolver.resolve, target.name, limit=1)
            match = matches[0] if matches else None
        if match is None or not match.signature:
            raise InvalidToolInput(
                f"no signature found for {query}: the language server gave no hover there and no definition "
                "of that name was found in the workspace"
            )
        notes.append("fallback: the language server gave no hover, this is the Tree-sitter signature")
        absolute = self._paths.root / match.path
        text = await asyncio.to_thread(read_text, absolute, display=match.path)
        def_line, def_col = name_position(text.split("\n"), match)
        notes.extend(_cut_notes(max_chars, signature=match.signature or "", documentation=match.docstring))
        return SignatureResult(
            query=query,
            signature=excerpt(match.signature, max_chars),
            documentation=excerpt(match.docstring, max_chars) if match.docstring else None,
            source=SignatureSource.TREE_SITTER,
            location=await asyncio.to_thread(self._results.point_location, absolute, def_line, def_col, match.name),
            server=None,
            notes=tuple(notes),
        )
