"""One session's prompts as runs: start (or follow up) a run, stream it, review its changes.

``SessionState`` is what a session holds in this process; ``RunDriver`` drives one prompt of it
through the workspace's run service (``daemon.service.runs.service``): it launches the run, sends every
event of the service's ``RunFollow`` through ``RunPresenter``, honours ``session/cancel`` (the run
stops before its next stage; the prompt answers ``cancelled`` once it stopped or after
``acp.cancel_grace_seconds``) and, when the run ended with changes, presents them for review
(``daemon.acp.review``). Feedback chosen there is answered by a follow-up attempt: at once when the
client sent the text with its answer, else with the session's next prompt. Before a code-mode run
in an untrusted workspace whose repository defines commands, the client is asked whether they may
run (``daemon.acp.trust_request``); the answer holds for the run and its follow-ups in this
session, and "trust this workspace" adds it to the user's trusted list. ``reoffer`` asks again for
a review a loaded session found open (outside a prompt turn); ``run_finished`` is called once each
run has ended (the agent sends ``_ided/status`` then).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from acp import RequestError, update_agent_message_text
from acp.helpers import update_available_commands
from acp.interfaces import Client
from acp.schema import AvailableCommandsUpdate, StopReason, ToolCallStart

from daemon.acp.commands import CommandKind, ParsedPrompt, available_commands
from daemon.acp.permission import pending_call
from daemon.acp.prompt_content import PromptContent
from daemon.acp.review import (
    ReviewAnswer,
    apply_answer,
    permission_options,
    review_call,
    review_call_id,
    review_finished,
    review_outcome,
)
from daemon.acp.run_updates import RunPresenter, SessionUpdate
from daemon.acp.sessions import SessionMode, SessionState
from daemon.acp.trust_request import (
    TrustAnswer,
    trust_answer,
    trust_call,
    trust_finished,
    trust_options,
)
from daemon.acp.workspaces import Workspace
from daemon.core.review_models import ConflictReport
from daemon.core.run_models import RunRecord, RunStatus
from daemon.errors import ConflictError, DaemonError, ErrorCode
from daemon.service.runs.follow import RunFollow
from daemon.service.runs.loans import RunLoan
from daemon.service.runs.params import RunStart
from daemon.trust import TrustStore

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

__all__ = ["ClientFileReader", "RunDriver", "commands_update"]

logger = logging.getLogger(__name__)

Send = Callable[[str, list[SessionUpdate]], Awaitable[None]]

READ_TIMEOUT_S = 10.0
"""Upper bound for one fs/read_text_file round trip (the agent then reads the disk)."""

PERMISSION_TIMEOUT_S = 24 * 3600.0
"""A person reviews the diff; the request waits for them (cancel ends it earlier)."""


async def commands_update(workspace: Workspace) -> AvailableCommandsUpdate:
    """The slash commands: ``/rollback`` only where runs can have been accepted (a git repository)."""
    runs = await workspace.ready()
    return update_available_commands(available_commands(rollback=await runs.is_repository()))


class ClientFileReader:
    """The agents' ``FileReader`` through the client's ``fs/read_text_file``: open files as the editor has
    them, unsaved edits included. Files the client cannot read fall back to the disk (``None``)."""

    def __init__(self, client: Client, state: SessionState) -> None:
        self._client = client
        self._state = state
        self._session_id = state.record.session_id

    async def read_text(self, path: Path) -> str | None:
        if self._state.closed:  # a run still in a stage after session/close: nothing more goes to the client
            return None
        try:
            reply = await asyncio.wait_for(
                self._client.read_text_file(session_id=self._session_id, path=str(path)), READ_TIMEOUT_S
            )
        except (RequestError, ConnectionError, TimeoutError) as exc:
            logger.debug("fs/read_text_file %s: %s; reading the disk", path, exc)
            return None
        return reply.content


@dataclass
class RunDriver:
    state: SessionState
    client: Client
    send: Send
    reads_files: bool
    run_finished: Callable[[], None] | None = None
    """Called once a followed run has ended (before its review)."""

    @property
    def _sid(self) -> str:
        return self.state.record.session_id

    async def _say(self, text: str) -> None:
        await self.send(self._sid, [update_agent_message_text(text if text.endswith("\n") else text + "\n")])

    def _reader(self) -> ClientFileReader | None:
        return ClientFileReader(self.client, self.state) if self.reads_files else None

    async def _client_tools(self, *, read_only: bool) -> tuple[BaseTool, ...]:
        """The tools of the MCP servers the client passed for this session, once they connected (each
        server is bounded by its connect timeout); read-only runs get the read-only ones only."""
        lent = self.state.mcp
        if lent is None:
            return ()
        await lent.ready()
        return lent.tools(read_only=read_only)

    # -- rollback -------------------------------------------------------------------------------

    async def rollback(self, run_id: str) -> None:
        try:
            result = await self.state.workspace.runs.rollback(run_id)
        except ConflictError as exc:
            report = exc.report
            text = f"Not rolled back: {report.describe() if isinstance(report, ConflictReport) else exc.message}"
        else:
            commits = ", ".join(c[:10] for c in result.commits)
            text = f"Rolled back run {run_id}: {len(result.commits)} revert commit(s) on {result.branch} ({commits})."
        await self._say(text)

    # -- a new run ------------------------------------------------------------------------------

    async def run(self, parsed: ParsedPrompt, content: PromptContent) -> StopReason:
        runs = self.state.workspace.runs
        dry_run = parsed.kind is CommandKind.DRY_RUN
        mode = self.state.record.mode
        trusted: bool | None = None
        if mode is SessionMode.CODE and not dry_run:
            asked = await self._ask_trust()
            if asked == "cancelled":
                return "cancelled"
            trusted = asked
        tools = () if dry_run else await self._client_tools(read_only=mode is SessionMode.ASK)
        try:
            run = await runs.start(
                RunStart(
                    request=parsed.request,
                    workflow=parsed.argument if parsed.kind is CommandKind.WORKFLOW else None,
                    mode=mode.value,
                    attachments=tuple(content.attachments),
                ),
                dry_run=dry_run,
                trusted=trusted,
                loan=RunLoan(file_reader=self._reader(), extra_tools=tools),
            )
        except DaemonError as exc:
            if exc.code is not ErrorCode.MODEL_UNAVAILABLE:
                raise
            from daemon.core.run_models import HOW_TO_CONFIGURE

            await self._say(f"{exc.message}\n{HOW_TO_CONFIGURE}")
            return "end_turn"
        async with run:
            record = run.record
            await self._attach_run(record, parsed.request)
            presenter = RunPresenter.for_record(record, self.state.workspace.root)
            if dry_run:
                for event in await runs.events(record.run_id):  # the plan and the selection's thoughts
                    await self.send(self._sid, presenter.on_event(event))
                assert record.plan is not None
                notes = "".join(f"\n- {note}" for note in record.plan.notes)
                from daemon.service.pipeline.workflow_catalog import plan_mermaid  # LangGraph: a dry run's picture only

                await self._say(
                    f"Dry run: run {record.run_id} planned with workflow {record.workflow}; nothing executed.\n\n"
                    f"```mermaid\n{plan_mermaid(record.plan)}\n```"
                    + (f"\n\nWritten in the specification's spelling:{notes}" if notes else "")
                )
                return "end_turn"
            if self.state.cancelled.is_set():
                await runs.cancel(record.run_id)
            return await self._follow_to_end(run, presenter)

    async def _attach_run(self, record: RunRecord, title: str) -> None:
        self.state.run_id = record.run_id
        sessions = self.state.workspace.sessions
        self.state.record = await asyncio.to_thread(sessions.update, self._sid, add_run=record.run_id, title=title[:80])

    # -- feedback on a reviewed run -------------------------------------------------------------

    async def follow_up(self, run_id: str, feedback: str) -> StopReason:
        tools = await self._client_tools(read_only=False)  # a follow-up edits, as the run it answers
        loan = RunLoan(file_reader=self._reader(), extra_tools=tools)
        runs = self.state.workspace.runs
        async with await runs.feedback(run_id, feedback, trusted=self.state.trusted, loan=loan) as run:
            self.state.run_id = run_id
            presenter = RunPresenter.for_record(run.record, self.state.workspace.root)
            return await self._follow_to_end(run, presenter)

    # -- trust ----------------------------------------------------------------------------------

    async def _ask_trust(self) -> bool | Literal["cancelled"] | None:
        """Whether the repository's commands may run in this prompt's run: None when nothing needs asking
        (no such commands, or the workspace is trusted: the trust store decides), ``cancelled`` for a prompt
        cancelled while asked."""
        trust = await self.state.workspace.runs.trust()
        if not trust.needs_trust:
            return None
        if self.state.trusted is not None:
            return self.state.trusted
        root = self.state.workspace.root
        self.state.trust_rounds += 1
        call = trust_call(trust.repository_commands, root, f"trust-{self.state.trust_rounds}")
        await self.send(self._sid, [call])
        permission = asyncio.create_task(
            self.client.request_permission(session_id=self._sid, tool_call=pending_call(call), options=trust_options())
        )
        cancelled = asyncio.create_task(self.state.cancelled.wait())
        try:
            await asyncio.wait(
                {permission, cancelled}, timeout=PERMISSION_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            cancelled.cancel()
            answered = permission.done()
            if not answered:
                permission.cancel()
        answer: TrustAnswer = "refused"
        if answered and not permission.cancelled():
            if (failure := permission.exception()) is None:
                answer = trust_answer(permission.result())
            else:
                logger.warning("the trust request failed: %s", failure)
        if self.state.cancelled.is_set():
            await self.send(self._sid, [trust_finished(call.tool_call_id, "refused", "Cancelled: nothing ran.")])
            return "cancelled"
        note = await self._settle_trust(answer, root)
        await self.send(self._sid, [trust_finished(call.tool_call_id, answer, note)])
        await self._say(note)
        self.state.trusted = answer != "refused"
        return self.state.trusted

    async def _settle_trust(self, answer: TrustAnswer, root: Path) -> str:
        if answer == "refused":
            return (
                "The repository's commands will not run; the run goes on with your own commands. "
                f"`{(await self.state.workspace.runs.trust()).how_to_trust}` trusts the workspace."
            )
        if answer == "once":
            return "The repository's commands may run in this session's runs."
        try:
            await asyncio.to_thread(TrustStore.default().add, root)
        except DaemonError as exc:
            return f"The repository's commands may run in this session's runs; not remembered: {exc.message}"
        return f"Trusted {root}: its repository's commands run from now on (`ided trust --remove {root}` undoes it)."

    # -- following a run ------------------------------------------------------------------------

    async def _follow_to_end(self, run: RunFollow, presenter: RunPresenter) -> StopReason:
        run_id = run.run_id
        follow = asyncio.create_task(self._follow(run, presenter), name=f"acp follow {run_id}")
        cancelled = asyncio.create_task(self.state.cancelled.wait())
        try:
            await asyncio.wait({follow, cancelled}, return_when=asyncio.FIRST_COMPLETED)
            if not follow.done():
                grace = self.state.workspace.config.acp.cancel_grace_seconds
                try:
                    await asyncio.wait_for(asyncio.shield(follow), grace)
                except TimeoutError:
                    logger.warning("run %s is still in a stage %.0fs after cancel", run_id, grace)
        finally:
            for task in (follow, cancelled):
                task.cancel()
        final = await self.state.workspace.runs.get(run_id)
        await self.send(self._sid, presenter.closing(final))
        if self.run_finished is not None:
            self.run_finished()
        if self.state.cancelled.is_set() or final.status is RunStatus.CANCELLED:
            return "cancelled"
        if final.status.finished and final.changes is not None and not final.changes.empty:
            return await self._review(final)
        return "end_turn"

    async def _follow(self, run: RunFollow, presenter: RunPresenter) -> None:
        async for event in run:
            await self.send(self._sid, presenter.on_event(event))

    # -- review ---------------------------------------------------------------------------------

    async def _review(self, record: RunRecord) -> StopReason:
        workspace = self.state.workspace
        run_id = record.run_id
        changes = await workspace.runs.diff(run_id)
        self.state.review_rounds += 1
        call = review_call(changes, workspace.root, review_call_id(run_id, self.state.review_rounds))
        await self.send(self._sid, [call])
        answer = await self._ask(run_id, call, cancellable=True)
        if answer is None:
            return "cancelled"
        await self._settle(run_id, call, answer)
        if answer.choice != "feedback":
            return "end_turn"
        if answer.feedback is not None:
            return await self.follow_up(run_id, answer.feedback)
        await self._feedback_next(run_id)
        return "end_turn"

    async def reoffer(self, run_id: str, call: ToolCallStart) -> None:
        """Ask again for the open review of a loaded session (``call`` was replayed ``pending``).

        Outside a prompt turn: ``session/cancel`` does not end it (the client cancels the request
        itself); feedback text sent with the answer starts the follow-up at once unless a prompt is
        running, else the next prompt is the feedback.
        """
        answer = await self._ask(run_id, call, cancellable=False)
        if answer is None:
            return
        await self._settle(run_id, call, answer)
        if answer.choice != "feedback":
            return
        if answer.feedback is None or self.state.prompt_running or self.state.closing:
            await self._feedback_next(run_id)
            return
        self.state.begin_turn()
        try:
            await self.follow_up(run_id, answer.feedback)
        finally:
            self.state.end_turn()

    async def _ask(self, run_id: str, call: ToolCallStart, *, cancellable: bool) -> ReviewAnswer | None:
        """The client's answer to the permission request for ``call``; ``None`` when none came (cancel, timeout,
        a failed request): the review is left open and the client told so."""
        permission = asyncio.create_task(
            self.client.request_permission(
                session_id=self._sid, tool_call=pending_call(call), options=permission_options()
            )
        )
        waits: set[asyncio.Future[Any]] = {permission}
        cancelled = asyncio.create_task(self.state.cancelled.wait()) if cancellable else None
        if cancelled is not None:
            waits.add(cancelled)
        try:
            await asyncio.wait(waits, timeout=PERMISSION_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if cancelled is not None:
                cancelled.cancel()
            answered = permission.done()
            if not answered:  # session/cancel, the timeout, or this task cancelled (shutdown, a new load)
                permission.cancel()
        if answered and not permission.cancelled():
            if (failure := permission.exception()) is None:
                return review_outcome(permission.result(), self.state.workspace.root)
            logger.warning("the permission request for run %s failed: %s", run_id, failure)
        await self.send(self._sid, [review_finished(call.tool_call_id, "pending", "Review left open.")])
        await self._say(f"Review of run {run_id} left open: ided runs accept {run_id} (or reject) decides it later.")
        return None

    async def _settle(self, run_id: str, call: ToolCallStart, answer: ReviewAnswer) -> None:
        try:
            verdict = await apply_answer(self.state.workspace.runs, run_id, answer)
        except DaemonError as exc:  # e.g. decided meanwhile by another front (`ided runs accept`)
            text = f"Not applied: {exc.message}"
            await self.send(self._sid, [review_finished(call.tool_call_id, "failed", text, None)])
            await self._say(text)
            return
        await self.send(self._sid, [review_finished(call.tool_call_id, verdict.status, verdict.text, verdict.state)])
        await self._say(verdict.text)

    async def _feedback_next(self, run_id: str) -> None:
        self.state.feedback_for = run_id
        await self._say("Type your feedback as the next prompt; it goes to the run's last editing stage.")
