"""The daemon-client transport of the ``Workspace`` port: one connection to the workspace daemon.

Fronts that attach to the daemon (``ided mcp --attach``, runs started with a daemon running) use
this: one hot index and one set of language servers for every editor and agent on the workspace.
The connection is opened once and kept; a broken one is re-attached once (``start``: spawning a
new daemon if the old one died) and the call retried. The daemon's coded errors come back as
``DaemonError`` with the same code.
"""

from __future__ import annotations

import logging
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from daemon.config import Config
from daemon.core.intel_models import IntelStatus
from daemon.core.models import SearchFilters, SearchMode, SearchResult
from daemon.errors import DaemonError, ErrorCode
from daemon.service.api import Methods, SearchParams
from daemon.service.daemon_client import ClientKind, DaemonClient
from daemon.service.rpc import RpcError

__all__ = ["SEARCH_WAIT_S", "DaemonWorkspace"]

logger = logging.getLogger(__name__)

R = TypeVar("R", bound=BaseModel)

SEARCH_WAIT_S = 60.0
"""Upper bound for one search through the daemon."""


class DaemonWorkspace:
    """A ``Workspace`` served by the daemon (see the module docstring)."""

    def __init__(self, config: Config, client: DaemonClient, *, kind: ClientKind, start: bool) -> None:
        self._config = config
        self._client = client
        self._kind: ClientKind = kind
        self._start = start

    @classmethod
    async def attach(cls, config: Config, *, client: ClientKind, start: bool) -> DaemonWorkspace:
        """Attach to the workspace's daemon (``start``: spawn one when none runs; else ``DaemonUnavailable``)."""
        return cls(config, await DaemonClient.attach(config, client=client, start=start), kind=client, start=start)

    @property
    def serves_intel(self) -> bool:
        return True

    async def aclose(self) -> None:
        await self._client.close()

    async def _call(self, method: str, params: BaseModel | None, result: type[R], *, wait_s: float = 120) -> R:
        for attempt in (1, 2):
            try:
                return await self._client.call_model(method, params, result, wait_s=wait_s)
            except ConnectionError:
                if attempt == 2:
                    raise DaemonError(f"lost the connection to the daemon of {self._config.workspace}") from None
                logger.warning("daemon connection lost: re-attaching")
                await self._client.close()
                self._client = await DaemonClient.attach(self._config, client=self._kind, start=self._start)
            except RpcError as exc:
                raw: object = exc.data
                data = cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}
                code = data.get("code")
                known = {c.value for c in ErrorCode}
                err_code = ErrorCode(code) if isinstance(code, str) and code in known else None
                raise DaemonError(exc.message.split(" [see ", 1)[0], code=err_code) from None
        raise AssertionError("unreachable")

    async def search(
        self, query: str, *, k: int | None, filters: SearchFilters | None, mode: SearchMode | None = None
    ) -> SearchResult:
        params = SearchParams(
            query=query,
            k=k,
            kind=filters.kind if filters is not None else None,
            language=filters.language if filters is not None else None,
            path_glob=filters.path_glob if filters is not None else None,
            mode=mode or SearchMode.HYBRID,
        )
        return await self._call(Methods.INDEX_SEARCH, params, SearchResult, wait_s=SEARCH_WAIT_S)

    async def intel(self, method: str, params: BaseModel, result: type[R]) -> R:
        return await self._call(method, params, result)

    async def status(self) -> IntelStatus:
        return await self._call(Methods.INTEL_STATUS, None, IntelStatus)
