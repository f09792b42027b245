"""``find_definition`` by name while the workspace is still opening: answered by this process.

A cold ``ided mcp`` opens its workspace in the background (the daemon is started and attached, or
the index and language servers open in process): seconds before it can answer. Meanwhile a
definition *by name* is answered here from a Tree-sitter scan of the workspace
(``daemon.service.intel.scanned_definitions``: the same resolution rules and the same answer the index
gives, ``answered_by="index"``, with a note saying how), raced against the opening: the scan's
answer is returned if it comes first; if the workspace opens first, the scan is stopped (between
files) and the call goes to the workspace. A name the scan does not find, a position (``file``
given) and every other tool go to the workspace as before, so errors keep their wording.

The scan's modules (Tree-sitter, the workspace scanner) load on the first such call, in a thread,
never before ``initialize`` is answered.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from daemon.config import Config
from daemon.core.intel_models import DefinitionResult
from daemon.core.ports import Workspace
from daemon.service.intel.params import DefinitionParams
from daemon.service.workspace.opening import OpeningWorkspace

if TYPE_CHECKING:
    from daemon.service.intel.scanned_definitions import ScannedDefinitions

__all__ = ["EarlyDefinitions"]

logger = logging.getLogger(__name__)


class EarlyDefinitions:
    """See the module docstring. One per server."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self._scanned: ScannedDefinitions | None = None
        self._build = threading.Lock()

    def _scanner(self) -> ScannedDefinitions:
        with self._build:
            if self._scanned is None:
                from daemon.service.intel.scanned_definitions import ScannedDefinitions

                self._scanned = ScannedDefinitions(self._config)
            return self._scanned

    def _scan(self, params: DefinitionParams, stop: threading.Event) -> DefinitionResult | None:
        return self._scanner().answer(params, stop=stop.is_set)

    async def answer(self, workspace: Workspace, params: BaseModel) -> DefinitionResult | None:
        """The scan's answer when it comes before the workspace opens; None: ask the workspace."""
        if not isinstance(workspace, OpeningWorkspace) or workspace.ready:
            return None
        if not isinstance(params, DefinitionParams) or params.file or not (params.symbol or "").strip():
            return None
        stop = threading.Event()
        scan = asyncio.create_task(asyncio.to_thread(self._scan, params, stop))
        opened = asyncio.create_task(workspace.workspace())
        opened.add_done_callback(_retrieved)
        try:
            await asyncio.wait({scan, opened}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            opened.cancel()
            if not scan.done():
                stop.set()  # the workspace opened first (or the call was cancelled): the scan gives up
                scan.add_done_callback(_retrieved)
        if not scan.done():
            return None
        try:
            answer = scan.result()
        except Exception:  # the scan is a shortcut: the workspace answers instead
            logger.exception("scanning for the definition of %r failed", params.symbol)
            return None
        if answer is not None:
            logger.info("definition of %r answered from a scan while the workspace opens", params.symbol)
        return answer


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Retrieve a background task's outcome so that a failure is not reported as never retrieved."""
    if not task.cancelled():
        task.exception()
