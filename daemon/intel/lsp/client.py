"""One language-server process driven with pygls 2's JSON-RPC/LSP client.

``LspClient`` is a ``pygls.lsp.client.LanguageClient`` that

* spawns the server itself (working directory = the workspace, stderr drained into a short ring
  buffer for crash reports, so a chatty server never blocks on a full pipe);
* answers the requests servers send to clients (``workspace/configuration``,
  ``client/registerCapability``, ``window/workDoneProgress/create``, ``workspace/applyEdit`` —
  refused: the tools are read-only) and records ``$/progress`` (to tell "indexing" from "ready")
  and ``textDocument/publishDiagnostics``;
* sends requests with a timeout, cancelling them (``$/cancelRequest``) when it expires;
* fails every pending request with ``LanguageServerTerminated`` the moment the process exits.

Why pygls and not multilspy: multilspy 0.1.1 pins pygls<2, which clashes with the pygls 2 the
LSP front needs, and its own server downloads fail offline. pygls 2's client is the same JSON-RPC
machinery the front uses, with lsprotocol types for every message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from lsprotocol import types as lsp
from pygls.io_ import run_async
from pygls.lsp.client import LanguageClient
from pygls.protocol import LanguageServerProtocol

from daemon import __version__
from daemon.core.tasks import cancel_and_wait
from daemon.errors import LanguageServerError, LanguageServerTerminated

__all__ = ["ActiveProgress", "LspClient", "PublishedDiagnostics", "client_capabilities"]

logger = logging.getLogger(__name__)

_STDERR_LINES = 40
_SHUTDOWN_TIMEOUT = 3.0
_REQUEST_TOKEN_PREFIX = "ided-request-"
_PING_METHOD = "ided/ping"  # no server implements it: the reply is MethodNotFound


@dataclass(frozen=True, slots=True, kw_only=True)
class ActiveProgress:
    """A work-done progress the server is reporting right now (e.g. background indexing)."""

    title: str
    message: str | None
    percentage: int | None
    since: float


@dataclass(frozen=True, slots=True, kw_only=True)
class PublishedDiagnostics:
    """The last ``textDocument/publishDiagnostics`` for one document."""

    version: int | None
    items: tuple[lsp.Diagnostic, ...]
    received: float


class _ClientProtocol(LanguageServerProtocol):
    """pygls' LSP protocol, able to fail every request still waiting for an answer."""

    def fail_pending(self, exc: BaseException) -> None:
        for future in list(self._request_futures.values()):
            if not future.done():
                future.set_exception(exc)
        self._request_futures.clear()


def client_capabilities() -> lsp.ClientCapabilities:
    """What ided asks of a server: the read-only features behind the tools, markdown hovers, progress."""
    markup = [lsp.MarkupKind.Markdown, lsp.MarkupKind.PlainText]
    symbol_kinds = lsp.ClientSymbolKindOptions(value_set=list(lsp.SymbolKind))
    return lsp.ClientCapabilities(
        workspace=lsp.WorkspaceClientCapabilities(
            configuration=True,
            workspace_folders=True,
            symbol=lsp.WorkspaceSymbolClientCapabilities(symbol_kind=symbol_kinds),
            did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=False),
        ),
        text_document=lsp.TextDocumentClientCapabilities(
            synchronization=lsp.TextDocumentSyncClientCapabilities(did_save=False),
            hover=lsp.HoverClientCapabilities(content_format=markup),
            signature_help=lsp.SignatureHelpClientCapabilities(
                signature_information=lsp.ClientSignatureInformationOptions(documentation_format=markup)
            ),
            definition=lsp.DefinitionClientCapabilities(link_support=True),
            references=lsp.ReferenceClientCapabilities(),
            document_symbol=lsp.DocumentSymbolClientCapabilities(
                symbol_kind=symbol_kinds, hierarchical_document_symbol_support=True
            ),
            call_hierarchy=lsp.CallHierarchyClientCapabilities(),
            publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(version_support=True),
            diagnostic=lsp.DiagnosticClientCapabilities(),
        ),
        window=lsp.WindowClientCapabilities(work_done_progress=True),
        general=lsp.GeneralClientCapabilities(position_encodings=[lsp.PositionEncodingKind.Utf16]),
    )


