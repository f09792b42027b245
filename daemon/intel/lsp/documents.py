"""Document sync: the server sees what is on disk now.

Before every request the file it is about is opened (``didOpen``) or, when it changed on disk
since, updated (``didChange``, full text); every other open document is checked too (a stat
each), updated when changed and closed (``didClose``) when deleted. At most ``max_open``
documents stay open per server; the least recently used one is closed first.

Also here: conversion between ided positions (1-based line and code-point column) and LSP
positions (0-based line, UTF-16 code units), and reading a file's text with the checks every
tool needs (binary, too large).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types as lsp

from daemon.core.regular_files import NotRegularFile, read_regular
from daemon.errors import InvalidToolInput
from daemon.intel.lsp.client import LspClient

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "DocumentSync",
    "OpenDocument",
    "from_lsp_character",
    "read_text",
    "to_lsp_character",
]


MAX_DOCUMENT_BYTES = 5_000_000
"""Files larger than this are not sent to a language server (generated code, bundles)."""

_BINARY_SNIFF = 8192


def read_text(path: Path, *, display: str | None = None, max_bytes: int = MAX_DOCUMENT_BYTES) -> str:
    """The text of ``path`` (UTF-8, undecodable bytes replaced); ``InvalidToolInput`` when binary or too large."""
    name = display or str(path)
    try:
        data = read_regular(path, max_bytes + 1)
        if len(data) > max_bytes:
            size = path.stat().st_size
            raise InvalidToolInput(f"file {name!r} is {size:,} bytes, over the {max_bytes:,}-byte limit for code intel")
    except NotRegularFile as exc:
        raise InvalidToolInput(f"{name!r} is a {exc.kind}, not a file") from None
    except FileNotFoundError as exc:
        raise InvalidToolInput(f"file {name!r} does not exist") from exc
    except IsADirectoryError as exc:
        raise InvalidToolInput(f"{name!r} is a directory, not a file") from exc
    except OSError as exc:
        raise InvalidToolInput(f"file {name!r} cannot be read", cause=exc) from exc
    if b"\x00" in data[:_BINARY_SNIFF]:
        raise InvalidToolInput(f"file {name!r} is binary; code intel works on source files")
    return data.decode("utf-8", "replace")


def to_lsp_character(line_text: str, column: int) -> int:
    """UTF-16 offset of 1-based code-point ``column`` in ``line_text``."""
    prefix = line_text[: max(0, column - 1)]
    if prefix.isascii():
        return len(prefix)
    return len(prefix.encode("utf-16-le")) // 2


def from_lsp_character(line_text: str, character: int) -> int:
    """1-based code-point column of UTF-16 offset ``character`` in ``line_text``."""
    if line_text.isascii():
        return min(character, len(line_text)) + 1
    units = 0
    for index, char in enumerate(line_text):
        if units >= character:
            return index + 1
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line_text) + 1


@dataclass(slots=True)
class OpenDocument:
    """A document as the server last saw it."""

    uri: str
    path: Path
    language_id: str
    version: int
    mtime_ns: int
    size: int
    text: str
    synced: float = 0.0  # monotonic time of the last didOpen/didChange

    def lines(self) -> list[str]:
        return self.text.split("\n")

    def line(self, line: int) -> str:
        """1-based line text without its line break ('' past the end)."""
        lines = self.text.split("\n")
        return lines[line - 1].rstrip("\r") if 1 <= line <= len(lines) else ""

    def position(self, line: int, column: int) -> lsp.Position:
        return lsp.Position(line=line - 1, character=to_lsp_character(self.line(line), column))


class DocumentSync:
    """Open documents of one server process; see the module docstring."""

    def __init__(self, client: LspClient, *, max_open: int) -> None:
        self._client = client
        self._max_open = max_open
        self._open: OrderedDict[Path, OpenDocument] = OrderedDict()
        self._lock = asyncio.Lock()

    @property
    def open_count(self) -> int:
        return len(self._open)

    async def sync(self, path: Path, *, language_id: str, display: str) -> OpenDocument:
        """Open or update ``path`` (and refresh the other open documents); returns it as the server sees it."""
        async with self._lock:
            await self._refresh_others(path)
            stat = _stat(path)
            if stat is None:
                raise InvalidToolInput(f"file {display!r} does not exist")
            doc = self._open.get(path)
            if doc is not None and (doc.mtime_ns, doc.size) == stat:
                self._open.move_to_end(path)
                return doc
            text = await asyncio.to_thread(read_text, path, display=display)
            if doc is None:
                doc = OpenDocument(
                    uri=path.as_uri(),
                    path=path,
                    language_id=language_id,
                    version=1,
                    mtime_ns=stat[0],
                    size=stat[1],
                    text=text,
                    synced=time.monotonic(),
                )
                self._client.notify(
                    lsp.TEXT_DOCUMENT_DID_OPEN,
                    lsp.DidOpenTextDocumentParams(
                        text_document=lsp.TextDocumentItem(
                            uri=doc.uri, language_id=language_id, version=doc.version, text=text
                        )
                    ),
                )
                self._open[path] = doc
                await self._evict()
            else:
                self._change(doc, text, stat)
                self._open.move_to_end(path)
            return doc

    async def refresh(self) -> None:
        """Bring every open document up to date with the disk (changed files updated, deleted ones closed)."""
        async with self._lock:
            await self._refresh_others(None)

    async def _refresh_others(self, skip: Path | None) -> None:
        for path, doc in list(self._open.items()):
            if path == skip:
                continue
            stat = _stat(path)
            if stat is None:
                self._close(doc)
            elif (doc.mtime_ns, doc.size) != stat:
                try:
                    text = await asyncio.to_thread(read_text, path)
                except InvalidToolInput:
                    self._close(doc)
                    continue
                self._change(doc, text, stat)

    def _change(self, doc: OpenDocument, text: str, stat: tuple[int, int]) -> None:
        doc.mtime_ns, doc.size = stat
        if text == doc.text:
            return
        doc.version += 1
        doc.text = text
        doc.synced = time.monotonic()
        self._client.notify(
            lsp.TEXT_DOCUMENT_DID_CHANGE,
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            ),
        )

    def _close(self, doc: OpenDocument) -> None:
        self._open.pop(doc.path, None)
        self._client.notify(
            lsp.TEXT_DOCUMENT_DID_CLOSE,
            lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=doc.uri)),
        )

    async def _evict(self) -> None:
        while len(self._open) > self._max_open:
            _path, oldest = next(iter(self._open.items()))
            self._close(oldest)


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size
