"""The early ``initialize`` answer: ``ided lsp`` answers the client's first request before it loads
pygls, lsprotocol, the configuration or anything of the daemon.

Standard library only (with ``daemon.lsp.methods``). :func:`answer_initialize` reads the first
``Content-Length`` frame from stdin (file descriptor 0, unbuffered, so nothing is read past what
it returns) and, when that frame is an ``initialize`` request whose params it can vouch for,
writes the ``InitializeResult`` pygls would build for this server (the same capabilities, the
same negotiated ``positionEncoding``, the ``experimental.ided`` table) and returns the request, so
the server replays it once loaded (its own answer to that id is dropped, see
``daemon.lsp.protocol.IdedProtocol.expect_early_answer``). The answer depends on three things in the
params: ``capabilities.general.positionEncodings`` (the first of utf-8/utf-16/utf-32 the client
lists, else utf-16), ``capabilities.textDocument.synchronization`` (``willSave`` and
``willSaveWaitUntil`` are answered ``false`` when the client declares them, as pygls does) and
``initializationOptions.standardIntel`` (``true`` adds the hover, definition and references providers).

It vouches for: a JSON-RPC 2.0 request with an integer or string id, params an object whose
top-level fields have the types the LSP gives them (``capabilities`` an object), and
``positionEncodings`` absent or a list of strings. Anything else (broken framing, another method,
odd params, end of input) is left alone: every byte read is handed back in
:attr:`Handshake.pending` and the guarded transport serves it as it always does. The nested client
capabilities are checked only once lsprotocol is loaded; if they do not fit its types, the
``initialize`` was already answered, so the server serves the client as one that declared no
capabilities and tells it so (``window/showMessage``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any, cast

from daemon import __version__
from daemon.core.early_handshake import EarlyAnswer, Handshake, request_for, write_all
from daemon.lsp.methods import NOTIFICATIONS, REQUESTS

__all__ = ["STANDARD_INTEL_OPTION", "EarlyAnswer", "Handshake", "answer_initialize", "initialize_result"]

STANDARD_INTEL_OPTION = "standardIntel"
"""The ``initializationOptions`` key that turns on textDocument/definition|references|hover."""

_MAX_HEADER_BYTES = 64 * 1024
_MAX_BODY_BYTES = 16 * 1024 * 1024
_READ_CHUNK = 64 * 1024
_SUPPORTED_ENCODINGS = ("utf-8", "utf-16", "utf-32")
_TRACE_VALUES = ("off", "messages", "verbose")
_CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)[ \t]*", re.IGNORECASE)
_HEADER = re.compile(rb"[A-Za-z][A-Za-z0-9-]*[ \t]*:.*")


def standard_intel_enabled(options: Any) -> bool:
    """Whether ``initializationOptions`` asks for the standard methods (only a literal ``true`` does)."""
    return isinstance(options, dict) and cast(dict[str, Any], options).get(STANDARD_INTEL_OPTION) is True


def initialize_result(params: dict[str, Any]) -> dict[str, Any]:
    """The ``InitializeResult`` (as JSON) this server gives for ``params`` (which :func:`_vouched` accepted)."""
    capabilities: dict[str, Any] = {
        "positionEncoding": _position_encoding(params),
        "textDocumentSync": _text_document_sync(params),
    }
    if standard_intel_enabled(params.get("initializationOptions")):
        capabilities |= {"hoverProvider": True, "definitionProvider": True, "referencesProvider": True}
    capabilities |= {
        "workspaceSymbolProvider": {"resolveProvider": False},
        "executeCommandProvider": {"commands": []},
        "workspace": {"workspaceFolders": {"supported": True, "changeNotifications": True}, "fileOperations": {}},
        "experimental": {"ided": {"version": 1, "requests": list(REQUESTS), "notifications": list(NOTIFICATIONS)}},
    }
    return {"capabilities": capabilities, "serverInfo": {"name": "ided", "version": __version__}}


def answer_initialize(read_fd: int = 0, write_fd: int = 1) -> Handshake:
    """Read the first frame from ``read_fd``; answer it on ``write_fd`` when it is an ``initialize`` this
    module vouches for. Returns what was answered and the bytes read but not consumed."""
    data = b""
    while True:
        split = data.find(b"\r\n\r\n")
        if split < 0:
            if len(data) > _MAX_HEADER_BYTES:
                return Handshake(early=None, pending=data)
        else:
            length = _content_length(data[:split])
            if length is None or length > _MAX_BODY_BYTES:
                return Handshake(early=None, pending=data)
            end = split + 4 + length
            if len(data) >= end:
                break
        chunk = os.read(read_fd, _READ_CHUNK)
        if not chunk:
            return Handshake(early=None, pending=data)
        data += chunk
    message = _vouched(data[split + 4 : end])
    if message is None:
        return Handshake(early=None, pending=data)
    result = initialize_result(cast(dict[str, Any], message["params"]))
    body = json.dumps({"id": message["id"], "jsonrpc": "2.0", "result": result}).encode()
    write_all(
        write_fd,
        f"Content-Length: {len(body)}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n".encode()
        + body,
    )
    return Handshake(early=EarlyAnswer(message=message, result=result), pending=data[end:])


def _content_length(header_block: bytes) -> int | None:
    length: int | None = None
    for line in header_block.split(b"\r\n"):
        if not _HEADER.fullmatch(line):
            return None
        if found := _CONTENT_LENGTH.fullmatch(line):
            length = int(found.group(1))
    return length


def _vouched(body: bytes) -> dict[str, Any] | None:
    """The request in ``body`` when it is an ``initialize`` whose answer this module can give, else None."""
    message = request_for(body, "initialize")
    return message if message is not None and _params_fit(cast(dict[str, Any], message["params"])) else None


def _params_fit(params: dict[str, Any]) -> bool:
    """The top-level ``InitializeParams`` fields have their LSP types (as the server's strict converter wants)."""
    capabilities = params.get("capabilities")
    if not isinstance(capabilities, dict):
        return False
    checks = (
        _optional(params, "processId", _is_int),
        _optional(params, "rootUri", _is_str),
        _optional(params, "rootPath", _is_str),
        _optional(params, "locale", _is_str, nullable=False),
        _optional(params, "trace", _is_trace),
        _optional(params, "workDoneToken", _is_token, nullable=False),
        _optional(params, "clientInfo", _client_info),
        _optional(params, "workspaceFolders", _folders),
    )
    return all(checks) and _encodings_fit(cast(dict[str, Any], capabilities))


def _encodings_fit(capabilities: dict[str, Any]) -> bool:
    general = capabilities.get("general")
    if general is None:
        return True
    if not isinstance(general, dict):
        return False
    encodings = cast(dict[str, Any], general).get("positionEncodings")
    return encodings is None or (isinstance(encodings, list) and all(_is_str(e) for e in cast(list[Any], encodings)))


def _text_document_sync(params: dict[str, Any]) -> dict[str, Any]:
    """pygls' ``TextDocumentSyncOptions`` for this server: ``willSave`` and ``willSaveWaitUntil`` are
    ``false`` (the server has no such handlers) when the client declared them, true or false, and
    absent when it did not (Neovim and VS Code declare both)."""
    sync: dict[str, Any] = {"openClose": True, "change": 0}
    declared = _synchronization(params)
    for key in ("willSave", "willSaveWaitUntil"):
        if isinstance(declared.get(key), bool):
            sync[key] = False
    sync["save"] = False
    return sync


def _synchronization(params: dict[str, Any]) -> dict[str, Any]:
    """``capabilities.textDocument.synchronization`` when it is an object all the way down, else ``{}``."""
    found: Any = params["capabilities"]
    for key in ("textDocument", "synchronization"):
        found = cast(dict[str, Any], found).get(key) if isinstance(found, dict) else None
    return cast(dict[str, Any], found) if isinstance(found, dict) else {}


def _position_encoding(params: dict[str, Any]) -> str:
    """pygls' choice: the first encoding the client lists that the server supports, else utf-16."""
    general: dict[str, Any] = cast(dict[str, Any], params["capabilities"]).get("general") or {}
    encodings: list[str] = general.get("positionEncodings") or []
    for encoding in encodings:
        if encoding in _SUPPORTED_ENCODINGS:
            return encoding
    return "utf-16"


def _optional(params: dict[str, Any], key: str, check: Callable[[Any], bool], *, nullable: bool = True) -> bool:
    if key not in params:
        return True
    value = params[key]
    return (nullable and value is None) or bool(check(value))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_trace(value: Any) -> bool:
    return value in _TRACE_VALUES


def _is_token(value: Any) -> bool:
    return _is_int(value) or _is_str(value)


def _client_info(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    info = cast(dict[str, Any], value)
    return _is_str(info.get("name")) and _optional(info, "version", _is_str, nullable=False)


def _folders(value: Any) -> bool:
    if not isinstance(value, list):
        return False
    for folder in cast(list[Any], value):
        if not isinstance(folder, dict):
            return False
        entry = cast(dict[str, Any], folder)
        if not (_is_str(entry.get("uri")) and _is_str(entry.get("name"))):
            return False
    return True