class LspClient(LanguageClient):
    """A pygls client bound to one server process; see the module docstring."""

    protocol: _ClientProtocol

    def __init__(
        self, *, name: str, settings: Mapping[str, Any] | None = None, loaded_pattern: str | None = None
    ) -> None:
        super().__init__("ided", __version__, protocol_cls=_ClientProtocol)
        self.server_name = name
        self.settings: Mapping[str, Any] = settings or {}
        self.process: asyncio.subprocess.Process | None = None
        self.capabilities: lsp.ServerCapabilities | None = None
        self.stderr_tail: deque[str] = deque(maxlen=_STDERR_LINES)
        self.exited = asyncio.Event()
        self.active_progress: dict[str, ActiveProgress] = {}
        self.progress_seen = 0
        self.progress_changed = asyncio.Event()
        self.diagnostics: dict[str, PublishedDiagnostics] = {}
        self.diagnostics_changed = asyncio.Event()
        self.closing = False
        self.notifications_sent = 0
        """Notifications sent through ``notify`` (documents opened, changed, closed, watched files): an
        answer the server gave is the same while this count (and ``progress_seen``) stays the same."""
        self.workspace_loaded = asyncio.Event()
        self._loaded_pattern = re.compile(loaded_pattern) if loaded_pattern else None
        if self._loaded_pattern is None:
            self.workspace_loaded.set()
        self._tasks: list[asyncio.Task[Any]] = []
        self._workspace_folders: list[lsp.WorkspaceFolder] = []
        self._register_handlers()

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None and not self.exited.is_set()

    async def spawn(
        self, command: str, args: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None
    ) -> None:
        """Start the server process and the reader loop (``initialize`` is a separate step)."""
        try:
            process = await asyncio.create_subprocess_exec(
                command,
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=str(cwd),
                env={**os.environ, **(env or {})},
                start_new_session=True,  # its own process group: a kill takes node/tsserver children too
            )
        except OSError as exc:
            raise LanguageServerError(f"{self.server_name}: cannot start {command!r}", cause=exc) from exc
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.protocol.set_writer(process.stdin)
        loop_task = asyncio.create_task(
            run_async(
                stop_event=self._stop_event,
                reader=process.stdout,
                protocol=self.protocol,
                logger=logger,
                error_handler=self.report_server_error,
            ),
            name=f"lsp-reader-{self.server_name}",
        )
        self._tasks = [
            loop_task,
            asyncio.create_task(self._drain_stderr(process), name=f"lsp-stderr-{self.server_name}"),
            asyncio.create_task(self._watch_exit(process), name=f"lsp-exit-{self.server_name}"),
        ]

    async def initialize_server(self, root: Path, *, timeout_s: float) -> lsp.InitializeResult:
        """``initialize`` then ``initialized``; records the server's capabilities."""
        uri = root.as_uri()
        self._workspace_folders = [lsp.WorkspaceFolder(uri=uri, name=root.name or "workspace")]
        params = lsp.InitializeParams(
            process_id=os.getpid(),
            root_uri=uri,
            root_path=str(root),
            capabilities=client_capabilities(),
            client_info=lsp.ClientInfo(name="ided", version=__version__),
            workspace_folders=self._workspace_folders,
            initialization_options=dict(self.settings.get("initializationOptions", {})) or None,
        )
        result = await self.request(lsp.INITIALIZE, params, timeout_s=timeout_s)
        assert isinstance(result, lsp.InitializeResult)
        self.capabilities = result.capabilities
        self.protocol.notify(lsp.INITIALIZED, lsp.InitializedParams())
        if self.settings:
            self.protocol.notify(
                lsp.WORKSPACE_DID_CHANGE_CONFIGURATION, lsp.DidChangeConfigurationParams(settings=dict(self.settings))
            )
        return result

    async def close(self) -> None:
        """``shutdown`` + ``exit`` when alive, then terminate and kill the process group if it lingers."""
        process = self.process
        self.closing = True  # an exit from here on is expected, not a crash
        if process is not None and self.alive:
            with contextlib.suppress(Exception):
                await self.request(lsp.SHUTDOWN, None, timeout_s=_SHUTDOWN_TIMEOUT)
                self.protocol.notify(lsp.EXIT, None)
            with contextlib.suppress(Exception):
                assert process.stdin is not None
                process.stdin.close()
            if not await _wait_exit(process, _SHUTDOWN_TIMEOUT):
                _signal_group(process, terminate=True)
                if not await _wait_exit(process, _SHUTDOWN_TIMEOUT):
                    _signal_group(process, terminate=False)
                    await _wait_exit(process, _SHUTDOWN_TIMEOUT)
        elif process is not None and process.returncode is None:
            _signal_group(process, terminate=False)
            await _wait_exit(process, _SHUTDOWN_TIMEOUT)
        self._stop_event.set()
        await cancel_and_wait(self._tasks)
        self._tasks = []

    def kill(self) -> None:
        """Kill the process group at once (a hung server)."""
        if self.process is not None and self.process.returncode is None:
            _signal_group(self.process, terminate=False)

    # -- requests ------------------------------------------------------------------------------

    async def request(self, method: str, params: Any, *, timeout_s: float) -> Any:
        """Send one request; ``TimeoutError`` (after ``$/cancelRequest``) or ``LanguageServerTerminated``."""
        if not self.alive:
            raise self._terminated(f"{self.server_name} is not running")
        msg_id = str(uuid.uuid4())
        if hasattr(params, "work_done_token") and params.work_done_token is None:
            # Progress the server reports for this request comes under our token, so it is never
            # mistaken for background indexing (servers would otherwise create one themselves).
            params.work_done_token = f"{_REQUEST_TOKEN_PREFIX}{msg_id}"
        try:
            future = self.protocol.send_request_async(method, params, msg_id=msg_id)
        except (BrokenPipeError, ConnectionResetError, RuntimeError) as exc:
            raise self._terminated(f"{self.server_name}: cannot write to the server", exc) from exc
        try:
            return await asyncio.wait_for(future, timeout_s)
        except (TimeoutError, asyncio.CancelledError):
            # forget the request, so a late answer is an unknown id (a warning) rather than a result set on
            # a cancelled future (pygls logs that as a traceback)
            self.protocol._request_futures.pop(msg_id, None)  # pyright: ignore[reportPrivateUsage]
            with contextlib.suppress(Exception):
                self.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
            raise

    async def answers_ping(self, timeout_s: float) -> bool:
        """Whether the server still answers a request: one for a method no server knows.

        JSON-RPC obliges a reply (``MethodNotFound``), and a server answers it without work, so a
        reply within ``timeout_s`` tells a busy-but-alive server from a hung one.
        """
        if not self.alive:
            return False
        try:
            await self.request(_PING_METHOD, None, timeout_s=timeout_s)
        except (TimeoutError, asyncio.CancelledError, LanguageServerTerminated):
            return False
        except Exception:
            return True  # an error reply is a reply
        return True

    def notify(self, method: str, params: Any) -> None:
        if not self.alive:
            raise self._terminated(f"{self.server_name} is not running")
        self.notifications_sent += 1
        try:
            self.protocol.notify(method, params)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise self._terminated(f"{self.server_name}: cannot write to the server", exc) from exc

    def supports(self, provider: str) -> bool:
        """Whether the server's capabilities advertise ``provider`` (e.g. ``call_hierarchy_provider``)."""
        caps = self.capabilities
        if caps is None:
            return False
        value = getattr(caps, provider, None)
        return value is not None and value is not False

    # -- server -> client -----------------------------------------------------------------------

    def _register_handlers(self) -> None:
        self.feature(lsp.WORKSPACE_CONFIGURATION)(_plain(self._on_configuration))
        self.feature(lsp.WORKSPACE_WORKSPACE_FOLDERS)(_plain(self._on_workspace_folders))
        self.feature(lsp.CLIENT_REGISTER_CAPABILITY)(_plain(self._on_ignored_request))
        self.feature(lsp.CLIENT_UNREGISTER_CAPABILITY)(_plain(self._on_ignored_request))
        self.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CREATE)(_plain(self._on_ignored_request))
        self.feature(lsp.WINDOW_SHOW_MESSAGE_REQUEST)(_plain(self._on_ignored_request))
        self.feature(lsp.WORKSPACE_SEMANTIC_TOKENS_REFRESH)(_plain(self._on_ignored_request))
        self.feature(lsp.WORKSPACE_INLAY_HINT_REFRESH)(_plain(self._on_ignored_request))
        self.feature(lsp.WORKSPACE_CODE_LENS_REFRESH)(_plain(self._on_ignored_request))
        self.feature(lsp.WORKSPACE_DIAGNOSTIC_REFRESH)(_plain(self._on_ignored_request))
        self.feature(lsp.WORKSPACE_APPLY_EDIT)(_plain(self._on_apply_edit))
        self.feature(lsp.WINDOW_SHOW_DOCUMENT)(_plain(self._on_show_document))
        self.feature(lsp.PROGRESS)(_plain(self._on_progress))
        self.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(_plain(self._on_diagnostics))
        self.feature(lsp.WINDOW_LOG_MESSAGE)(_plain(self._on_log))
        self.feature(lsp.WINDOW_SHOW_MESSAGE)(_plain(self._on_log))
        self.feature("$/logTrace")(_plain(self._on_ignored_notification))
        self.feature("telemetry/event")(_plain(self._on_ignored_notification))
        self.feature("language/status")(_plain(self._on_ignored_notification))
        self.feature("$/typescriptVersion")(_plain(self._on_ignored_notification))

    def _on_configuration(self, params: lsp.ConfigurationParams) -> list[Any]:
        return [_section(self.settings, item.section) for item in params.items]

    def _on_workspace_folders(self, _params: Any) -> list[lsp.WorkspaceFolder]:
        return self._workspace_folders

    def _on_ignored_request(self, _params: Any) -> None:
        return None

    def _on_ignored_notification(self, _params: Any) -> None:
        return None

    def _on_apply_edit(self, _params: Any) -> lsp.ApplyWorkspaceEditResult:
        return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason="ided's code-intel tools are read-only")

    def _on_show_document(self, _params: Any) -> lsp.ShowDocumentResult:
        return lsp.ShowDocumentResult(success=False)

    def _on_log(self, params: lsp.LogMessageParams) -> None:
        logger.debug("%s: %s", self.server_name, params.message)
        if self._loaded_pattern is not None and self._loaded_pattern.search(params.message):
            self.workspace_loaded.set()
            self._signal_progress()

    def _on_progress(self, params: lsp.ProgressParams) -> None:
        token = str(params.token)
        if token.startswith(_REQUEST_TOKEN_PREFIX):
            return
        value: Any = params.value
        kind = _get(value, "kind")
        if kind == "begin":
            self.active_progress[token] = ActiveProgress(
                title=str(_get(value, "title") or "working"),
                message=_get(value, "message"),
                percentage=_get(value, "percentage"),
                since=time.monotonic(),
            )
            self.progress_seen += 1
        elif kind == "report" and token in self.active_progress:
            old = self.active_progress[token]
            self.active_progress[token] = ActiveProgress(
                title=old.title,
                message=_get(value, "message") or old.message,
                percentage=_get(value, "percentage") or old.percentage,
                since=old.since,
            )
        elif kind == "end":
            self.active_progress.pop(token, None)
        self._signal_progress()

    def _on_diagnostics(self, params: lsp.PublishDiagnosticsParams) -> None:
        self.diagnostics[params.uri] = PublishedDiagnostics(
            version=params.version, items=tuple(params.diagnostics), received=time.monotonic()
        )
        changed, self.diagnostics_changed = self.diagnostics_changed, asyncio.Event()
        changed.set()

    def _signal_progress(self) -> None:
        """Wake whoever waits on the current event; later waiters take the fresh one (no lost wake-ups)."""
        changed, self.progress_changed = self.progress_changed, asyncio.Event()
        changed.set()

    # -- internals -------------------------------------------------------------------------------

    def _terminated(self, message: str, cause: BaseException | None = None) -> LanguageServerTerminated:
        tail = " | ".join(list(self.stderr_tail)[-5:])
        if self.process is not None and self.process.returncode is not None:
            message += f" (exit code {self.process.returncode})"
        if tail:
            message += f"; last stderr: {tail}"
        return LanguageServerTerminated(message, language=self.server_name, cause=cause)

    async def _drain_stderr(self, process: asyncio.subprocess.Process) -> None:
        assert process.stderr is not None
        while line := await process.stderr.readline():
            text = line.decode("utf-8", "replace").rstrip()
            if text:
                self.stderr_tail.append(text[:300])

    async def _watch_exit(self, process: asyncio.subprocess.Process) -> None:
        code = await process.wait()
        self.exited.set()
        self._signal_progress()
        if not self.closing:
            logger.warning("%s (pid %s) exited with code %s", self.server_name, process.pid, code)
        self.protocol.fail_pending(self._terminated(f"{self.server_name} (pid {process.pid}) exited"))


def _plain(method: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A plain function around a bound method: pygls tags handlers with attributes, methods refuse them."""

    def handler(params: Any) -> Any:
        return method(params)

    return handler


def _section(settings: Mapping[str, Any], section: str | None) -> Any:
    """The value at dotted ``section`` of the settings ({} when absent: servers then use their defaults)."""
    node: Any = settings
    for part in section.split(".") if section else []:
        node = cast("Mapping[str, Any]", node).get(part) if isinstance(node, Mapping) else None
    return node if node is not None else {}


def _get(value: Any, key: str) -> Any:
    if isinstance(value, Mapping):
        return cast("Mapping[str, Any]", value).get(key)
    return getattr(value, key, None)


async def _wait_exit(process: asyncio.subprocess.Process, seconds: float) -> bool:
    try:
        await asyncio.wait_for(process.wait(), seconds)
    except TimeoutError:
        return False
    return True


def _signal_group(process: asyncio.subprocess.Process, *, terminate: bool) -> None:
    import signal

    sig = signal.SIGTERM if terminate else signal.SIGKILL
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(sig)
