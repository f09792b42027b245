"""The ided ACP agent: sessions, modes, slash commands, and a prompt as a pipeline run.

Protocol code only: it turns ACP requests into runtime calls and runtime progress into session
updates (``daemon.acp.run_updates``); the pipeline decides everything else. One prompt runs at a
time per session. ``session/cancel`` asks the run to stop (no further stage starts) and the prompt
answers ``cancelled`` once it stopped, or after ``acp.cancel_grace_seconds``. When the client goes
away, ``shutdown`` cancels the runs still in flight the same way. MCP servers the client passes with a
session are connected in the background (``daemon.acp.client_mcp``) and their tools lent to the
session's runs; they close with the session (``session/close``, a later ``session/load``) or the
process. ``session/close`` cancels the session's prompt as ``session/cancel`` does, waits for it to
answer, then frees what the session holds here (``SessionState.close``); its runs stay.

``session/load`` replays each run (``RunPresenter.replay``) and, for a run with changes, its review
as it stands now (``daemon.acp.review_replay``); a review still open is offered again once the load
is answered. ``_ided/status`` (``daemon.acp.status``) goes out in the background after
``session/new``, ``session/load`` and each run's end; ``session/new`` answers without waiting for the workspace daemon
or the run service (both opened in the background, ``daemon.acp.workspaces``): its ``_ided/status``
goes out once the attach is done, its slash commands once the run service is open, and a prompt
(or ``session/load``) waits for them. The extension requests ``_ided/intel/<capability>`` answer the
client's searches and code-intelligence questions through the session's workspace daemon
(``daemon.acp.intel``: one per registry capability).
In an untrusted workspace whose repository had settings left out or ships programs ided does
not run, a new session's first update is an agent message with the trust notice
(``daemon.core.trust_notice``), naming how to trust.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text
from acp.helpers import update_current_mode
from acp.interfaces import Client
from acp.schema import (
    AcpMcpServer,
    AgentCapabilities,
    AudioContentBlock,
    AvailableCommandsUpdate,
    ClientCapabilities,
    CloseSessionResponse,
    EmbeddedResourceContentBlock,
    HttpMcpServer,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    McpServerStdio,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResourceContentBlock,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    SseMcpServer,
    StopReason,
    TextContentBlock,
    ToolCallStart,
)

from daemon import __version__
from daemon.acp.commands import CommandError, CommandKind, ParsedPrompt, parse_command
from daemon.acp.prompt_content import PromptContent, read_prompt
from daemon.acp.run_updates import RunPresenter, SessionUpdate
from daemon.acp.sessions import MODES, SessionRecord, SessionState
from daemon.acp.sessions import SessionMode as Mode
from daemon.core.run_models import RunRecord, RunStatus
from daemon.errors import DaemonError
from daemon.service.intel.trust_notice import trust_notice
from daemon.workspace_roots import check_folder

if TYPE_CHECKING:
    from daemon.acp.early_session import FolderConfigs
    from daemon.acp.run_driver import RunDriver
    from daemon.acp.workspaces import Workspace, Workspaces
    from daemon.service.pipeline.client_tools import ClientMcpServers, ServerFailure

__all__ = ["PRELOAD_MODULES", "IdedAgent"]

logger = logging.getLogger(__name__)

McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio
PromptBlock = (
    TextContentBlock | ImageContentBlock | AudioContentBlock | ResourceContentBlock | EmbeddedResourceContentBlock
)

_MODES = tuple(SessionMode(id=m.mode.value, name=m.name, description=m.description) for m in MODES)
_RUNS_LISTED = 15


def _modes(current: Mode) -> SessionModeState:
    return SessionModeState(current_mode_id=current.value, available_modes=list(_MODES))


PRELOAD_MODULES = _LAZY = ("daemon.acp.run_driver", "daemon.acp.workspaces")
"""The pipeline side (LangGraph, the index, git) is imported on first use, so ``initialize`` answers
before it has loaded; ``__main__`` preloads these in a thread meanwhile (bench/acp_latency.py)."""


async def _commands_update(workspace: Workspace) -> AvailableCommandsUpdate:
    from daemon.acp.run_driver import commands_update  # first use; see _LAZY

    return await commands_update(workspace)


def _error(exc: DaemonError) -> RequestError:
    """A pipeline error as a JSON-RPC error: the message says what and why; data carries the code."""
    return RequestError(-32603, exc.message, {"code": exc.code.value, "details": str(exc)})


class IdedAgent:
    """Implements the SDK's ``Agent`` protocol (the methods it routes; absent ones answer -32601)."""

    def __init__(self, configs: FolderConfigs, *, workspace: Path | None = None) -> None:
        self._configs = configs
        """Each folder's configuration; its ``--set`` settings also go to a daemon this process starts."""
        self._pinned = workspace
        self._early_session: SessionRecord | None = None
        self._workspaces: Workspaces | None = None
        self._client: Client | None = None
        self._client_caps = ClientCapabilities()
        self._sessions: dict[str, SessionState] = {}
        self._background: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    # -- lifecycle ------------------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        if client_capabilities is not None:
            self._client_caps = client_capabilities
        logger.info("client %s initialized (protocol %d)", client_info.name if client_info else "?", protocol_version)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(), close=SessionCloseCapabilities()
                ),
            ),
            agent_info=Implementation(name="ided", title="ided workflow pipeline", version=__version__),
            auth_methods=[],
        )

    async def shutdown(self) -> None:
        """The client is gone: cancel runs still in flight, wait up to the grace period, close everything."""
        waits: list[asyncio.Task[RunRecord]] = []
        for live in self._sessions.values():
            if live.run_id is None:
                continue
            runs = live.workspace.runs
            record = await runs.get(live.run_id)
            if record.status is not RunStatus.RUNNING:
                continue
            logger.warning("client disconnected: cancelling run %s", live.run_id)
            await runs.cancel(live.run_id)
            grace = live.workspace.config.acp.cancel_grace_seconds
            waits.append(asyncio.create_task(runs.wait(live.run_id, wait_seconds=grace)))
        for wait in waits:
            try:
                await wait
            except TimeoutError:
                logger.warning("a cancelled run did not stop within the grace period; it is interrupted")
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*(live.close_mcp() for live in self._sessions.values()))
        if self._workspaces is not None:
            await self._workspaces.aclose()

    # -- sessions -------------------------------------------------------------------------------

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        workspace = await self._open(cwd)
        record = self._adopt_early_session(workspace) or await asyncio.to_thread(
            workspace.sessions.create, workspace.root
        )
        live = SessionState(record=record, workspace=workspace)
        self._sessions[record.session_id] = live
        live.mcp = await self._lend_mcp(live, mcp_servers or [])
        self._in_background(self._send_commands(live, notice=True), live)  # once the run service is open
        self._status_soon(live)
        return NewSessionResponse(session_id=record.session_id, modes=_modes(record.mode))

    def expect_early_session(self, record: SessionRecord) -> None:
        """The first ``session/new`` was answered before the SDK loaded (``daemon.acp.early_session``), with
        the session ``record``: the replayed request adopts it instead of creating another."""
        self._early_session = record

    def _adopt_early_session(self, workspace: Workspace) -> SessionRecord | None:
        """The session created when the first ``session/new`` was answered early (the request replayed now)."""
        early, self._early_session = self._early_session, None
        if early is not None and Path(early.cwd) != workspace.root:
            logger.warning("the early session is for %s, not %s: a new one is created", early.cwd, workspace.root)
            return None
        return early

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[McpServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        workspace = await self._open(cwd)
        try:
            await workspace.ready()  # the replay reads the runs
        except DaemonError as exc:
            raise _error(exc) from None
        try:
            record = await asyncio.to_thread(workspace.sessions.get, session_id)
        except DaemonError as exc:
            raise RequestError.invalid_params({"sessionId": session_id, "details": str(exc)}) from None
        live = self._sessions.get(session_id)
        if live is not None and live.prompt_running:
            raise RequestError.invalid_request({"details": f"session {session_id} is running a prompt"})
        if live is not None:
            await live.close()
        fresh = SessionState(record=record, workspace=workspace)
        self._sessions[session_id] = fresh
        fresh.mcp = await self._lend_mcp(fresh, mcp_servers or [])
        runs = workspace.runs
        open_reviews: list[tuple[str, ToolCallStart]] = []
        for run_id in record.runs:
            try:
                run = await runs.get(run_id)
            except DaemonError:
                logger.warning("session %s names run %s, which the run store no longer has", session_id, run_id)
                continue
            presenter = RunPresenter.for_record(run, workspace.root)
            await self._send(session_id, presenter.replay(run, await runs.events(run_id)))
            if run.status.finished and run.changes is not None and not run.changes.empty:
                call = await self._replay_review(fresh, run)
                if call is not None:
                    open_reviews.append((run.run_id, call))
        await self._send(session_id, [await _commands_update(workspace)])
        if open_reviews:
            fresh.reoffer = asyncio.create_task(self._reoffer(fresh, open_reviews), name=f"acp reoffer {session_id}")
            self._background.add(fresh.reoffer)
            fresh.reoffer.add_done_callback(self._background.discard)
        self._status_soon(fresh)
        return LoadSessionResponse(modes=_modes(record.mode))

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """``session/close``: the prompt in flight is cancelled as by ``session/cancel`` and answers
        ``cancelled`` (its last updates and its answer go out before this one), then what the session
        holds in this process goes: its tasks, its client MCP servers, its entry here. Its file, runs and
        run branches stay. An unknown or already closed session is closed already: success."""
        live = self._sessions.get(session_id)
        if live is None:
            return CloseSessionResponse()
        await live.close()
        if self._sessions.get(session_id) is live:  # not replaced meanwhile by a session/load
            del self._sessions[session_id]
        logger.info("session %s closed", session_id)
        return CloseSessionResponse()

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        workspaces = [await self._open(cwd)] if cwd else self._workspaces.opened() if self._workspaces else []
        infos: list[SessionInfo] = []
        for workspace in workspaces:
            records = await asyncio.to_thread(workspace.sessions.list)
            infos.extend(
                SessionInfo(session_id=r.session_id, cwd=r.cwd, title=r.title, updated_at=r.updated_at) for r in records
            )
        return ListSessionsResponse(sessions=infos)

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse | None:
        live = self._live(session_id)
        try:
            mode = Mode(mode_id)
        except ValueError:
            known = ", ".join(m.value for m in Mode)
            raise RequestError.invalid_params({"modeId": mode_id, "details": f"unknown mode; known: {known}"}) from None
        live.record = await asyncio.to_thread(live.workspace.sessions.update, session_id, mode=mode)
        self._after_reply(live, update_current_mode(mode.value))
        return SetSessionModeResponse()

    # -- prompts --------------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[PromptBlock], **kwargs: Any) -> PromptResponse:
        live = self._live(session_id)
        if live.prompt_running:
            raise RequestError.invalid_request(
                {"details": f"session {session_id} is already running a prompt; cancel it or wait"}
            )
        live.begin_turn()
        live.run_id = None
        try:
            content = read_prompt(prompt, live.workspace.root)
            parsed = parse_command(content.text)
            return PromptResponse(stop_reason=await self._dispatch(live, parsed, content))
        except CommandError as exc:
            await self._send(session_id, [update_agent_message_text(f"{exc}\n")])
            return PromptResponse(stop_reason="end_turn")
        except DaemonError as exc:
            raise _error(exc) from None
        finally:
            live.end_turn()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        live = self._sessions.get(session_id)
        if live is not None:
            await live.cancel_turn()

    async def _dispatch(self, state: SessionState, parsed: ParsedPrompt, content: PromptContent) -> StopReason:
        await state.workspace.ready()  # a prompt sent while the workspace opens waits (the attach, then the runs)
        driver = self._driver(state)
        if state.feedback_for is not None and parsed.kind is CommandKind.RUN and parsed.request:
            run_id, state.feedback_for = state.feedback_for, None
            return await driver.follow_up(run_id, parsed.request)
        state.feedback_for = None
        if parsed.kind is CommandKind.RUNS:
            await self._list_runs(state)
            return "end_turn"
        if parsed.kind is CommandKind.ROLLBACK:
            assert parsed.argument is not None
            await driver.rollback(parsed.argument)
            return "end_turn"
        if not parsed.request:
            await self._send(state.record.session_id, [update_agent_message_text("Ask for something to do.\n")])
            return "end_turn"
        return await driver.run(parsed, content)

    async def _list_runs(self, live: SessionState) -> None:
        records = await live.workspace.runs.list_runs(_RUNS_LISTED)
        if not records:
            text = "No runs yet in this workspace.\n"
        else:
            lines = [f"- {r.run_id}  {r.status.value:<11} {r.workflow or '-'}: {r.request[:70]}" for r in records]
            text = "Recent runs, newest first:\n" + "\n".join(lines) + "\n"
        await self._send(live.record.session_id, [update_agent_message_text(text)])

    # -- search and code intelligence (extension methods) ----------------------------------------

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """``_ided/intel/<capability>``: a registry capability asked of the session's workspace daemon
        (``daemon.acp.intel``); other extension methods answer -32601."""
        from daemon.acp.intel import parse_call, run_call

        capability, session_id, arguments = parse_call(method, params)
        live = self._live(session_id)
        try:
            return await run_call(capability, arguments, await live.workspace.intel())
        except DaemonError as exc:
            raise _error(exc) from None

    # -- a loaded session's reviews ----------------------------------------------------------------

    async def _replay_review(self, live: SessionState, run: RunRecord) -> ToolCallStart | None:
        """Send ``run``'s review as it stands; the review call when it is still open."""
        from daemon.acp.review import review_call_id
        from daemon.acp.review_replay import replay_review

        live.review_rounds += 1
        call_id = review_call_id(run.run_id, live.review_rounds)
        replayed = await replay_review(live.workspace.runs, run, live.workspace.root, call_id)
        await self._send(live.record.session_id, replayed.updates)
        return replayed.open_call

    async def _reoffer(self, live: SessionState, reviews: list[tuple[str, ToolCallStart]]) -> None:
        """Offer the loaded session's open reviews again, one after the other (each waits for its answer)."""
        driver = self._driver(live)
        for run_id, call in reviews:
            try:
                await driver.reoffer(run_id, call)
            except DaemonError:
                logger.exception("the open review of run %s could not be offered again", run_id)

    # -- helpers --------------------------------------------------------------------------------

    def _driver(self, state: SessionState) -> RunDriver:
        from daemon.acp.run_driver import RunDriver  # first use; see _LAZY

        return RunDriver(
            state=state,
            client=self._need_client(),
            send=self._send,
            reads_files=self._reads_files,
            run_finished=lambda: self._status_soon(state),
        )

    async def _send_commands(self, live: SessionState, *, notice: bool = False) -> None:
        """The slash commands, once the run service is open (one that did not open: the prompt says why);
        ``notice``: the workspace's trust notice first, when it has one (the session's first update)."""
        if notice:
            said = await asyncio.to_thread(trust_notice, live.workspace.config)
            if said is not None:
                await self._send(live.record.session_id, [update_agent_message_text(said.message + "\n")])
        try:
            update = await _commands_update(live.workspace)
        except DaemonError:
            return
        await self._send(live.record.session_id, [update])

    def _status_soon(self, live: SessionState) -> None:
        """``_ided/status`` for ``live``, in the background: a slow or absent daemon never holds a session."""
        self._in_background(self._send_status(live.record.session_id, live.workspace), live)

    async def _send_status(self, session_id: str, workspace: Workspace) -> None:
        from daemon.acp.status import STATUS_METHOD, STATUS_TIMEOUT_S, read_status

        daemon = await workspace.daemon()  # the attach runs in the background: this reports it once done
        status = await read_status(daemon.client, daemon.note, workspace=str(workspace.root), session_id=session_id)
        client = self._client
        if client is None or session_id not in self._sessions:
            return
        try:
            await asyncio.wait_for(
                client.ext_notification(STATUS_METHOD, status.model_dump(mode="json")), STATUS_TIMEOUT_S
            )
        except (ConnectionError, TimeoutError) as exc:
            logger.info("session %s: _%s not delivered: %s", session_id, STATUS_METHOD, exc)

    async def _open(self, cwd: str) -> Workspace:
        try:
            # a folder that cannot be a workspace is refused at once, before the pipeline modules load
            await asyncio.to_thread(check_folder, self._pinned or cwd)
            if self._workspaces is None:
                from daemon.acp.workspaces import Workspaces  # first use; see _LAZY

                self._workspaces = Workspaces(self._configs, pinned=self._pinned)
            return await self._workspaces.open(cwd)
        except DaemonError as exc:
            raise RequestError.invalid_params({"cwd": cwd, "code": exc.code.value, "details": str(exc)}) from None

    def _need_client(self) -> Client:
        if self._client is None:
            raise RequestError.internal_error({"details": "no client connection"})
        return self._client

    @property
    def _reads_files(self) -> bool:
        fs = self._client_caps.fs
        return bool(fs is not None and fs.read_text_file)

    def _live(self, session_id: str) -> SessionState:
        live = self._sessions.get(session_id)
        if live is None or live.closing:
            raise RequestError.invalid_params(
                {"sessionId": session_id, "details": "unknown session: create it (session/new) or load it"}
            )
        return live

    async def _send(self, session_id: str, updates: list[SessionUpdate]) -> None:
        client = self._client
        if client is None or session_id not in self._sessions:  # closed: nothing more goes out for it
            return
        for update in updates:
            try:
                await client.session_update(session_id=session_id, update=update)
            except ConnectionError:
                logger.info("session %s: the client is gone; updates dropped", session_id)
                return

    def _after_reply(self, live: SessionState, update: SessionUpdate) -> None:
        """Send ``update`` once the current request's reply is out (the client must know the session)."""
        self._in_background(self._send(live.record.session_id, [update]), live)

    def _in_background(self, work: Coroutine[Any, Any, None], live: SessionState) -> None:
        """``work`` for ``live`` as a task: cancelled when the session closes or the process ends."""
        task = asyncio.create_task(work)
        for tasks in (self._background, live.tasks):
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    # -- the client's MCP servers ---------------------------------------------------------------

    async def _lend_mcp(self, live: SessionState, servers: list[McpServer]) -> ClientMcpServers | None:
        """Connect the session's MCP servers in the background; failures reach the client as a message."""
        if not servers:
            return None
        await asyncio.to_thread(importlib.import_module, "daemon.acp.client_mcp")  # the MCP SDK: ~1.3 s
        from daemon.acp.client_mcp import lend_servers

        lent, refused = lend_servers(servers, live.workspace.root)
        self._in_background(self._report_mcp(live.record.session_id, lent, refused), live)
        return lent

    async def _report_mcp(self, session_id: str, lent: ClientMcpServers, refused: tuple[ServerFailure, ...]) -> None:
        from daemon.acp.client_mcp import failure_text

        text = failure_text(await lent.ready(), refused)
        if text is not None:
            await self._send(session_id, [update_agent_message_text(text)])
